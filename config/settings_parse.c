/* settings_parse.c - diagnostics (file:line: key: message), and reading and
 * writing one key's value: parsing text, storing numbers from files with
 * type and range checks, formatting values, "allowed:" texts and
 * "did you mean" suggestions; pc_settings_set ("section.key" = text). */
#include "settings_keys.h"

#include "edit_distance.h"
#include "errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --- diagnostics ------------------------------------------------------ */

void pc_diag_init(pc_diag *d) { memset(d, 0, sizeof *d); }

void pc_diag_add(pc_diag *d, int severity, const char *file, int line, const char *key,
                 const char *fmt, ...)
{
    if (!d)
        return;
    if (severity == PC_DIAG_ERROR)
        d->errors++;
    else
        d->warnings++;
    if (d->count >= PC_DIAG_MAX) {
        d->lost++;
        return;
    }
    pc_diag_item *it = &d->item[d->count++];
    it->severity = severity;
    const int cmdline = line == PC_LINE_CMDLINE;
    /* an entry the command line made: it is the command line's, whatever
     * file was read (it said "file.conf: error: ..." with no line) */
    snprintf(it->file, sizeof it->file, "%s", cmdline ? "command line" : file ? file : "");
    it->line = cmdline ? 0 : line;
    snprintf(it->key, sizeof it->key, "%s", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->msg, sizeof it->msg, fmt, ap);
    va_end(ap);
    if (cmdline && file && file[0]) {
        size_t n = strlen(it->msg);
        char entry[sizeof it->key];
        size_t e = strcspn(it->key, "]");
        if (it->key[e])
            snprintf(entry, sizeof entry, "%.*s", (int)e + 1, it->key);
        else
            snprintf(entry, sizeof entry, "the entry");
        snprintf(it->msg + n, sizeof it->msg - n, " (%s comes from -s on the command line alone: %s has no such "
                 "entry, and every reload applies -s again)", entry, file);
    }
    /* a value quoted from the file or the command line may hold control
     * bytes: escaped, they print as text wherever the message goes */
    pc_escape_ctl_inplace(it->file, sizeof it->file);
    pc_escape_ctl_inplace(it->key, sizeof it->key);
    pc_escape_ctl_inplace(it->msg, sizeof it->msg);
}

void pc_diag_format(const pc_diag_item *it, char *buf, size_t len)
{
    char where[PC_PATH_LEN + 32] = "";
    if (it->file[0] && it->line > 0)
        snprintf(where, sizeof where, "%s:%d: ", it->file, it->line);
    else if (it->file[0])
        snprintf(where, sizeof where, "%s: ", it->file);
    snprintf(buf, len, "%s%s%s%s%s", where, it->severity == PC_DIAG_WARNING ? "warning: " : "error: ",
             it->key, it->key[0] ? ": " : "", it->msg);
}

void pc_diag_print(const pc_diag *d, FILE *f)
{
    char line[PC_PATH_LEN + 1024];
    for (int i = 0; i < d->count; i++) {
        pc_diag_format(&d->item[i], line, sizeof line);
        fprintf(f, "%s\n", line);
    }
    if (d->lost)
        fprintf(f, "(%d more not shown)\n", d->lost);
}

/* --- one key's value -------------------------------------------------- */

const char *pc_key_type_name_(const pc_key *k)
{
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_INT64: return "an integer";
    case PC_KT_DOUBLE: return "a number";
    case PC_KT_BOOL: return "a boolean (true or false)";
    case PC_KT_STRING: return (k->flags & PC_KF_NUMBERS) ? "a string or an array of numbers" : "a string";
    case PC_KT_ENUM: return "a name (string)";
    case PC_KT_LIST: return "an array of strings";
    case PC_KT_GROUPS:
        return k->list->strings ? "a list ( \"URL\", { url = \"...\"; ... } )" : "a list of groups ( { ... }, ... )";
    }
    return "?";
}

static void fmt_num(char *buf, size_t len, double v)
{
    if (v == floor(v) && fabs(v) < 1e19)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%g", v);
}

