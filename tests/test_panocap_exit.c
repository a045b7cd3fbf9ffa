/* test_panocap_exit.c - the panocap executable's exit codes and messages:
 * 0 for --help/--list-algos/--check-config of the example, 64 for usage
 * errors, 78 for configuration errors (each error class of the issue, with
 * file:line and key on stderr, both with --check-config and when starting
 * the daemon, then with "<3>" priorities as a service logs them). argv[1]: the panocap binary, argv[2]: the example config. */
#include "panocap_config.h"
#include "tap.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *exe;
static char dir[] = "/tmp/pc-exit-XXXXXX";
static char out[65536], errs[65536];

/* Runs exe with args; stdout/stderr captured; returns the exit code. */
static int run(const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)exe;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    char o[128], e[128];
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(o, "w", stdout) || !freopen(e, "w", stderr))
            _exit(120);
        if (chdir(dir) != 0)
            _exit(121);
        execv(exe, argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    FILE *f = fopen(o, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    f = fopen(e, "r");
    n = f ? fread(errs, 1, sizeof errs - 1, f) : 0;
    errs[n] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *conf(const char *name, const char *text)
{
    static char p[8][160];
    static int k;
    char *path = p[k++ % 8];
    snprintf(path, 160, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return tap_skip_all("usage: test_panocap_exit PANOCAP EXAMPLE");
    exe = argv[1];
    const char *example = argv[2];
    if (!mkdtemp(dir))
        return tap_skip_all("mkdtemp failed");
    unsetenv("NOTIFY_SOCKET");

    int rc = run("--help", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "Usage: panocap"), "--help: 0");
    rc = run("--list-algos", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "homogeneous-edge"), "--list-algos: 0");
    rc = run("--version", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "panocap " PANOCAP_VERSION), "--version: 0");
    rc = run("--help-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "deadline_periods"), "--help-config: 0");
    rc = run("--algo", "nope", NULL);
    TAP_CHECK(rc == 64 && strstr(errs, "--algo nope") && strstr(errs, "Try 'panocap --help'"), "bad --algo: 64");
    rc = run("--frobnicate", NULL);
    TAP_CHECK(rc == 64 && strstr(errs, "--frobnicate"), "unknown option: 64");
    rc = run("--check-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "built-in defaults: OK (5 fake cameras, panorama 2040x5400"),
              "--check-config without a file: the defaults are OK");
    rc = run("--source", "gige", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "needs the cameras list"), "--source gige without cameras: 78");

    if (!PANOCAP_HAVE_LIBCONFIG) {
        rc = run("--config", example, "--check-config", NULL);
        TAP_CHECK(rc == 78 && strstr(errs, "built without libconfig"), "no libconfig: 78 with a clear message");
        return tap_done();
    }
    rc = run("--config", example, "--check-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "OK (5 gige cameras, panorama 2040x5400, algorithm edge, 4 outputs)"),
              "the example config checks OK: %s", out);
    rc = run("--config", example, "--dump-config", NULL);
    const char *dumped = conf("dumped.conf", out);
    int rc2 = run("--config", dumped, "--check-config", NULL);
    TAP_CHECK(rc == 0 && rc2 == 0, "--dump-config output is itself a valid config");

    static const struct {
        const char *name, *text, *needle;
    } cases[] = {
        {"syntax.conf", "capture = {\n  fps = ;\n};\n", "syntax.conf:2: error: syntax error"},
        {"unknown.conf", "debayer = {\n  algo = \"edge\";\n  varient = \"2px\";\n};\n",
         "unknown.conf:3: error: debayer.varient: unknown setting; did you mean \"variant\"?"},
        {"type.conf", "capture = { cameras = \"five\"; };\n",
         "type.conf:1: error: capture.cameras: expected an integer, got a string (\"five\")"},
        {"range.conf", "\nencode = { gop = 0; };\n", "range.conf:2: error: encode.gop: 0 is out of range; allowed: 1..3000"},
        {"enum.conf", "daemon = { log_level = \"chatty\"; };\n",
         "enum.conf:1: error: daemon.log_level: unknown value \"chatty\"; allowed: err, warning, notice, info, debug"},
        {"dup.conf", "capture = { source = \"gige\"; };\ncameras = (\n { address = \"10.0.0.1\"; },\n { address = \"10.0.0.1\"; }\n);\n",
         "dup.conf:4: error: cameras[1] (10.0.0.1): duplicate camera"},
        {"odd.conf", "capture = {\n  height = 1079;\n};\n", "odd.conf:2: error: capture.height: 1079 is odd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p = conf(cases[i].name, cases[i].text);
        rc = run("--config", p, "--check-config", NULL);
        TAP_CHECK(rc == 78 && strstr(errs, cases[i].needle), "%s: exit 78 and \"%s\"", cases[i].name, cases[i].needle);
        if (rc != 78 || !strstr(errs, cases[i].needle))
            tap_diag("stderr: %s", errs);
    }
    /* The same errors when starting the daemon (as systemd does, no
     * --check-config): 78, every error logged with the <3> priority, nothing
     * runs. --frames 1 --output null keeps a wrongly accepted file from
     * running long; the gige case (dup.conf) is left out so that no camera
     * address is ever contacted from here. */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (strstr(cases[i].text, "gige"))
            continue;
        const char *p = conf(cases[i].name, cases[i].text);
        rc = run("--config", p, "--frames", "1", "--output", "null", "--control", "", NULL);
        int ok = rc == 78 && strstr(errs, cases[i].needle) && strstr(errs, "<3>") && strstr(errs, "not starting");
        TAP_CHECK(ok, "starting with %s: exit 78, \"<3>...%s\", not starting", cases[i].name, cases[i].needle);
        if (!ok)
            tap_diag("exit %d, stderr: %s", rc, errs);
    }
    rc = run("--config", "/nonexistent/panocap.conf", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "/nonexistent/panocap.conf: error: cannot open the configuration file: No such file"),
              "missing file: 78");
    const char *bad = conf("run-bad.conf", "capture = { fps = 0.0; };\n");
    rc = run("--config", bad, NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "<3>") && strstr(errs, "run-bad.conf:1: error: capture.fps") &&
                  strstr(errs, "not starting"),
              "starting with a bad config: 78, errors logged with <3>");
    rc = run("--config", example, "--fps", "0", NULL);
    TAP_CHECK(rc == 64, "bad value on the command line with a good file: 64");
    rc = run("--config", example, "--cameras", "3", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "every camera must be listed"), "command line contradicting the file: 78");

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
