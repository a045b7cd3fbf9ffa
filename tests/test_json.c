/* test_json.c - common/json.c: the writer's text parsed back by Python's
 * json module (an independent reader) where Debian's python3 exists, its
 * escaping, overflow and nesting errors; the flat-object reader on valid
 * bodies (escapes, surrogate pairs, numbers) and on each kind of malformed
 * one, each refused with the byte it stopped at. */
#include "json.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void writer(void)
{
    char buf[1024];
    pc_json j;
    pc_json_init(&j, buf, sizeof buf);
    pc_json_object(&j, NULL);
    pc_json_str(&j, "s", "a\"b\\c\n\t\x01 é");
    pc_json_int(&j, "i", -42);
    pc_json_uint(&j, "u", 18446744073709551615ull);
    pc_json_num(&j, "x", 0.25);
    pc_json_num(&j, "nan", NAN);
    pc_json_fixed(&j, "f", 3.14159, 2);
    pc_json_bool(&j, "t", 1);
    pc_json_null(&j, "n");
    pc_json_str(&j, "none", NULL);
    pc_json_array(&j, "a");
    pc_json_int(&j, NULL, 1);
    pc_json_object(&j, NULL);
    pc_json_object_end(&j);
    pc_json_array(&j, NULL);
    pc_json_array_end(&j);
    pc_json_array_end(&j);
    pc_json_object_end(&j);
    const char *want = "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001 é\",\"i\":-42,\"u\":18446744073709551615,\"x\":0.25,"
                       "\"nan\":null,\"f\":3.14,\"t\":true,\"n\":null,\"none\":null,\"a\":[1,{},[]]}";
    TAP_CHECK(pc_json_done(&j) == 0 && strcmp(buf, want) == 0, "writer: commas, escapes, NaN as null: %s", buf);

    const char *py = "/usr/bin/python3";
    if (access(py, X_OK) == 0) {
        char path[] = "/tmp/pc-json-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f) {
            fputs(buf, f);
            fclose(f);
            char cmd[512];
            snprintf(cmd, sizeof cmd, "%s -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                     "sys.exit(0 if d[\"s\"]==\"a\\\"b\\\\c\\n\\t\\x01 \\u00e9\" and d[\"u\"]==2**64-1 and "
                     "d[\"nan\"] is None else 1)' %s", py, path);
            int rc = system(cmd);
            TAP_CHECK(rc == 0, "Python's json module reads the writer's text back to the same values");
            unlink(path);
        }
    } else {
        tap_skip("no /usr/bin/python3");
    }

    char small[16];
    pc_json_init(&j, small, sizeof small);
    pc_json_object(&j, NULL);
    pc_json_str(&j, "key", "a value that does not fit");
    pc_json_object_end(&j);
    TAP_CHECK(pc_json_done(&j) == -1 && j.overflow && strlen(small) < sizeof small,
              "writer: overflow is reported, the buffer stays terminated (%s)", small);
    pc_json_init(&j, buf, sizeof buf);
    pc_json_object(&j, NULL);
    TAP_CHECK(pc_json_done(&j) == -1, "writer: an object left open is an error");
    pc_json_object_end(&j);
    pc_json_object_end(&j);
    TAP_CHECK(pc_json_done(&j) == -1, "writer: one close too many is an error");
}

static void reader(void)
{
    pc_json_field f[8];
    char err[256] = "";
    const char *ok = " {\"algo\" : \"edge\", \"variant\":\"4px\",\"n\":-1.5e2,\"t\":true,\"f\":false,\"z\":null,"
                     "\"u\":\"\\u00e9\\ud83d\\ude00\\/\\n\"} \n";
    int n = pc_json_parse_flat(ok, strlen(ok), f, 8, err, sizeof err);
    const pc_json_field *a = pc_json_field_find(f, n, "algo"), *num = pc_json_field_find(f, n, "n"),
                        *u = pc_json_field_find(f, n, "u");
    TAP_CHECK(n == 7 && a && a->type == PC_JSON_STRING && !strcmp(a->str, "edge") && num && num->num == -150 &&
                  pc_json_field_find(f, n, "t")->type == PC_JSON_TRUE &&
                  pc_json_field_find(f, n, "f")->type == PC_JSON_FALSE &&
                  pc_json_field_find(f, n, "z")->type == PC_JSON_NULL && u &&
                  !strcmp(u->str, "\xc3\xa9\xf0\x9f\x98\x80/\n") && !pc_json_field_find(f, n, "nope"),
              "reader: strings, escapes, a surrogate pair, numbers, true/false/null (%d members%s%s)", n,
              n < 0 ? ": " : "", n < 0 ? err : "");
    TAP_CHECK(pc_json_parse_flat("{}", 2, f, 8, err, sizeof err) == 0, "reader: {} has no members");
    /* not NUL-terminated: only len bytes are read */
    const char cut[] = {'{', '}', 'x'};
    TAP_CHECK(pc_json_parse_flat(cut, 2, f, 8, err, sizeof err) == 0, "reader: reads only len bytes");

    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"", "the body is empty"},
        {"[1]", "byte 0: expected '{'"},
        {"{\"a\":1", "text ends too early: expected ',' or '}'"},
        {"{\"a\" 1}", "byte 5: expected ':'"},
        {"{a:1}", "byte 1: expected a key"},
        {"{\"a\":1,}", "byte 7: expected a key"},
        {"{\"a\":01}", "byte 6: expected ',' or '}'"},
        {"{\"a\":1.}", "digit must follow the decimal point"},
        {"{\"a\":1e}", "digit must follow the exponent"},
        {"{\"a\":tru}", "expected a value"},
        {"{\"a\":{\"b\":1}}", "nested objects and arrays"},
        {"{\"a\":[1]}", "nested objects and arrays"},
        {"{\"a\":\"x\ny\"}", "control character"},
        {"{\"a\":\"\\q\"}", "unknown escape"},
        {"{\"a\":\"\\u12\"}", "four hex digits"},
        {"{\"a\":\"\\ud800\"}", "high surrogate"},
        {"{\"a\":\"\\udc00\"}", "low surrogate alone"},
        {"{\"a\":\"\\u0000\"}", "\\u0000"},
        {"{\"a\":\"\xff\"}", "not valid UTF-8"},
        {"{\"a\":\"\xc0\xaf\"}", "not valid UTF-8"},
        {"{\"a\":1,\"a\":2}", "appears twice"},
        {"{\"a\":1} x", "text after the object"},
        {"{\"a\":1e999}", "out of range"},
        {"{\"a\":\"unterminated", "not closed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int r = pc_json_parse_flat(bad[i].text, strlen(bad[i].text), f, 8, err, sizeof err);
        TAP_CHECK(r == -1 && strstr(err, bad[i].needle), "reader refuses %s: %s", bad[i].text, err);
    }
    char big[600];
    snprintf(big, sizeof big, "{\"a\":\"%0400d\"}", 0);
    TAP_CHECK(pc_json_parse_flat(big, strlen(big), f, 8, err, sizeof err) == -1 && strstr(err, "longer than 255"),
              "reader: a string value past 255 bytes is refused: %s", err);
    TAP_CHECK(pc_json_parse_flat("{\"a\":1,\"b\":2,\"c\":3}", 19, f, 2, err, sizeof err) == -1 &&
                  strstr(err, "more than 2 members"),
              "reader: more members than the caller takes: %s", err);
}