void pc_key_allowed_(const pc_key *k, char *buf, size_t len)
{
    char a[32], b[32];
    size_t off = 0;
    buf[0] = '\0';
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_INT64:
    case PC_KT_DOUBLE:
        fmt_num(a, sizeof a, k->min);
        if (k->max >= PC_KEY_NO_MAX)
            snprintf(buf, len, "%s or more", a);
        else {
            fmt_num(b, sizeof b, k->max);
            snprintf(buf, len, "%s..%s", a, b);
        }
        off = strlen(buf);
        if (k->unit && off < len)
            off += (size_t)snprintf(buf + off, len - off, " %s", k->unit);
        if ((k->flags & PC_KF_ZERO_AUTO) && off < len)
            off += (size_t)snprintf(buf + off, len - off, ", or 0 (auto/off)");
        if ((k->flags & PC_KF_NEG_AUTO) && off < len)
            off += (size_t)snprintf(buf + off, len - off, ", or negative (leave unchanged)");
        if ((k->flags & PC_KF_EVEN) && off < len)
            off += (size_t)snprintf(buf + off, len - off, ", even");
        if ((k->flags & PC_KF_SI) && off < len)
            snprintf(buf + off, len - off, "; units k, M, G, T (x1000), Ki, Mi, Gi, Ti (x1024)");
        break;
    case PC_KT_BOOL: snprintf(buf, len, "true or false"); break;
    case PC_KT_STRING:
        snprintf(buf, len, "a string of at most %zu characters", k->size - 1);
        break;
    case PC_KT_LIST:
        snprintf(buf, len, "at most %d names of at most %d characters", PC_MAX_FALLBACKS,
                 PC_NAME_LEN - 1);
        break;
    case PC_KT_GROUPS: snprintf(buf, len, "at most %d %s", k->list->max, k->list->plural); break;
    case PC_KT_ENUM: {
        int n = k->en->count();
        for (int i = 0; i < n && off < len; i++)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", k->en->name(i));
        break;
    }
    }
}
static int check_num(const pc_key *k, double v, const char *shown, char *err, size_t len)
{
    char allowed[160];
    if (!isfinite(v)) {
        snprintf(err, len, "%s is not a finite number", shown);
        return -1;
    }
    bool special = ((k->flags & PC_KF_ZERO_AUTO) && v == 0) || ((k->flags & PC_KF_NEG_AUTO) && v < 0);
    if (!special && (v < k->min || v > k->max)) {
        pc_key_allowed_(k, allowed, sizeof allowed);
        snprintf(err, len, "%s is out of range; allowed: %s", shown, allowed);
        return -1;
    }
    if ((k->flags & PC_KF_EVEN) && fmod(v, 2.0) != 0) {
        snprintf(err, len, "%s is odd; it must be even (whole 2x2 blocks: Bayer tiles, 4:2:0 chroma)", shown);
        return -1;
    }
    return 0;
}

int pc_key_set_int_(const pc_key *k, long long v, void *base, char *err, size_t len)
{
    char shown[32];
    snprintf(shown, sizeof shown, "%lld", v);
    if (k->type == PC_KT_DOUBLE) { /* shown as written, not as 5e+09 */
        if (check_num(k, (double)v, shown, err, len))
            return -1;
        *(double *)pc_key_field_(k, base) = (double)v;
        return 0;
    }
    if (k->type != PC_KT_INT && k->type != PC_KT_INT64) {
        snprintf(err, len, "expected %s, got an integer (%s)", pc_key_type_name_(k), shown);
        return -1;
    }
    if (check_num(k, (double)v, shown, err, len))
        return -1;
    if (k->type == PC_KT_INT)
        *(int *)pc_key_field_(k, base) = (int)v;
    else
        *(int64_t *)pc_key_field_(k, base) = (int64_t)v;
    return 0;
}

/* shown: the value in messages (as written where there is a text). */
static int set_double(const pc_key *k, double v, const char *shown, void *base, char *err, size_t len)
{
    if (k->type == PC_KT_INT || k->type == PC_KT_INT64) {
        if (v != floor(v)) {
            snprintf(err, len, "expected %s, got a fractional number (%s)", pc_key_type_name_(k), shown);
            return -1;
        }
        if (check_num(k, v, shown, err, len))
            return -1;
        if (k->type == PC_KT_INT)
            *(int *)pc_key_field_(k, base) = (int)v;
        else
            *(int64_t *)pc_key_field_(k, base) = (int64_t)v;
        return 0;
    }
    if (k->type != PC_KT_DOUBLE) {
        snprintf(err, len, "expected %s, got a number (%s)", pc_key_type_name_(k), shown);
        return -1;
    }
    if (check_num(k, v, shown, err, len))
        return -1;
    *(double *)pc_key_field_(k, base) = v;
    return 0;
}

