/* cli.h - panocap's command line: parsed with getopt_long into an action
 * and a list of overrides that are applied on top of the configuration
 * file (the command line wins). The option table in cli.c is the single
 * source of the parser, --help and the overrides.
 *
 * Exit codes (settings.h): 0 ok, 1 runtime failure, 64 usage error (bad
 * option or option value), 78 configuration error.
 */
#ifndef PANOCAP_CLI_H
#define PANOCAP_CLI_H

#include "settings.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pc_action {
    PC_ACTION_RUN = 0,
    PC_ACTION_HELP,
    PC_ACTION_VERSION,
    PC_ACTION_LIST_ALGOS,
    PC_ACTION_LIST_CAMERAS,
    PC_ACTION_CHECK_CONFIG,
    PC_ACTION_DUMP_CONFIG,
    PC_ACTION_HELP_CONFIG,
} pc_action;

#define PC_CLI_MAX_SETS 64

/* One override "key = value", in command-line order. */
typedef struct pc_cli_set {
    char option[32];         /* the option that gave it, e.g. "--fps" */
    char key[96];            /* settings key, e.g. "capture.fps" */
    char value[PC_URL_LEN];
} pc_cli_set;

typedef struct pc_cli {
    pc_action action;
    char config[PC_PATH_LEN]; /* --config FILE, "" if not given */
    int nsets;
    pc_cli_set set[PC_CLI_MAX_SETS];
    int noutputs;             /* --output given: replaces the file's outputs */
    char outputs[PC_MAX_OUTPUTS][PC_URL_LEN];
    int image_given;          /* --image: capture.image, per-camera images cleared */
    char image[PC_PATH_LEN];
} pc_cli;

/* Parses argv. Returns 0, or PC_EXIT_USAGE with a message in err naming
 * the option (unknown option, missing or bad value, conflicting actions,
 * stray argument). Values are checked against the settings key table. */
int pc_cli_parse(pc_cli *cli, int argc, char **argv, char *err, size_t errlen);

/* The configuration file to read: --config, else the default
 * (PANOCAP_SYSCONFDIR/panocap/panocap.conf) when it exists, else NULL
 * (embedded defaults). */
const char *pc_cli_config_path(const pc_cli *cli);
const char *pc_cli_default_config_path(void);

/* Applies the overrides to s (then pc_settings_finish). 0 or -1 + diag. */
int pc_cli_apply(const pc_cli *cli, pc_settings *s, pc_diag *diag);

/* Everything at start-up: defaults, the file (if any), the overrides,
 * the rig file's digest (pc_settings_stamp_rig), validation. Returns PC_EXIT_OK, or PC_EXIT_CONFIG with every problem in
 * diag (warnings are in diag either way). */
int pc_cli_load_settings(const pc_cli *cli, pc_settings *s, pc_diag *diag);

/* SIGHUP: the same file and overrides again, and the rig they name
 * (pc_settings_check_rig: a .pto that does not read or fit is refused). On
 * PC_EXIT_OK `next` holds the new validated settings and delta what
 * changed relative to `cur` (a rewritten .pto at the same path too)
 * (live bits and restart count); apply the live part with
 * pc_settings_apply_live(cur, next). On PC_EXIT_CONFIG the caller keeps
 * `cur` and logs diag. */
int pc_cli_reload(const pc_cli *cli, const pc_settings *cur, pc_settings *next, pc_settings_delta *delta,
                  pc_diag *diag);

/* --help, --version, --list-algos output. */
void pc_cli_usage(FILE *f);
void pc_cli_version(FILE *f);
void pc_cli_list_algos(FILE *f);

/* The option table as roff (the OPTIONS of panocap(8)), and option i's
 * short letter (0: none), argument name (NULL: none) and the settings key
 * it sets (NULL: none), for shell completion; -1 past the end.
 * Used by tools/panocap-man. */
void pc_cli_write_man(FILE *f);
int pc_cli_option_info(int i, int *shortc, const char **arg, const char **key);
/* Long option names of the table, for tests and completion. */
int pc_cli_option_count(void);
const char *pc_cli_option_name(int i);

#ifdef __cplusplus
}
#endif
#endif
