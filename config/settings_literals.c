/* settings_literals.c - a scanner of libconfig's syntax that records every
 * value as written, and its pairing with libconfig's settings (see
 * settings_literals.h for why). The token rules are libconfig's scanner.l,
 * longest match first, ties to the rule listed first:
 *   slash-star ... star-slash, # ... and // ... comments; "strings" with \" \\ \n \r \t
 *   \f \xHH escapes, adjacent strings joined; ^[ \t]*@include "name";
 *   true / false (any case); names [A-Za-z*][-A-Za-z0-9_*]*;
 *   floats [-+]?[0-9]*\.[0-9]*([eE][-+]?[0-9]+)? or
 *          [-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+;
 *   integers [-+]?[0-9]+ and hex 0[xX][0-9A-Fa-f]+, each with L or LL;
 *   = : , { } [ ] ( ) ; */
#include "settings_literals.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_INCLUDE_DEPTH 10 /* libconfig's */

typedef struct scanner {
    pc_literals *L;
    const char *include_dir;
    char *err;
    size_t errlen;
    int in_string; /* the last token was a string: a string next continues it */
} scanner;

static int add_file(pc_literals *L, const char *path)
{
    char **f = realloc(L->files, sizeof *f * (size_t)(L->nfiles + 1));
    if (!f)
        return -1;
    L->files = f;
    if (!(f[L->nfiles] = strdup(path)))
        return -1;
    return L->nfiles++;
}

static pc_literal *add_literal(scanner *S, pc_literal_kind kind, int file, int line)
{
    pc_literals *L = S->L;
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        pc_literal *v = realloc(L->v, sizeof *v * (size_t)cap);
        if (!v) {
            snprintf(S->err, S->errlen, "out of memory");
            return NULL;
        }
        L->v = v;
        L->cap = cap;
    }
    pc_literal *l = &L->v[L->n++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->file = file;
    l->line = line;
    return l;
}

/* The token's text, long ones shortened in the middle. */
static void keep_text(pc_literal *l, const char *t, size_t n)
{
    if (n < sizeof l->text)
        snprintf(l->text, sizeof l->text, "%.*s", (int)n, t);
    else
        snprintf(l->text, sizeof l->text, "%.20s...%.20s", t, t + n - 20);
}

static size_t digits(const char *p, const char *end, int hex)
{
    size_t n = 0;
    while (p + n < end && (hex ? isxdigit((unsigned char)p[n]) : isdigit((unsigned char)p[n])))
        n++;
    return n;
}

/* Lengths of the longest match of each number rule at p (0: none). */
static size_t match_float(const char *p, const char *end)
{
    size_t best = 0;
    const char *q = p;
    if (q < end && (*q == '-' || *q == '+'))
        q++;
    size_t d = digits(q, end, 0);
    /* [-+]?[0-9]*\.[0-9]*([eE][-+]?[0-9]+)? */
    if (q + d < end && q[d] == '.') {
        const char *r = q + d + 1;
        r += digits(r, end, 0);
        if (r < end && (*r == 'e' || *r == 'E')) {
            const char *x = r + 1;
            if (x < end && (*x == '-' || *x == '+'))
                x++;
            size_t e = digits(x, end, 0);
            if (e)
                r = x + e;
        }
        best = (size_t)(r - p);
    }
    /* [-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+ */
    if (d) {
        const char *r = q + d;
        if (r < end && *r == '.') {
            r++;
            r += digits(r, end, 0);
        }
        if (r < end && (*r == 'e' || *r == 'E')) {
            const char *x = r + 1;
            if (x < end && (*x == '-' || *x == '+'))
                x++;
            size_t e = digits(x, end, 0);
            if (e && (size_t)(x + e - p) > best)
                best = (size_t)(x + e - p);
        }
    }
    return best;
}

/* [-+]?[0-9]+ (hex = 0: returns its length) or 0[xX][0-9a-fA-F]+ (hex =
 * 1), then the L or LL of the 64-bit rules. */