int pc_key_set_double_(const pc_key *k, double v, void *base, char *err, size_t len)
{
    char shown[32];
    snprintf(shown, sizeof shown, "%g", v);
    return set_double(k, v, shown, base, err, len);
}

/* Unit suffixes of PC_KF_SI keys: the factor of the suffix at p (its
 * length in *n), or 1 with *n = 0 when there is none. */
static long long si_factor(const char *p, size_t *n)
{
    static const struct {
        const char *s;
        long long f;
    } u[] = {{"Ki", 1LL << 10}, {"Mi", 1LL << 20}, {"Gi", 1LL << 30}, {"Ti", 1LL << 40},
             {"k", 1000}, {"K", 1000}, {"M", 1000000}, {"G", 1000000000}, {"T", 1000000000000LL}};
    for (size_t i = 0; i < sizeof u / sizeof *u; i++)
        if (strncmp(p, u[i].s, strlen(u[i].s)) == 0) {
            *n = strlen(u[i].s);
            return u[i].f;
        }
    *n = 0;
    return 1;
}

#define SI_HELP " (suffixes: k, M, G, T = x1000; Ki, Mi, Gi, Ti = x1024)"

static int not_a_number(const pc_key *k, const char *text, char *err, size_t len)
{
    snprintf(err, len, "\"%s\" is not a number%s; expected %s", text, (k->flags & PC_KF_SI) ? SI_HELP : "",
             pc_key_type_name_(k));
    return -1;
}

static int too_large(const pc_key *k, const char *text, char *err, size_t len)
{
    char allowed[160];
    pc_key_allowed_(k, allowed, sizeof allowed);
    snprintf(err, len, "%s is out of range (too large for any integer); allowed: %s", text, allowed);
    return -1;
}

/* Integer keys: "5000000000", "-3", "0x1F", "2.5M", "1e9", "64Mi", read
 * exactly in integer arithmetic (a double would round past 2^53). */
static int parse_integer(const pc_key *k, const char *text, long long *out, char *err, size_t len)
{
    const unsigned __int128 cap = (unsigned __int128)1 << 100; /* far past 64 bits, far from overflow */
    const char *p = text;
    int neg = *p == '-';
    p += *p == '-' || *p == '+';
    unsigned __int128 m = 0;
    int scale = 0, nd = 0, big = 0;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && !neg && p == text) {
        for (p += 2; isxdigit((unsigned char)*p); p++, nd++) {
            m = m * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0' : (*p | 0x20) - 'a' + 10);
            big |= m > cap;
            m = big ? 0 : m;
        }
    } else {
        for (; isdigit((unsigned char)*p); p++, nd++) {
            m = m * 10 + (unsigned)(*p - '0');
            big |= m > cap;
            m = big ? 0 : m;
        }
        if (*p == '.')
            for (p++; isdigit((unsigned char)*p); p++, nd++) {
                if (m * 10 + 9 > cap) { /* digits past 30: only zeros keep it whole */
                    if (*p != '0')
                        big = 1;
                    continue;
                }
                m = m * 10 + (unsigned)(*p - '0');
                scale--;
            }
        if (nd && (*p == 'e' || *p == 'E')) {
            const char *q = p + 1;
            int eneg = *q == '-';
            q += *q == '-' || *q == '+';
            int e = 0, ed = 0;
            for (; isdigit((unsigned char)*q); q++, ed++)
                e = e < 1000 ? e * 10 + (*q - '0') : e;
            if (!ed)
                return not_a_number(k, text, err, len);
            scale += eneg ? -e : e;
            p = q;
        }
    }
    if (!nd)
        return not_a_number(k, text, err, len);
    size_t sn = 0;
    long long f = (k->flags & PC_KF_SI) ? si_factor(p, &sn) : 1;
    for (p += sn; isspace((unsigned char)*p); p++)
        ;
    if (*p)
        return not_a_number(k, text, err, len);
    if (big)
        return too_large(k, text, err, len);
    m *= (unsigned __int128)f; /* m < 2^100, f < 2^41: fits */
    for (; scale < 0 && m; scale++) {
        if (m % 10) {
            snprintf(err, len, "expected %s, got a fractional number (%s)", pc_key_type_name_(k), text);
            return -1;
        }
        m /= 10;
    }
    for (; scale > 0 && m; scale--)
        if ((m *= 10) > cap)
            return too_large(k, text, err, len);
    if (m > (unsigned __int128)LLONG_MAX + (unsigned)neg)
        return too_large(k, text, err, len);
    *out = neg ? (long long)(-(__int128)m) : (long long)m;
    return 0;
}

