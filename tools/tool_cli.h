/* tool_cli.h - the command-line conventions every panocap tool shares:
 * getopt_long with --help (exit 0), --version (the project's version, as
 * `panocap --version` prints it) and usage errors that name the option and
 * exit 64 (EX_USAGE); numeric option values are checked, not atoi'd.
 *
 * Use: append PC_TOOL_STD_OPTIONS to the long-option table, call
 * pc_tool_getopt() in the loop, pass characters the tool does not handle
 * to pc_tool_std_option(), and report bad values with pc_tool_usage_error().
 */
#ifndef PANOCAP_TOOL_CLI_H
#define PANOCAP_TOOL_CLI_H

#include <getopt.h>
#include <stdio.h>

#define PC_TOOL_EX_USAGE 64

enum { PC_TOOL_OPT_HELP = 0x7001, PC_TOOL_OPT_VERSION = 0x7002 };
#define PC_TOOL_STD_OPTIONS                                                                        \
    {"help", no_argument, NULL, PC_TOOL_OPT_HELP}, {"version", no_argument, NULL, PC_TOOL_OPT_VERSION}

typedef struct pc_tool {
    const char *name;            /* program name in messages */
    void (*usage)(FILE *f);      /* the tool's usage text */
} pc_tool;

/* getopt_long without getopt's own messages (the tool prints its own,
 * naming the option); returns what getopt_long returns. */
int pc_tool_getopt(const pc_tool *t, int argc, char **argv, const char *shortopts,
                   const struct option *longopts);

/* For an option character the tool's switch did not handle: --help prints
 * the usage on stdout (returns 0), --version the version (0), anything
 * else is a usage error naming the option (returns 64). */
int pc_tool_std_option(const pc_tool *t, int ch, char **argv);

/* "NAME: MESSAGE", a hint to --help, on stderr; returns 64. */
int pc_tool_usage_error(const pc_tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict numbers: the whole of V must be a number in [lo, hi]; otherwise
 * a usage error naming OPT; returns 0 or 64. */
int pc_tool_int(const pc_tool *t, const char *opt, const char *v, long long lo, long long hi, long long *out);
int pc_tool_double(const pc_tool *t, const char *opt, const char *v, double lo, double hi, double *out);

/* Refuses operands for a tool that takes none: 0 or 64. */
int pc_tool_no_operands(const pc_tool *t, int argc, char **argv);

#endif
