/* test_config_numbers.c - numbers in the configuration at their full
 * width, whatever libconfig does with them (Debian 12's libconfig 1.5 reads
 * 5000000000 as 705032704 and 2^63 as -1): every integer and number key of
 * the key table at 2^31 - 1, 2^31, 2^32 + 5, 2^63, -1 and -2^31 - 1
 * (which 1.5 wraps to 2^31 - 1), through a file and through --set:
 * stored exactly when in range, else an error naming file, line, key and
 * the value as written. Then the text scanner that reads the values as
 * written against awkward files (comments and strings holding numbers,
 * joined strings, values on later lines, several settings on a line,
 * arrays, @include, hex, L suffixes), unit suffixes ("5G", "64Mi"), the
 * issue's own figures, and arrays of numbers for wb_gains and ccm. */
#include "settings.h"
#include "settings_keys.h"
#include "panocap_config.h"
#include "config_testutil.h"
#include "tap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loads text as file name (no validation: the key checks alone). */
static int load(const char *name, const char *text, pc_settings *s, pc_diag *d)
{
    pc_settings_defaults(s);
    pc_diag_init(d);
    return pc_settings_load(s, write_conf(name, text), d);
}

/* --- every numeric key at the edges of 32 and 64 bits ------------------- */

static const struct {
    const char *text;
    __int128 v;
    int overflow; /* beyond 64 bits */
} values[] = {
    {"2147483647", 2147483647, 0},
    {"2147483648", 2147483648LL, 0},
    {"4294967301", 4294967301LL, 0},
    {"9223372036854775808", 0, 1},
    {"-1", -1, 0},
    {"-2147483649", -2147483649LL, 0},
};
#define NVALUES (int)(sizeof values / sizeof *values)

static int allowed(const pc_key *k, __int128 v)
{
    if ((k->flags & PC_KF_ZERO_AUTO) && v == 0)
        return 1;
    if ((k->flags & PC_KF_NEG_AUTO) && v < 0)
        return 1;
    if ((long double)v < (long double)k->min || (long double)v > (long double)k->max)
        return 0;
    return !(k->flags & PC_KF_EVEN) || v % 2 == 0;
}

static int stored(const pc_key *k, const void *base, __int128 v)
{
    const void *p = pc_key_cfield_(k, base);
    switch (k->type) {
    case PC_KT_INT: return *(const int *)p == v;
    case PC_KT_INT64: return *(const int64_t *)p == v;
    case PC_KT_DOUBLE: return *(const double *)p == (double)v;
    default: return 0;
    }
}

/* Where key k of section S lives in s: the group, or entry 0 of a list. */
static const void *key_base(const pc_section *S, const pc_settings *s)
{
    if (S->kind == PC_SEC_GROUP)
        return (const char *)s + S->off;
    if (S->kind == PC_SEC_CAMERAS)
        return &s->cameras[0];
    return pc_list_centry_(S->list, (const char *)s + S->off, 0);
}

/* One key: through a file and through pc_settings_set (what --set does).
 * preset: k is a key of virtual_cameras[0].presets[0] (files only: the
 * command line does not reach into presets). */
static void check_key(const pc_section *S, const pc_key *k, int preset)
{
    char full[96], text[512], name[64], needle[160];
    if (preset)
        snprintf(full, sizeof full, "virtual_cameras[0].presets[0].%s", k->name);
    else if (S->kind == PC_SEC_GROUP)
        snprintf(full, sizeof full, "%s.%s", S->name, k->name);
    else
        snprintf(full, sizeof full, "%s[0].%s", S->name, k->name);
    int file_bad = 0, set_bad = 0;
    for (int i = 0; i < NVALUES; i++) {
        int ok = !values[i].overflow && allowed(k, values[i].v);
        if (values[i].overflow && k->type != PC_KT_DOUBLE) /* a double key may take it as a double */
            snprintf(needle, sizeof needle, "%s: %s is out of range (too large for any integer)", full,
                     values[i].text);
        else
            snprintf(needle, sizeof needle, "%s: %s is out of range", full, values[i].text);
        if (PANOCAP_HAVE_LIBCONFIG) {
            if (preset) /* the other required keys given, on line 1 */
                snprintf(text, sizeof text, "virtual_cameras = ( { name = \"a\"; presets = ( { name = \"p\";%s%s\n"
                         "  %s = %s; } ); } );\n", strcmp(k->name, "pan") ? " pan = 0.0;" : "",
                         strcmp(k->name, "tilt") ? " tilt = 0.0;" : "", k->name, values[i].text);
            else if (S->kind == PC_SEC_GROUP)
                snprintf(text, sizeof text, "%s = {\n  %s = %s;\n};\n", S->name, k->name, values[i].text);
            else if (S->kind == PC_SEC_CAMERAS)
                snprintf(text, sizeof text, "cameras = (\n  { serial = \"A\"; %s = %s; }\n);\n", k->name,
                         values[i].text);
            else /* the list's first key is its required one (url, name) */
                snprintf(text, sizeof text, "%s = (\n  { %s = \"a.ts\"; %s = %s; }\n);\n", S->name,
                         S->list->keys[0].name, k->name, values[i].text);
            snprintf(name, sizeof name, "n-%s-%d%s.conf", k->name, i, preset ? "-p" : "");
            pc_settings *s = malloc(sizeof *s);
            pc_diag d;
            int rc = load(name, text, s, &d);
            const void *base = preset ? (const void *)&s->vcams[0].presets.item[0] : key_base(S, s);
            char where[96];
            snprintf(where, sizeof where, "%s:2: error: ", name);
            int good = ok ? rc == 0 && stored(k, base, values[i].v)
                          : rc < 0 && d.errors == 1 && find_item(&d, where, needle, NULL);
            if (!good) {
                tap_diag("file: %s = %s: expected %s", full, values[i].text, ok ? "stored exactly" : needle);
                dump(&d);
                file_bad++;
            }
            free(s);
        }
        if (preset)
            continue;
        pc_settings *s = malloc(sizeof *s);
        char err[512] = "";
        pc_settings_defaults(s);
        int rc = pc_settings_set(s, full, values[i].text, err, sizeof err);
        int good = ok ? rc == 0 && stored(k, key_base(S, s), values[i].v) : rc < 0 && strstr(err, needle);
        if (!good) {
            tap_diag("--set %s=%s: expected %s; got: %s", full, values[i].text, ok ? "stored exactly" : needle,
                     rc ? err : "accepted");
            set_bad++;
        }
        free(s);
    }
    if (PANOCAP_HAVE_LIBCONFIG)
        TAP_CHECK(!file_bad, "%s in a file: 2^31-1, 2^31, 2^32+5, 2^63, -1, -2^31-1 each stored exactly or "
                  "refused with file:line:key and the value as written", full);
    if (!preset)
        TAP_CHECK(!set_bad, "%s through --set: the same six values, the same answers", full);
}