static int parse_number(const pc_key *k, const char *text, double *out, char *err, size_t len)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE)
        return not_a_number(k, text, err, len);
    if (k->flags & PC_KF_SI) {
        size_t sn;
        v *= (double)si_factor(end, &sn);
        end += sn;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return not_a_number(k, text, err, len);
    *out = v;
    return 0;
}

static int parse_list(const pc_key *k, const char *text, pc_name_list *out, char *err, size_t len)
{
    pc_name_list l;
    memset(&l, 0, sizeof l);
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        size_t n = (size_t)(e - p);
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        if (l.count >= PC_MAX_FALLBACKS) {
            snprintf(err, len, "too many names (at most %d)", PC_MAX_FALLBACKS);
            return -1;
        }
        if (n >= PC_NAME_LEN) {
            snprintf(err, len, "name \"%.*s\" is too long (at most %d characters)", (int)n, p,
                     PC_NAME_LEN - 1);
            return -1;
        }
        memcpy(l.item[l.count], p, n);
        l.item[l.count][n] = '\0';
        l.count++;
        p = e;
    }
    (void)k;
    *out = l;
    return 0;
}

/* A list of groups from text (the command line): for lists of URL-like
 * entries, the entries' first key (a URL) separated by blanks,
 * "rec.ts udp://239.1.1.1:5000"; "" = none. Others exist in files only. */
static int parse_groups(const pc_key *k, const char *text, void *list, char *err, size_t len)
{
    const pc_list_desc *L = k->list;
    if (!L->strings) {
        if (!text[0]) { /* "" = none (the default) */
            *pc_list_count_(list) = 0;
            return 0;
        }
        snprintf(err, len, "a list of %s groups is written in the configuration file: %s = %s", L->entry, k->name,
                 L->example);
        return -1;
    }
    const pc_key *first = &L->keys[0];
    int n = 0;
    char e2[256];
    for (const char *p = text; *p;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        size_t w = strcspn(p, " \t\n");
        if (n >= L->max) {
            snprintf(err, len, "too many %s (at most %d)", L->plural, L->max);
            return -1;
        }
        char one[PC_URL_LEN];
        if (w >= sizeof one) {
            snprintf(err, len, "entry %d: \"%.40s...\" is too long (at most %zu characters)", n, p, sizeof one - 1);
            return -1;
        }
        memcpy(one, p, w);
        one[w] = '\0';
        void *e = pc_list_entry_(L, list, n);
        pc_list_entry_defaults_(L, e);
        if (pc_key_parse_(first, one, e, e2, sizeof e2)) {
            snprintf(err, len, "entry %d: %s", n, e2);
            return -1;
        }
        *(uint32_t *)((char *)e + L->mask_off) = 1u;
        n++;
        p += w;
    }
    *pc_list_count_(list) = n;
    return 0;
}

