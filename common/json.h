/* json.h - the little JSON the web API needs: a writer into a fixed buffer
 * (answers such as GET /api/status) and a strict reader of one flat object
 * (request bodies such as {"algo": "edge", "variant": "4px"}).
 *
 * Writer: pc_json_init(&j, buf, cap), then values; every value takes a key
 * (inside an object) or NULL (at the top, in an array). Commas and string
 * escaping are the writer's business. A value that does not fit sets
 * j.overflow and the text is cut off: check pc_json_done() (0, or -1 when
 * it overflowed or the nesting was wrong). Numbers that are not finite
 * (NaN, inf) are written as null, so the answer always parses.
 *
 * Reader: pc_json_parse_flat() takes exactly one object whose values are
 * strings, numbers, true, false or null (RFC 8259 syntax; nested objects
 * and arrays are refused: no request needs them), with at most `max`
 * members, no duplicate keys, nothing after it but white space. Strings are
 * decoded (escapes, \uXXXX with surrogate pairs, to UTF-8) into the
 * caller's field array; an error says what and at which byte.
 * pc_json_parse() also takes objects nested up to `depth` levels (a body
 * such as {"move": {"pan": 5}}): each is a field of type PC_JSON_OBJECT,
 * followed by its members with the keys joined by '.' ("move.pan"); a key
 * holding a '.' itself is refused there ({"move.pan": 5} is not a member
 * of "move").
 */
#ifndef PANOCAP_JSON_H
#define PANOCAP_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PC_JSON_DEPTH 16

typedef struct pc_json {
    char *buf;
    size_t cap, len;
    int overflow;
    int depth;                          /* open objects/arrays */
    unsigned char count[PC_JSON_DEPTH]; /* values so far at each depth (0, 1 = more) */
    int bad_nesting;
} pc_json;

void pc_json_init(pc_json *j, char *buf, size_t cap);
/* 0 when the text is complete and fits; -1 otherwise. */
int pc_json_done(const pc_json *j);

void pc_json_object(pc_json *j, const char *key);
void pc_json_object_end(pc_json *j);
void pc_json_array(pc_json *j, const char *key);
void pc_json_array_end(pc_json *j);
void pc_json_str(pc_json *j, const char *key, const char *v); /* NULL: null */
void pc_json_int(pc_json *j, const char *key, int64_t v);
void pc_json_uint(pc_json *j, const char *key, uint64_t v);
void pc_json_num(pc_json *j, const char *key, double v);      /* %.6g; NaN/inf: null */
void pc_json_fixed(pc_json *j, const char *key, double v, int decimals); /* %.Nf; NaN/inf: null */
void pc_json_bool(pc_json *j, const char *key, int v);
void pc_json_null(pc_json *j, const char *key);

/* ---------------------------------------------------------------- reader */

typedef enum pc_json_type {
    PC_JSON_NULL = 0,
    PC_JSON_FALSE,
    PC_JSON_TRUE,
    PC_JSON_NUMBER,
    PC_JSON_STRING,
    PC_JSON_OBJECT, /* pc_json_parse with depth > 1: its members follow, "key.member" */
} pc_json_type;

#define PC_JSON_KEY_MAX 64
#define PC_JSON_STR_MAX 256

typedef struct pc_json_field {
    char key[PC_JSON_KEY_MAX];
    pc_json_type type;
    double num;                /* PC_JSON_NUMBER */
    char str[PC_JSON_STR_MAX]; /* PC_JSON_STRING (UTF-8; no NUL inside: \u0000 is refused) */
} pc_json_field;

/* Parses text[0..len) (need not be NUL-terminated). Returns the number of
 * members (0 for {}), or -1 with the reason in err ("malformed JSON at
 * byte 12: expected ':' after a key"). */
int pc_json_parse_flat(const char *text, size_t len, pc_json_field *fields, int max, char *err, size_t errlen);
/* The same with objects nested up to depth levels (1: flat). */
int pc_json_parse(const char *text, size_t len, pc_json_field *fields, int max, int depth, char *err, size_t errlen);

/* The field named key, or NULL. */
const pc_json_field *pc_json_field_find(const pc_json_field *fields, int n, const char *key);

#ifdef __cplusplus
}
#endif
#endif