static size_t match_integer(const char *p, const char *end, int hex, size_t *body)
{
    const char *q = p;
    size_t n;
    if (hex) {
        if (end - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
            return 0;
        n = digits(p + 2, end, 1);
        if (!n)
            return 0;
        q = p + 2 + n;
    } else {
        if (q < end && (*q == '-' || *q == '+'))
            q++;
        n = digits(q, end, 0);
        if (!n)
            return 0;
        q += n;
    }
    *body = (size_t)(q - p);
    if (q < end && *q == 'L') {
        q++;
        if (q < end && *q == 'L')
            q++;
    }
    return (size_t)(q - p);
}

static size_t match_name(const char *p, const char *end)
{
    if (!(isalpha((unsigned char)*p) || *p == '*'))
        return 0;
    size_t n = 1;
    while (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_' || p[n] == '*'))
        n++;
    return n;
}

static int integer_literal(scanner *S, const char *t, size_t body, size_t n, int hex, int file, int line)
{
    pc_literal *l = add_literal(S, PC_LIT_INTEGER, file, line);
    if (!l)
        return -1;
    keep_text(l, t, n);
    char num[80];
    if (body >= sizeof num) {
        l->overflow = 1; /* 79 digits: no 64-bit value has that many */
        return 0;
    }
    memcpy(num, t, body);
    num[body] = '\0';
    errno = 0;
    if (hex) {
        unsigned long long u = strtoull(num + 2, NULL, 16);
        l->overflow = errno == ERANGE || u > (unsigned long long)LLONG_MAX;
        l->value = l->overflow ? 0 : (long long)u;
    } else {
        l->value = strtoll(num, NULL, 10);
        l->overflow = errno == ERANGE;
    }
    return 0;
}

static int scan_file(scanner *S, const char *path, int depth);

static int scan_text(scanner *S, const char *buf, size_t len, int file, int depth)
{
    const char *end = buf + len;
    int line = 1;
    for (const char *p = buf; p < end;) {
        /* ^[ \t]*@include[ \t]+"name" */
        if (p == buf || p[-1] == '\n') {
            const char *q = p;
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            if (end - q > 8 && memcmp(q, "@include", 8) == 0 && (q[8] == ' ' || q[8] == '\t')) {
                q += 8;
                while (q < end && (*q == ' ' || *q == '\t'))
                    q++;
                if (q < end && *q == '"') {
                    char name[4096];
                    size_t n = 0;
                    for (q++; q < end && *q != '"'; q++) {
                        if (*q == '\\' && q + 1 < end && (q[1] == '\\' || q[1] == '"'))
                            q++;
                        else if (*q == '\\')
                            continue;
                        if (*q == '\n')
                            line++;
                        if (n + 1 < sizeof name)
                            name[n++] = *q;
                    }
                    name[n] = '\0';
                    char full[4096 + 1024];
                    if (S->include_dir && name[0] != '/')
                        snprintf(full, sizeof full, "%s/%s", S->include_dir, name);
                    else
                        snprintf(full, sizeof full, "%s", name);
                    if (depth + 1 >= MAX_INCLUDE_DEPTH) {
                        snprintf(S->err, S->errlen, "%s:%d: includes nested too deep", S->L->files[file], line);
                        return -1;
                    }
                    if (scan_file(S, full, depth + 1))
                        return -1;
                    p = q < end ? q + 1 : end;
                    continue;
                }
            }
        }
        char c = *p;
        if (c == '\n') {
            line++;
            p++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
            p++;
            continue;
        }
        if (c == '/' && p + 1 < end && p[1] == '*') {
            for (p += 2; p < end && !(*p == '*' && p + 1 < end && p[1] == '/'); p++)
                line += *p == '\n';
            p = p < end ? p + 2 : end;
            continue;
        }
        if (c == '#' || (c == '/' && p + 1 < end && p[1] == '/')) {
            while (p < end && *p != '\n')
                p++;
            continue;
        }
        if (c == '"') {
            int start = line;
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\' && p + 1 < end && strchr("\"\\nrtf", p[1]))
                    p++;
                line += *p == '\n';
            }
            p = p < end ? p + 1 : end;
            if (!S->in_string && !add_literal(S, PC_LIT_STRING, file, start))
                return -1;
            S->in_string = 1;
            continue;
        }
        S->in_string = 0;
        if (strchr("=:,{}[]();", c)) {
            p++;
            continue;
        }
        /* longest match; on a tie the rule libconfig lists first */
        size_t ib = 0, hb = 0;
        size_t m_true = (end - p >= 4 && strncasecmp(p, "true", 4) == 0) ? 4 : 0;
        size_t m_false = (end - p >= 5 && strncasecmp(p, "false", 5) == 0) ? 5 : 0;
        size_t m_name = match_name(p, end);
        size_t m_float = match_float(p, end);
        size_t m_int = match_integer(p, end, 0, &ib);
        size_t m_hex = match_integer(p, end, 1, &hb);
        size_t best = m_true;
        int rule = 0;
        const size_t m[] = {m_true, m_false, m_name, m_float, m_int, m_hex};
        for (int r = 1; r < 6; r++)
            if (m[r] > best) {
                best = m[r];
                rule = r;
            }
        if (!best) { /* libconfig's "garbage": it refused the file already */
            p++;
            continue;
        }
        pc_literal *l = NULL;
        switch (rule) {
        case 0:
        case 1:
            if (!(l = add_literal(S, PC_LIT_BOOL, file, line)))
                return -1;
            l->value = rule == 0;
            break;
        case 2: break; /* a setting's name */
        case 3: {
            if (!(l = add_literal(S, PC_LIT_FLOAT, file, line)))
                return -1;
            keep_text(l, p, best);
            char *t = strndup(p, best);
            if (!t) {
                snprintf(S->err, S->errlen, "out of memory");
                return -1;
            }
            l->fvalue = strtod(t, NULL);
            free(t);
            break;
        }
        case 4:
        case 5:
            if (integer_literal(S, p, rule == 5 ? hb : ib, best, rule == 5, file, line))
                return -1;
            break;
        }
        p += best;
    }
    return 0;
}

static int scan_file(scanner *S, const char *path, int depth)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(S->err, S->errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? 2 * cap : 16384;
            char *b = realloc(buf, nc);
            if (!b) {
                free(buf);
                fclose(f);
                snprintf(S->err, S->errlen, "%s: out of memory", path);
                return -1;
            }
            buf = b;
            cap = nc;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    int file = bad ? -1 : add_file(S->L, path);
    int rc = -1;
    if (bad)
        snprintf(S->err, S->errlen, "%s: read error", path);
    else if (file < 0)
        snprintf(S->err, S->errlen, "out of memory");
    else
        rc = scan_text(S, buf, len, file, depth);
    free(buf);
    return rc;
}

int pc_literals_scan(pc_literals *L, const char *path, const char *include_dir, char *err, size_t errlen)
{
    memset(L, 0, sizeof *L);
    scanner S = {L, include_dir, err, errlen, 0};
    return scan_file(&S, path, 0);
}

static int fits32(long long v) { return v >= INT32_MIN && v <= INT32_MAX; }

static const char *kind_name(pc_literal_kind k)
{
    static const char *const n[] = {"an integer", "a float", "a boolean", "a string"};
    return n[k];
}

/* Depth first, in order: the scalar settings of libconfig's tree. */
static int walk(pc_literals *L, config_setting_t *s, int *next, const pc_literal **at, char *err, size_t n)
{
    int type = config_setting_type(s);
    if (type == CONFIG_TYPE_GROUP || type == CONFIG_TYPE_ARRAY || type == CONFIG_TYPE_LIST) {
        for (int i = 0; i < config_setting_length(s); i++)
            if (walk(L, config_setting_get_elem(s, (unsigned)i), next, at, err, n))
                return -1;
        return 0;
    }
    if (*next >= L->n) {
        snprintf(err, n, "libconfig read more values than panocap found in the text");
        return -1;
    }
    const pc_literal *l = &L->v[(*next)++];
    *at = l;
    int ok;
    switch (type) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        /* where libconfig cannot have cut it short, it read the same */
        ok = l->kind == PC_LIT_INTEGER &&
             (l->overflow || !(fits32(l->value) || type == CONFIG_TYPE_INT64) ||
              config_setting_get_int64(s) == l->value);
        break;
    case CONFIG_TYPE_FLOAT: ok = l->kind == PC_LIT_FLOAT && config_setting_get_float(s) == l->fvalue; break;
    case CONFIG_TYPE_BOOL: ok = l->kind == PC_LIT_BOOL && config_setting_get_bool(s) == (int)l->value; break;
    case CONFIG_TYPE_STRING: ok = l->kind == PC_LIT_STRING; break;
    default: ok = 0; break;
    }
    if (!ok) {
        snprintf(err, n, "libconfig read a setting here that panocap's reading of the text does not match "
                 "(%s%s%s%s); please report this file", kind_name(l->kind), l->text[0] ? " \"" : "", l->text,
                 l->text[0] ? "\"" : "");
        return -1;
    }
    config_setting_set_hook(s, (void *)l);
    return 0;
}

int pc_literals_attach(pc_literals *L, config_t *cfg, const char **file, int *line, char *err, size_t errlen)
{
    int next = 0;
    const pc_literal *at = NULL;
    int rc = walk(L, config_root_setting(cfg), &next, &at, err, errlen);
    if (!rc && next != L->n) {
        at = &L->v[next];
        snprintf(err, errlen, "panocap found more values in the text than libconfig read; please report this file");
        rc = -1;
    }
    *file = at && L->nfiles ? L->files[at->file] : L->nfiles ? L->files[0] : "";
    *line = at ? at->line : 0;
    return rc;
}

const pc_literal *pc_literal_of(const config_setting_t *st) { return config_setting_get_hook(st); }

void pc_literals_free(pc_literals *L)
{
    for (int i = 0; i < L->nfiles; i++)
        free(L->files[i]);
    free(L->files);
    free(L->v);
    memset(L, 0, sizeof *L);
}