int pc_key_parse_(const pc_key *k, const char *text, void *base, char *err, size_t len)
{
    char allowed[256];
    if (!text)
        text = "";
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_INT64:
    case PC_KT_DOUBLE: {
        while (isspace((unsigned char)*text))
            text++;
        if (k->type != PC_KT_DOUBLE) {
            long long iv = 0;
            if (parse_integer(k, text, &iv, err, len))
                return -1;
            return pc_key_set_int_(k, iv, base, err, len);
        }
        double v;
        if (parse_number(k, text, &v, err, len))
            return -1;
        return set_double(k, v, text, base, err, len);
    }
    case PC_KT_BOOL: {
        static const char *const yes[] = {"true", "yes", "on", "1"};
        static const char *const no[] = {"false", "no", "off", "0"};
        for (int i = 0; i < 4; i++) {
            if (strcasecmp(text, yes[i]) == 0) {
                *(int *)pc_key_field_(k, base) = 1;
                return 0;
            }
            if (strcasecmp(text, no[i]) == 0) {
                *(int *)pc_key_field_(k, base) = 0;
                return 0;
            }
        }
        snprintf(err, len, "\"%s\" is not a boolean; allowed: true, false, yes, no, on, off, 1, 0", text);
        return -1;
    }
    case PC_KT_STRING:
        if (strlen(text) >= k->size) {
            snprintf(err, len, "\"%.40s...\" is too long (%zu characters; at most %zu)", text,
                     strlen(text), k->size - 1);
            return -1;
        }
        snprintf((char *)pc_key_field_(k, base), k->size, "%s", text);
        return 0;
    case PC_KT_ENUM: {
        int v = k->en->parse(text);
        if (v < 0) {
            pc_key_allowed_(k, allowed, sizeof allowed);
            snprintf(err, len, "unknown value \"%s\"; allowed: %s", text, allowed);
            return -1;
        }
        *(int *)pc_key_field_(k, base) = v;
        return 0;
    }
    case PC_KT_LIST:
        return parse_list(k, text, (pc_name_list *)pc_key_field_(k, base), err, len);
    case PC_KT_GROUPS:
        return parse_groups(k, text, pc_key_field_(k, base), err, len);
    }
    return -1;
}

void pc_key_suggest_(const char *name, const pc_key *keys, int n, int with_camera, char *buf,
                     size_t len)
{
    const char *best = NULL;
    int bestd = 3;
    for (int pass = 0; pass < 2; pass++) {
        const pc_key *t = pass ? pc_camera_keys_ : keys;
        int tn = pass ? pc_ncamera_keys_ : n;
        if (pass && !with_camera)
            break;
        for (int i = 0; i < tn; i++) {
            if (pass && (t[i].flags & PC_KF_CAMERA_ONLY))
                continue;
            int d = pc_edit_distance(name, t[i].name, 1);
            size_t ln = strlen(name), lk = strlen(t[i].name), m = ln < lk ? ln : lk;
            if (m >= 3 && strncasecmp(name, t[i].name, m) == 0) /* "algorythm" ~ "algo" */
                d = d < 2 ? d : 2;
            if (d < bestd) {
                bestd = d;
                best = t[i].name;
            }
        }
    }
    if (best)
        snprintf(buf, len, "did you mean \"%s\"? ", best);
    else if (len)
        buf[0] = '\0';
}

void pc_key_list_(const pc_key *keys, int n, int skip_camera_only, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0, first = 1; i < n && off < len; i++) {
        if (skip_camera_only && (keys[i].flags & PC_KF_CAMERA_ONLY))
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s", first ? "" : ", ", keys[i].name);
        first = 0;
    }
}

void pc_key_format_(const pc_key *k, const void *base, char *buf, size_t len, int quote)
{
    const void *p = pc_key_cfield_(k, base);
    switch (k->type) {
    case PC_KT_INT: snprintf(buf, len, "%d", *(const int *)p); break;
    case PC_KT_INT64: snprintf(buf, len, "%lld%s", (long long)*(const int64_t *)p, quote ? "L" : ""); break;
    case PC_KT_DOUBLE: {
        double v = *(const double *)p;
        snprintf(buf, len, "%.15g", v);
        if (strtod(buf, NULL) != v)
            snprintf(buf, len, "%.17g", v);
        if (quote && !strpbrk(buf, ".eEn"))
            strncat(buf, ".0", len - strlen(buf) - 1);
        break;
    }
    case PC_KT_BOOL: snprintf(buf, len, "%s", *(const int *)p ? "true" : "false"); break;
    case PC_KT_ENUM: {
        int v = *(const int *)p - k->en->base;
        snprintf(buf, len, quote ? "\"%s\"" : "%s", k->en->name(v));
        break;
    }
    case PC_KT_STRING:
        if (!quote) {
            snprintf(buf, len, "%s", (const char *)p);
        } else {
            size_t o = 0;
            const char *t = p;
            if (len < 3)
                return;
            buf[o++] = '"';
            for (; *t && o + 4 < len; t++) {
                if (*t == '"' || *t == '\\')
                    buf[o++] = '\\';
                buf[o++] = *t;
            }
            buf[o++] = '"';
            buf[o] = '\0';
        }
        break;
    case PC_KT_LIST: {
        const pc_name_list *l = p;
        size_t o = 0;
        if (quote)
            o += (size_t)snprintf(buf + o, len - o, "[");
        else
            buf[0] = '\0';
        for (int i = 0; i < l->count && o < len; i++)
            o += (size_t)snprintf(buf + o, len - o, quote ? "%s\"%s\"" : "%s%s", i ? ", " : "", l->item[i]);
        if (quote && o < len)
            snprintf(buf + o, len - o, "]");
        break;
    }
    case PC_KT_GROUPS: { /* the entries' first keys: "rec.ts udp://..." (settings_write.c writes them whole) */
        const pc_list_desc *L = k->list;
        size_t o = 0;
        buf[0] = '\0';
        char one[PC_URL_LEN];
        for (int i = 0; i < *(const int *)p && o < len; i++) {
            pc_key_format_(&L->keys[0], pc_list_centry_(L, p, i), one, sizeof one, 0);
            o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", one);
        }
        break;
    }
    }
}