static int is_number(const pc_key *k)
{
    return k->type == PC_KT_INT || k->type == PC_KT_INT64 || k->type == PC_KT_DOUBLE;
}

static void test_every_key(void)
{
    int n = 0;
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        for (int i = 0; i < S->nkeys; i++) {
            const pc_key *k = &S->keys[i];
            if (is_number(k)) {
                check_key(S, k, 0);
                n++;
            }
            /* a list inside the entries (presets; outputs are the outputs' keys) */
            if (k->type == PC_KT_GROUPS && k->list == &pc_presets_list_)
                for (int j = 0; j < k->list->nkeys; j++)
                    if (is_number(&k->list->keys[j])) {
                        check_key(S, &k->list->keys[j], 1);
                        n++;
                    }
        }
    }
    /* a 32-bit int key with a 64-bit range would store a truncation */
    int wide = 0;
    for (int si = 0; si < pc_nsections_; si++)
        for (int i = 0; i < pc_sections_[si].nkeys; i++) {
            const pc_key *k = &pc_sections_[si].keys[i];
            if (k->type == PC_KT_INT && (k->max > 2147483647.0 || k->min < -2147483648.0)) {
                tap_diag("%s.%s is an int with the range %g..%g", pc_sections_[si].name, k->name, k->min, k->max);
                wide++;
            }
        }
    TAP_CHECK(n > 30 && !wide, "%d number keys checked; every 32-bit key's range fits 32 bits", n);
}

/* --- the scanner against awkward files ---------------------------------- */

