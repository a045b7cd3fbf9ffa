/* tool_cli.c - shared command-line handling of the panocap tools (see
 * tool_cli.h): --help, --version, usage errors with exit 64. */
#include "tool_cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "panocap_config.h"

int pc_tool_getopt(const pc_tool *t, int argc, char **argv, const char *shortopts,
                   const struct option *longopts)
{
    char so[128];
    /* a leading ':' makes a missing value ':' (not '?') and silences getopt */
    snprintf(so, sizeof so, ":%s", shortopts ? shortopts : "");
    opterr = 0;
    return getopt_long(argc, argv, so, longopts, NULL);
}

int pc_tool_usage_error(const pc_tool *t, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", t->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", t->name);
    return PC_TOOL_EX_USAGE;
}

/* The option as written: argv[optind - 1] holds it after getopt_long
 * (for "--opt=value" up to the '='); a short option is rebuilt. */
static void option_text(int ch, char **argv, char *buf, size_t n)
{
    const char *a = optind > 0 ? argv[optind - 1] : NULL;
    if (a && a[0] == '-' && a[1] == '-') {
        size_t len = strcspn(a, "=");
        snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), a);
    } else if (optopt > 0 && optopt < 128) {
        snprintf(buf, n, "-%c", optopt);
    } else {
        snprintf(buf, n, "%s", a ? a : "?");
    }
}

int pc_tool_std_option(const pc_tool *t, int ch, char **argv)
{
    char opt[128];
    switch (ch) {
    case PC_TOOL_OPT_HELP:
        t->usage(stdout);
        return 0;
    case PC_TOOL_OPT_VERSION:
        printf("%s (panocap) %s\n", t->name, PANOCAP_VERSION);
        return 0;
    case ':':
        option_text(ch, argv, opt, sizeof opt);
        return pc_tool_usage_error(t, "option %s needs a value", opt);
    case '?':
        option_text(ch, argv, opt, sizeof opt);
        if (optopt && opt[0] == '-' && opt[1] == '-' && strchr(optind > 0 ? argv[optind - 1] : "", '='))
            return pc_tool_usage_error(t, "option %s takes no value", opt);
        return pc_tool_usage_error(t, "unknown option %s", opt);
    default:
        return pc_tool_usage_error(t, "unhandled option (%d)", ch);
    }
}

int pc_tool_int(const pc_tool *t, const char *opt, const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno)
        return pc_tool_usage_error(t, "%s: '%s' is not a whole number", opt, v);
    if (x < lo || x > hi)
        return pc_tool_usage_error(t, "%s: %lld is out of range [%lld, %lld]", opt, x, lo, hi);
    *out = x;
    return 0;
}

int pc_tool_double(const pc_tool *t, const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x))
        return pc_tool_usage_error(t, "%s: '%s' is not a number", opt, v);
    if (x < lo || x > hi)
        return pc_tool_usage_error(t, "%s: %g is out of range [%g, %g]", opt, x, lo, hi);
    *out = x;
    return 0;
}

int pc_tool_no_operands(const pc_tool *t, int argc, char **argv)
{
    if (optind < argc)
        return pc_tool_usage_error(t, "unexpected argument '%s'", argv[optind]);
    return 0;
}
