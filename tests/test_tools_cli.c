/* test_tools_cli.c - the command-line conventions of the eight tools
 * (panocap-bench, panocap-quality, panocap-encode-bench,
 * panocap-capture-bench, panocap-calibrate, panocap-scene, panocap-eval,
 * panocap-reframe;
 * tools/tool_cli.h): --help exits 0 with the usage
 * on stdout, --version exits 0 with the same version as `panocap
 * --version`, and usage errors (unknown option, missing value, bad value,
 * stray operand) exit 64 with a message naming the option.
 * argv[1]: the panocap binary; argv[2..]: the tools (a tool built without
 * its feature is passed as "-" and skipped). */
#include "run_testutil.h"
#include "tap.h"

#include <string.h>

/* Per tool: an option that needs a value, and a value it refuses. */
typedef struct tool_case {
    const char *name, *value_opt, *bad_value;
} tool_case;

static const tool_case cases[] = {
    {"panocap-bench", "--iters", "many"},
    {"panocap-quality", "--threads", "-3"},
    {"panocap-encode-bench", "--frames", "12x"},
    {"panocap-capture-bench", "--seconds", "soon"},
    {"panocap-calibrate", "--hfov", "wide"},
    {"panocap-scene", "--time", "noon"},
    {"panocap-eval", "--scale", "half"},
    {"panocap-reframe", "--hfov", "wide"},
};

static rt_result r;

static int run(const char *exe, const char *a, const char *b)
{
    char *argv[] = {(char *)exe, (char *)a, (char *)b, NULL};
    return rt_run(&r, argv);
}

int main(int argc, char **argv)
{
    if (argc < 2 + (int)(sizeof cases / sizeof *cases)) {
        fprintf(stderr, "usage: test_tools_cli PANOCAP TOOL...\n");
        return 2;
    }
    /* the version panocap itself reports: "panocap X.Y.Z" on its first line */
    char version[64] = "";
    run(argv[1], "--version", NULL);
    TAP_CHECK(r.status == 0 && sscanf(r.out, "panocap %63s", version) == 1, "panocap --version: %s", version);

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tool_case *t = &cases[i];
        const char *exe = argv[2 + i];
        if (!strcmp(exe, "-")) {
            char why[128];
            snprintf(why, sizeof why, "%s is not built in this configuration", t->name);
            tap_skip(why);
            continue;
        }
        char want[160];
        run(exe, "--help", NULL);
        TAP_CHECK(r.status == 0 && strstr(r.out, "usage:") && strstr(r.out, "--version") && !r.err[0],
                  "%s --help: exit %d, usage on stdout", t->name, r.status);

        run(exe, "--version", NULL);
        snprintf(want, sizeof want, "%s (panocap) %s\n", t->name, version);
        TAP_CHECK(r.status == 0 && version[0] && !strcmp(r.out, want), "%s --version: exit %d, '%.*s'", t->name,
                  r.status, (int)strcspn(r.out, "\n"), r.out);

        run(exe, "--bogus", NULL);
        TAP_CHECK(r.status == 64 && strstr(r.err, "unknown option --bogus") && !strstr(r.err, "needs a value"),
                  "%s --bogus: exit %d, '%.*s'", t->name, r.status, (int)strcspn(r.err, "\n"), r.err);

        run(exe, t->value_opt, NULL);
        snprintf(want, sizeof want, "option %s needs a value", t->value_opt);
        TAP_CHECK(r.status == 64 && strstr(r.err, want), "%s %s (no value): exit %d, '%.*s'", t->name,
                  t->value_opt, r.status, (int)strcspn(r.err, "\n"), r.err);

        run(exe, t->value_opt, t->bad_value);
        snprintf(want, sizeof want, "%s: ", t->value_opt);
        TAP_CHECK(r.status == 64 && strstr(r.err, want) && strstr(r.err, t->bad_value),
                  "%s %s %s: exit %d, '%.*s'", t->name, t->value_opt, t->bad_value, r.status,
                  (int)strcspn(r.err, "\n"), r.err);

        run(exe, "--help=yes", NULL);
        TAP_CHECK(r.status == 64 && strstr(r.err, "option --help takes no value"), "%s --help=yes: exit %d",
                  t->name, r.status);

        /* panocap-quality and panocap-calibrate take images as operands;
         * the others take none */
        if (!strcmp(t->name, "panocap-calibrate")) {
            run(exe, NULL, NULL);
            TAP_CHECK(r.status == 64 && strstr(r.err, "no frame set given"), "%s without a frame set: exit %d",
                      t->name, r.status);
        } else if (strcmp(t->name, "panocap-quality")) {
            run(exe, "stray", NULL);
            TAP_CHECK(r.status == 64 && strstr(r.err, "unexpected argument 'stray'"), "%s stray: exit %d",
                      t->name, r.status);
        } else {
            run(exe, NULL, NULL);
            TAP_CHECK(r.status == 64 && strstr(r.err, "no image given"), "%s without images: exit %d", t->name,
                      r.status);
        }
    }
    return tap_done();
}