static void test_scanner(void)
{
    pc_settings s;
    pc_diag d;
    write_conf("big-part.conf", "# an included file\ndaemon = { frames = 4294967306; };\n");
    int rc = load("awkward.conf",
                  "# 7 in a comment; and \"a string\" = 9\n"
                  "/* a block comment 11\n   over lines 12; */\n"
                  "outputs = ( { url = \"/tmp/rec\\\"3\\\".ts\" // 13\n"
                  "  \"\"; segment = 60; max_bytes =\n"
                  "    5000000000; min_free = 0x165A0BC00; max_age = 3153600000; },\n"
                  "  { url = \"b.ts\"; segment = 10; max_bytes = 6000000000L; } );\n"
                  "encode = { bitrate = 4000000; gop = 25; preview_bitrate = 3000000; };\n"
                  "@include \"big-part.conf\"\n"
                  "capture = { wb_gains = [2.0, 1.0, 1.5]; ccm = (1.5, -0.25, -0.25, -0.25, 1.5, -0.25, -0.25, "
                  "-0.25, 1.5); packet_size = 9000; };\n",
                  &s, &d);
    TAP_CHECK(rc == 0 && s.outputs[0].max_bytes == 5000000000LL && s.outputs[0].min_free == 6000000000LL &&
                  s.outputs[0].max_age_s == 3153600000LL && s.outputs[1].max_bytes == 6000000000LL &&
                  s.outputs[0].segment_s == 60 && s.outputs[1].segment_s == 10 && s.encode.bitrate == 4000000 &&
                  s.encode.gop == 25 && s.daemon.frames == 4294967306LL && s.cameras[0].packet_size == 9000 &&
                  strcmp(s.outputs[0].url, "/tmp/rec\"3\".ts") == 0,
              "comments and strings holding numbers, a joined string, a value on the next line, hex, L, an "
              "@include: every value as written (max_bytes %" PRId64 ", min_free %" PRId64 ", frames %" PRId64 ")",
              s.outputs[0].max_bytes, s.outputs[0].min_free, s.daemon.frames);
    if (rc)
        dump(&d);
    TAP_CHECK(rc == 0 && strcmp(s.cameras[0].wb_gains, "2.0, 1.0, 1.5") == 0 &&
                  strcmp(s.cameras[4].ccm, "1.5, -0.25, -0.25, -0.25, 1.5, -0.25, -0.25, -0.25, 1.5") == 0,
              "wb_gains = [2.0, 1.0, 1.5] and ccm = ( ... ): an array and a list of numbers, kept as written (\"%s\")",
              s.cameras[0].wb_gains);

    /* wrong types still name the value as written, not libconfig's reading */
    rc = load("algo-int.conf", "debayer = {\n  algo = 5000000000;\n};\n", &s, &d);
    TAP_CHECK(rc < 0 && find_item(&d, "algo-int.conf:2: error: debayer.algo", "got an integer (5000000000)", NULL),
              "an integer for a name: the message shows 5000000000, not 705032704");
    rc = load("wb-str.conf", "cameras = (\n  { serial = \"A\"; wb_gains = (1.0, \"x\", 1.0); }\n);\n", &s, &d);
    TAP_CHECK(rc < 0 && find_item(&d, "wb-str.conf:2: error: cameras[0].wb_gains", "entry 1: expected a number", NULL),
              "a list with a string among the gains: refused naming the entry");
    rc = load("wb-int.conf", "cameras = (\n  { serial = \"A\"; wb_gains = [2, 1, 1]; }\n);\n", &s, &d);
    TAP_CHECK(rc == 0 && strcmp(s.cameras[0].wb_gains, "2, 1, 1") == 0, "wb_gains = [2, 1, 1]: integers too");
    pc_settings_defaults(&s);
    pc_diag_init(&d);
    rc = load("ccm8.conf", "cameras = (\n  { serial = \"A\"; ccm = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]; }\n);\n",
              &s, &d);
    if (rc == 0)
        pc_settings_validate(&s, &d);
    TAP_CHECK(find_item(&d, "ccm8.conf:2: error: cameras[0].ccm", "8 numbers, 9 needed", NULL),
              "an array of 8 numbers for ccm: the matrix check says 8 numbers, 9 needed");

    /* units on sizes, in the file (strings) and on the command line */
    rc = load("units.conf",
              "outputs = ( { url = \"a.ts\"; segment = 60; max_bytes = \"5G\"; min_free = \"2Ti\"; } );\n"
              "capture = { socket_buffer = \"64Mi\"; packet_size = \"9k\"; };\n",
              &s, &d);
    TAP_CHECK(rc == 0 && s.outputs[0].max_bytes == 5000000000LL && s.outputs[0].min_free == 2LL << 40 &&
                  s.cameras[0].socket_buffer == 64 << 20 && s.cameras[0].packet_size == 9000,
              "max_bytes \"5G\", min_free \"2Ti\", socket_buffer \"64Mi\", packet_size \"9k\"");
    char err[512] = "";
    pc_settings_defaults(&s);
    rc = pc_settings_set(&s, "outputs[0].max_bytes", "2.5G", err, sizeof err) ||
         pc_settings_set(&s, "encode.bitrate", "12.5M", err, sizeof err) ||
         pc_settings_set(&s, "daemon.frames", "1e12", err, sizeof err);
    TAP_CHECK(rc == 0 && s.outputs[0].max_bytes == 2500000000LL && s.encode.bitrate == 12500000 &&
                  s.daemon.frames == 1000000000000LL,
              "--set max_bytes=2.5G, bitrate=12.5M, frames=1e12: exact (%s)", rc ? err : "ok");
    rc = pc_settings_set(&s, "daemon.frames", "9007199254740993", err, sizeof err);
    TAP_CHECK(rc == 0 && s.daemon.frames == 9007199254740993LL,
              "--set frames=9007199254740993 (2^53 + 1): exact, no double in between");
    rc = pc_settings_set(&s, "capture.width", "2.5k", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "not a number"), "a suffix on a key without units: refused (%s)", err);
    rc = pc_settings_set(&s, "outputs[0].max_bytes", "1.5", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "fractional"), "a fraction for an integer: refused (%s)", err);
    rc = pc_settings_set(&s, "outputs[0].max_bytes", "99999999999T", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "too large for any integer"), "a unit that overflows: refused (%s)", err);
}

int main(void)
{
    if (config_tmpdir_make("pc-numbers"))
        return 1;
    test_every_key();
    if (PANOCAP_HAVE_LIBCONFIG)
        test_scanner();
    config_tmpdir_remove();
    return tap_done();
}
