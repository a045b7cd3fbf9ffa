/* json.c - JSON writer and flat-object reader (see json.h). */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writer */

void pc_json_init(pc_json *j, char *buf, size_t cap)
{
    memset(j, 0, sizeof *j);
    j->buf = buf;
    j->cap = cap;
    if (cap)
        buf[0] = '\0';
    else
        j->overflow = 1;
}

int pc_json_done(const pc_json *j) { return j->overflow || j->bad_nesting || j->depth != 0 ? -1 : 0; }

static void put(pc_json *j, const char *s, size_t n)
{
    if (j->overflow)
        return;
    if (j->len + n + 1 > j->cap) {
        j->overflow = 1;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void putf(pc_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(pc_json *j, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        j->overflow = 1;
    else
        put(j, tmp, (size_t)n);
}

static void put_string(pc_json *j, const char *s)
{
    put(j, "\"", 1);
    const unsigned char *c = (const unsigned char *)s;
    size_t run = 0;
    for (size_t i = 0;; i++) {
        unsigned char ch = c[i];
        int plain = ch && ch != '"' && ch != '\\' && ch >= 0x20;
        if (plain) {
            run++;
            continue;
        }
        put(j, (const char *)c + i - run, run);
        run = 0;
        if (!ch)
            break;
        switch (ch) {
        case '"': put(j, "\\\"", 2); break;
        case '\\': put(j, "\\\\", 2); break;
        case '\n': put(j, "\\n", 2); break;
        case '\r': put(j, "\\r", 2); break;
        case '\t': put(j, "\\t", 2); break;
        default: putf(j, "\\u%04x", ch); break;
        }
    }
    put(j, "\"", 1);
}

/* Comma and key before a value. */
static void begin_value(pc_json *j, const char *key)
{
    int d = j->depth;
    if (d > 0 && d <= PC_JSON_DEPTH) {
        if (j->count[d - 1])
            put(j, ",", 1);
        j->count[d - 1] = 1;
    }
    if (key) {
        put_string(j, key);
        put(j, ":", 1);
    }
}

static void open_(pc_json *j, const char *key, const char *br)
{
    begin_value(j, key);
    put(j, br, 1);
    if (j->depth >= PC_JSON_DEPTH) {
        j->bad_nesting = 1;
        return;
    }
    j->count[j->depth++] = 0;
}

static void close_(pc_json *j, const char *br)
{
    if (j->depth <= 0) {
        j->bad_nesting = 1;
        return;
    }
    j->depth--;
    put(j, br, 1);
}

void pc_json_object(pc_json *j, const char *key) { open_(j, key, "{"); }
void pc_json_object_end(pc_json *j) { close_(j, "}"); }
void pc_json_array(pc_json *j, const char *key) { open_(j, key, "["); }
void pc_json_array_end(pc_json *j) { close_(j, "]"); }

void pc_json_str(pc_json *j, const char *key, const char *v)
{
    begin_value(j, key);
    if (v)
        put_string(j, v);
    else
        put(j, "null", 4);
}

void pc_json_int(pc_json *j, const char *key, int64_t v)
{
    begin_value(j, key);
    putf(j, "%lld", (long long)v);
}

void pc_json_uint(pc_json *j, const char *key, uint64_t v)
{
    begin_value(j, key);
    putf(j, "%llu", (unsigned long long)v);
}

void pc_json_num(pc_json *j, const char *key, double v)
{
    begin_value(j, key);
    if (isfinite(v))
        putf(j, "%.6g", v);
    else
        put(j, "null", 4);
}

void pc_json_fixed(pc_json *j, const char *key, double v, int decimals)
{
    begin_value(j, key);
    if (isfinite(v) && fabs(v) < 1e15)
        putf(j, "%.*f", decimals < 0 ? 0 : decimals > 9 ? 9 : decimals, v);
    else
        put(j, "null", 4);
}

void pc_json_bool(pc_json *j, const char *key, int v)
{
    begin_value(j, key);
    put(j, v ? "true" : "false", v ? 4 : 5);
}

void pc_json_null(pc_json *j, const char *key)
{
    begin_value(j, key);
    put(j, "null", 4);
}

/* ---------------------------------------------------------------- reader */

typedef struct reader {
    const char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
} reader;

static int fail(reader *r, const char *what)
{
    if (r->pos >= r->len)
        snprintf(r->err, r->errlen, "malformed JSON: the text ends too early: %s", what);
    else
        snprintf(r->err, r->errlen, "malformed JSON at byte %zu: %s", r->pos, what);
    return -1;
}

static void skip_ws(reader *r)
{
    while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' || r->s[r->pos] == '\n' ||
                               r->s[r->pos] == '\r'))
        r->pos++;
}

static int hex4(reader *r, unsigned *out)
{
    if (r->len - r->pos < 4)
        return fail(r, "\\u needs four hex digits");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->s[r->pos + i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(r, "\\u needs four hex digits");
    }
    r->pos += 4;
    *out = v;
    return 0;
}

/* Bytes of the UTF-8 sequence at r->pos (1..4), 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_len(const reader *r)
{
    const unsigned char *s = (const unsigned char *)r->s + r->pos;
    size_t left = r->len - r->pos;
    unsigned c = s[0];
    size_t n;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* A string at r->pos (the opening quote) into out (cap bytes, NUL-terminated). */
static int read_string(reader *r, char *out, size_t cap, const char *what)
{
    size_t o = 0;
    r->pos++; /* " */
    for (;;) {
        if (r->pos >= r->len)
            return fail(r, "a string is not closed");
        unsigned char c = (unsigned char)r->s[r->pos];
        unsigned cp;
        if (c == '"') {
            r->pos++;
            break;
        }
        if (c < 0x20)
            return fail(r, "a control character inside a string (escape it)");
        if (c != '\\') {
            size_t n = utf8_len(r);
            if (!n)
                return fail(r, "a string is not valid UTF-8");
            if (o + n >= cap) {
                snprintf(r->err, r->errlen, "%s longer than %zu bytes", what, cap - 1);
                return -1;
            }
            memcpy(out + o, r->s + r->pos, n);
            o += n;
            r->pos += n;
            continue;
        }
        r->pos++;
        if (r->pos >= r->len)
            return fail(r, "an escape is cut off");
        char e = r->s[r->pos++];
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (hex4(r, &cp))
                return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (r->len - r->pos < 2 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u')
                    return fail(r, "a high surrogate without its low half");
                r->pos += 2;
                if (hex4(r, &lo))
                    return -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return fail(r, "a high surrogate without its low half");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(r, "a low surrogate alone");
            } else if (cp == 0) {
                return fail(r, "\\u0000 is not accepted");
            }
            break;
        default:
            r->pos--;
            return fail(r, "an unknown escape");
        }
        char u[4];
        size_t n;
        if (cp < 0x80) {
            u[0] = (char)cp;
            n = 1;
        } else if (cp < 0x800) {
            u[0] = (char)(0xC0 | (cp >> 6));
            u[1] = (char)(0x80 | (cp & 0x3F));
            n = 2;
        } else if (cp < 0x10000) {
            u[0] = (char)(0xE0 | (cp >> 12));
            u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[2] = (char)(0x80 | (cp & 0x3F));
            n = 3;
        } else {
            u[0] = (char)(0xF0 | (cp >> 18));
            u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[3] = (char)(0x80 | (cp & 0x3F));
            n = 4;
        }
        if (o + n >= cap) {
            snprintf(r->err, r->errlen, "%s longer than %zu bytes", what, cap - 1);
            return -1;
        }
        memcpy(out + o, u, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}

/* RFC 8259 number grammar, then strtod on a bounded copy. */
static int read_number(reader *r, double *out)
{
    size_t p = r->pos;
    const char *s = r->s;
    if (p < r->len && s[p] == '-')
        p++;
    if (p >= r->len || !(s[p] >= '0' && s[p] <= '9'))
        return fail(r, "expected a value (string, number, true, false or null)");
    if (s[p] == '0')
        p++;
    else
        while (p < r->len && s[p] >= '0' && s[p] <= '9')
            p++;
    if (p < r->len && s[p] == '.') {
        p++;
        if (p >= r->len || !(s[p] >= '0' && s[p] <= '9')) {
            r->pos = p;
            return fail(r, "a digit must follow the decimal point");
        }
        while (p < r->len && s[p] >= '0' && s[p] <= '9')
            p++;
    }
    if (p < r->len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < r->len && (s[p] == '+' || s[p] == '-'))
            p++;
        if (p >= r->len || !(s[p] >= '0' && s[p] <= '9')) {
            r->pos = p;
            return fail(r, "a digit must follow the exponent");
        }
        while (p < r->len && s[p] >= '0' && s[p] <= '9')
            p++;
    }
    char tmp[64];
    if (p - r->pos >= sizeof tmp)
        return fail(r, "a number longer than 63 characters");
    memcpy(tmp, s + r->pos, p - r->pos);
    tmp[p - r->pos] = '\0';
    *out = strtod(tmp, NULL);
    if (!isfinite(*out))
        return fail(r, "a number out of range");
    r->pos = p;
    return 0;
}

static int word(reader *r, const char *w)
{
    size_t n = strlen(w);
    if (r->len - r->pos >= n && memcmp(r->s + r->pos, w, n) == 0) {
        r->pos += n;
        return 1;
    }
    return 0;
}

/* The members of the object at r->pos ('{') into fields[*n..]: keys under
 * prefix ("" at the top, "move." inside "move"); objects nested up to
 * depth - 1 more levels, each a field of its own (PC_JSON_OBJECT) before
 * its members. */
static int read_object(reader *r, pc_json_field *fields, int *n, int max, const char *prefix, int depth)
{
    const char *text = r->s;
    const int first = *n;
    r->pos++; /* { */
    skip_ws(r);
    if (r->pos < r->len && text[r->pos] == '}') {
        r->pos++;
        return 0;
    }
    for (;;) {
        skip_ws(r);
        if (r->pos >= r->len || text[r->pos] != '"')
            return fail(r, "expected a key in double quotes");
        if (*n >= max) {
            snprintf(r->err, r->errlen, "more than %d members in the object", max);
            return -1;
        }
        pc_json_field *f = &fields[*n];
        memset(f, 0, sizeof *f);
        char key[PC_JSON_KEY_MAX];
        if (read_string(r, key, sizeof key, "a key"))
            return -1;
        if (snprintf(f->key, sizeof f->key, "%s%s", prefix, key) >= (int)sizeof f->key) {
            snprintf(r->err, r->errlen, "the key \"%s%s\" is longer than %d bytes", prefix, key, PC_JSON_KEY_MAX - 1);
            return -1;
        }
        for (int i = first; i < *n; i++)
            if (strcmp(fields[i].key, f->key) == 0) {
                snprintf(r->err, r->errlen, "malformed JSON: the key \"%s\" appears twice", f->key);
                return -1;
            }
        /* nested keys are joined with '.': a key of its own with one would
         * pass for a member ({"move.speed": 5} for {"move": {"speed": 5}}) */
        if ((depth > 1 || prefix[0]) && strchr(key, '.')) {
            snprintf(r->err, r->errlen, "the key \"%s%s\" holds a '.': members of an object are written nested "
                     "({\"%.*s\": {\"%s\": ...}})", prefix, key, (int)strcspn(key, "."), key,
                     key + strcspn(key, ".") + 1);
            return -1;
        }
        skip_ws(r);
        if (r->pos >= r->len || text[r->pos] != ':')
            return fail(r, "expected ':' after a key");
        r->pos++;
        skip_ws(r);
        if (r->pos >= r->len)
            return fail(r, "a value was expected");
        char c = text[r->pos];
        if (c == '"') {
            f->type = PC_JSON_STRING;
            if (read_string(r, f->str, sizeof f->str, "a string value"))
                return -1;
            (*n)++;
        } else if (c == '{' && depth > 1) {
            f->type = PC_JSON_OBJECT;
            char inner[PC_JSON_KEY_MAX + 1];
            snprintf(inner, sizeof inner, "%s.", f->key);
            (*n)++;
            if (read_object(r, fields, n, max, inner, depth - 1))
                return -1;
        } else if (c == '{' || c == '[') {
            return fail(r, depth > 1 ? "arrays are not accepted here"
                                     : "nested objects and arrays are not accepted here");
        } else {
            if (word(r, "true")) {
                f->type = PC_JSON_TRUE;
            } else if (word(r, "false")) {
                f->type = PC_JSON_FALSE;
            } else if (word(r, "null")) {
                f->type = PC_JSON_NULL;
            } else {
                f->type = PC_JSON_NUMBER;
                if (read_number(r, &f->num))
                    return -1;
            }
            (*n)++;
        }
        skip_ws(r);
        if (r->pos < r->len && text[r->pos] == ',') {
            r->pos++;
            continue;
        }
        if (r->pos < r->len && text[r->pos] == '}') {
            r->pos++;
            return 0;
        }
        return fail(r, "expected ',' or '}' after a value");
    }
}

int pc_json_parse(const char *text, size_t len, pc_json_field *fields, int max, int depth, char *err, size_t errlen)
{
    reader r = {text, len, 0, err, errlen};
    int n = 0;
    skip_ws(&r);
    if (r.pos >= r.len) {
        snprintf(err, errlen, "the body is empty: a JSON object was expected");
        return -1;
    }
    if (text[r.pos] != '{')
        return fail(&r, "expected '{': the body must be a JSON object");
    if (read_object(&r, fields, &n, max, "", depth < 1 ? 1 : depth > PC_JSON_DEPTH ? PC_JSON_DEPTH : depth))
        return -1;
    skip_ws(&r);
    if (r.pos != r.len)
        return fail(&r, "text after the object");
    return n;
}

int pc_json_parse_flat(const char *text, size_t len, pc_json_field *fields, int max, char *err, size_t errlen)
{
    return pc_json_parse(text, len, fields, max, 1, err, errlen);
}

const pc_json_field *pc_json_field_find(const pc_json_field *fields, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}