/* pc_json_parse with nesting: {"move": {...}} as "move", "move.pan", ... */
static void nested(void)
{
    pc_json_field f[8];
    char err[256];
    const char *t = "{\"move\": {\"pan\": 5, \"tilt\": -2.5}, \"speed\": 10}";
    int n = pc_json_parse(t, strlen(t), f, 8, 2, err, sizeof err);
    TAP_CHECK(n == 4 && pc_json_field_find(f, n, "move")->type == PC_JSON_OBJECT &&
                  pc_json_field_find(f, n, "move.pan")->num == 5 && pc_json_field_find(f, n, "move.tilt")->num == -2.5 &&
                  pc_json_field_find(f, n, "speed")->num == 10 && !pc_json_field_find(f, n, "pan"),
              "nested reader: the object, then its members as move.pan, move.tilt (%d fields%s%s)", n,
              n < 0 ? ": " : "", n < 0 ? err : "");
    const char *t3 = "{\"move\": {\"in\": {}, \"pan\": 1}}";
    err[0] = '\0';
    TAP_CHECK(pc_json_parse(t3, strlen(t3), f, 8, 3, err, sizeof err) == 3 &&
                  pc_json_field_find(f, 3, "move.in")->type == PC_JSON_OBJECT &&
                  pc_json_field_find(f, 3, "move.pan")->num == 1,
              "depth 3: an empty object inside is a field too");
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"{\"a\":{\"b\":{\"c\":1}}}", "byte 10: nested objects and arrays"},
        {"{\"a\":{\"b\":[1]}}", "byte 10: nested objects and arrays"},
        {"{\"a\":[1]}", "byte 5: arrays are not accepted"},
        {"{\"a\":{\"b\":1,\"b\":2}}", "the key \"a.b\" appears twice"},
        {"{\"a\":{\"b\":1},\"a.b\":2}", "the key \"a.b\" appears twice"},
        {"{\"a\":{\"b\":1}", "text ends too early"},
        {"{\"a\":{\"b\":1,\"c\":2,\"d\":3}}", "more than 3 members"},
        /* a key of its own with a '.' passed for a member ("move.speed") */
        {"{\"move.speed\": 5, \"move\": {\"pan\": 1}}", "the key \"move.speed\" holds a '.': members of an object "
                                                      "are written nested ({\"move\": {\"speed\": ...}})"},
        {"{\"move\": {\"pan.x\": 1}}", "the key \"move.pan.x\" holds a '.'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int r = pc_json_parse(bad[i].text, strlen(bad[i].text), f, i == 6 ? 3 : 8, 2, err, sizeof err);
        TAP_CHECK(r == -1 && strstr(err, bad[i].needle), "nested reader refuses %s: %s", bad[i].text, err);
    }
    char key[200];
    snprintf(key, sizeof key, "{\"%060d\":{\"abcdef\":1}}", 0);
    TAP_CHECK(pc_json_parse(key, strlen(key), f, 8, 2, err, sizeof err) == -1 && strstr(err, "longer than 63 bytes"),
              "nested reader: a joined key past 63 bytes: %.80s", err);
}

int main(void)
{
    writer();
    reader();
    nested();
    return tap_done();
}