/* --- setting from text ------------------------------------------------ */

/* Parses "section.key", "cameras[N].key", "outputs[N].key",
 * "virtual_cameras[N].key". */
int pc_settings_set(pc_settings *s, const char *key, const char *value, char *err, size_t errlen)
{
    char sec[32], name[64];
    int idx = -1;
    const char *dot = strchr(key, '.');
    if (!dot || (size_t)(dot - key) >= sizeof sec || strlen(dot + 1) >= sizeof name) {
        snprintf(err, errlen, "\"%s\" is not a setting name; use section.key (e.g. debayer.algo)", key);
        return -1;
    }
    memcpy(sec, key, (size_t)(dot - key));
    sec[dot - key] = '\0';
    snprintf(name, sizeof name, "%s", dot + 1);
    char *br = strchr(sec, '[');
    if (br) {
        char *end;
        idx = (int)strtol(br + 1, &end, 10);
        if (end == br + 1 || *end != ']' || end[1]) {
            snprintf(err, errlen, "\"%s\": bad index; use cameras[N].key", key);
            return -1;
        }
        *br = '\0';
    }
    const pc_section *S = pc_section_find_(sec);
    if (!S) {
        char list[192] = "";
        size_t off = 0;
        for (int i = 0; i < pc_nsections_; i++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", pc_sections_[i].name);
        snprintf(err, errlen, "unknown section \"%s\"; sections: %s", sec, list);
        return -1;
    }
    if ((S->kind == PC_SEC_GROUP) != (idx < 0)) {
        snprintf(err, errlen, "\"%s\": %s", key,
                 idx < 0 ? "a list section needs an index, e.g. cameras[0].exposure"
                         : "this section is not a list; no index");
        return -1;
    }
    char e2[384], list[512], sug[64];
    if (S->kind == PC_SEC_GROUP) {
        void *base = (char *)s + S->off;
        const pc_key *k = pc_key_find_(S->keys, S->nkeys, name);
        int tmpl = 0;
        if (!k && strcmp(S->name, "capture") == 0) {
            k = pc_key_find_(pc_camera_keys_, pc_ncamera_keys_, name);
            if (k && (k->flags & PC_KF_CAMERA_ONLY))
                k = NULL;
            base = &s->capture.camera;
            tmpl = 1;
        }
        if (!k) {
            int cap = strcmp(S->name, "capture") == 0;
            pc_key_suggest_(name, S->keys, S->nkeys, cap, sug, sizeof sug);
            pc_key_list_(S->keys, S->nkeys, 0, list, sizeof list);
            if (cap) {
                size_t off = strlen(list);
                snprintf(list + off, sizeof list - off, "; camera defaults: ");
                off = strlen(list);
                pc_key_list_(pc_camera_keys_, pc_ncamera_keys_, 1, list + off, sizeof list - off);
            }
            snprintf(err, errlen, "%s: unknown setting; %sthe %s section takes: %s", key, sug, S->name, list);
            return -1;
        }
        if (pc_key_parse_(k, value, base, e2, sizeof e2)) {
            snprintf(err, errlen, "%s: %s", key, e2);
            return -1;
        }
        if (tmpl)
            pc_settings_finish(s);
        return 0;
    }
    int max = S->kind == PC_SEC_CAMERAS ? PC_MAX_CAMERAS : S->list->max;
    if (idx < 0 || idx >= max) {
        snprintf(err, errlen, "%s: index %d out of range 0..%d", key, idx, max - 1);
        return -1;
    }
    const pc_key *k = pc_key_find_(S->keys, S->nkeys, name);
    if (!k) {
        pc_key_suggest_(name, S->keys, S->nkeys, 0, sug, sizeof sug);
        pc_key_list_(S->keys, S->nkeys, 0, list, sizeof list);
        snprintf(err, errlen, "%s: unknown setting; %sa %s entry takes: %s", key, sug,
                 S->kind == PC_SEC_CAMERAS ? "camera" : S->list->entry, list);
        return -1;
    }
    if (S->kind == PC_SEC_CAMERAS) {
        pc_camera_settings *c = &s->cameras[idx];
        if (pc_key_parse_(k, value, c, e2, sizeof e2)) {
            snprintf(err, errlen, "%s: %s", key, e2);
            return -1;
        }
        c->set_mask |= 1u << pc_key_index_(pc_camera_keys_, k);
        pc_settings_finish(s);
        return 0;
    }
    /* outputs, virtual_cameras: entry idx (new entries, and gaps before
     * them, start from the defaults; validation reports empty ones) */
    const pc_list_desc *L = S->list;
    void *lb = (char *)s + S->off;
    int *count = pc_list_count_(lb);
    void *tmp = malloc(L->entry_size);
    if (!tmp) {
        snprintf(err, errlen, "%s: out of memory", key);
        return -1;
    }
    if (idx < *count) {
        memcpy(tmp, pc_list_entry_(L, lb, idx), L->entry_size);
    } else { /* an entry the file does not have: the command line's */
        pc_list_entry_defaults_(L, tmp);
        *(int *)((char *)tmp + L->line_off) = PC_LINE_CMDLINE;
    }
    if (pc_key_parse_(k, value, tmp, e2, sizeof e2)) {
        snprintf(err, errlen, "%s: %s", key, e2);
        free(tmp);
        return -1;
    }
    *(uint32_t *)((char *)tmp + L->mask_off) |= 1u << pc_key_index_(L->keys, k);
    /* the command line's entry: its own lists too (a view's outputs) */
    if (*(int *)((char *)tmp + L->line_off) == PC_LINE_CMDLINE && k->type == PC_KT_GROUPS && k->list) {
        void *nb = (char *)tmp + k->off;
        for (int i = 0; i < *pc_list_count_(nb); i++) {
            int *ln = (int *)((char *)pc_list_entry_(k->list, nb, i) + k->list->line_off);
            if (*ln == 0)
                *ln = PC_LINE_CMDLINE;
        }
    }
    for (int i = *count; i < idx; i++) { /* the gap: the command line's too */
        pc_list_entry_defaults_(L, pc_list_entry_(L, lb, i));
        *(int *)((char *)pc_list_entry_(L, lb, i) + L->line_off) = PC_LINE_CMDLINE;
    }
    memcpy(pc_list_entry_(L, lb, idx), tmp, L->entry_size);
    free(tmp);
    if (idx >= *count)
        *count = idx + 1;
    return 0;
}

int pc_settings_set_outputs(pc_settings *s, const char *const *urls, int n, char *err, size_t errlen)
{
    if (n < 0 || n > PC_MAX_OUTPUTS) {
        snprintf(err, errlen, "too many outputs (%d; at most %d)", n, PC_MAX_OUTPUTS);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (strlen(urls[i]) >= PC_URL_LEN) {
            snprintf(err, errlen, "output URL \"%.40s...\" is too long (at most %d characters)",
                     urls[i], PC_URL_LEN - 1);
            return -1;
        }
    for (int i = 0; i < n; i++) {
        pc_output_defaults_(&s->outputs[i]);
        snprintf(s->outputs[i].url, sizeof s->outputs[i].url, "%s", urls[i]);
        s->outputs[i].set_mask = 1;
    }
    s->output_count = n;
    return 0;
}
