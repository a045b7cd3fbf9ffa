/* main.c - panocap's entry point: the command line's actions (--help,
 * --version, --list-algos, --help-config, --check-config, --dump-config,
 * --list-cameras), configuration loading with the exit codes systemd relies
 * on (64 usage, 78 configuration, 1 runtime), and the process plumbing the
 * pipeline needs (signals before any thread, systemd notifier, logger).
 * The pipeline itself is pc_run_pipeline (pipeline.h). */
#include "check.h"
#include "settings_rig.h"
#include "cli.h"
#include "debayer.h"
#include "errmsg.h"
#include "notify.h"
#include "panocap_config.h"
#include "pipeline.h"
#include "settings.h"
#include "signals.h"
#include "stderr_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* On a terminal: readable lines that first clear a \r status line. Not on
 * a terminal (journald): the default "<N>line" with the syslog priority. */
static void tty_sink(void *user, int level, const char *line)
{
    (void)user;
    const char *tag = level <= PC_LOG_ERR ? "error: " : level == PC_LOG_WARNING ? "warning: " : "";
    fprintf(stderr, "\r\033[Kpanocap: %s%s\n", tag, line);
}

static void print_diag(const pc_diag *d, const pc_logger *lg, int plain)
{
    char line[PC_PATH_LEN + 1024];
    for (int i = 0; i < d->count; i++) {
        pc_diag_format(&d->item[i], line, sizeof line);
        if (plain)
            fprintf(stderr, "%s\n", line);
        else
            pc_log(lg, d->item[i].severity == PC_DIAG_ERROR ? PC_LOG_ERR : PC_LOG_WARNING, "%s", line);
    }
    if (d->lost) {
        if (plain)
            fprintf(stderr, "(%d more not shown)\n", d->lost);
        else
            pc_log(lg, PC_LOG_ERR, "(%d more not shown)", d->lost);
    }
}

/* Everything but the allocation of the three big structs (one exit path
 * in main frees them). */
static int panocap_main(int argc, char **argv, pc_cli *cli, pc_diag *diag, pc_daemon *d)
{
    char err[1024];
    int rc = pc_cli_parse(cli, argc, argv, err, sizeof err);
    if (rc != 0) {
        pc_escape_ctl_inplace(err, sizeof err); /* it may quote an argument */
        fprintf(stderr, "panocap: %s\nTry 'panocap --help'.\n", err);
        return rc;
    }
    switch (cli->action) {
    case PC_ACTION_HELP: pc_cli_usage(stdout); return PC_EXIT_OK;
    case PC_ACTION_VERSION: pc_cli_version(stdout); return PC_EXIT_OK;
    case PC_ACTION_LIST_ALGOS: pc_cli_list_algos(stdout); return PC_EXIT_OK;
    case PC_ACTION_HELP_CONFIG: pc_settings_print_reference(stdout); return PC_EXIT_OK;
    default: break;
    }

    d->cli = cli;
    d->stderr_tty = isatty(STDERR_FILENO);
    d->logger.sink = d->stderr_tty ? tty_sink : NULL;
    pc_diag_init(diag);
    rc = pc_cli_load_settings(cli, &d->settings, diag);
    const char *path = pc_cli_config_path(cli);
    /* one validation: what the run would refuse, --check-config refuses */
    if (rc == PC_EXIT_OK && (cli->action == PC_ACTION_CHECK_CONFIG || cli->action == PC_ACTION_RUN ||
                             cli->action == PC_ACTION_DUMP_CONFIG) &&
        pc_check_modules(&d->settings, diag) > 0)
        rc = PC_EXIT_CONFIG;

    switch (cli->action) {
    case PC_ACTION_CHECK_CONFIG:
        print_diag(diag, &d->logger, 1);
        if (rc == PC_EXIT_OK) {
            /* the picture the main outputs get: the stitched panorama at
             * the size the rig and the encoder give, or the stacked cameras */
            const pc_settings *st = &d->settings;
            int pw = pc_settings_panorama_width(st), ph = pc_settings_panorama_height(st);
            char what[PC_PATH_LEN + 64] = "", why[256];
            pc_rig_setup *rs = pc_settings_stitching(st) ? calloc(1, sizeof *rs) : NULL;
            pc_diag *quiet = rs ? calloc(1, sizeof *quiet) : NULL;
            if (rs && quiet) {
                pc_diag_init(quiet);
                if (pc_settings_check_rig(st, rs, quiet) == 0 && rs->have_rig &&
                    pc_settings_panorama_size(st, &rs->rig, -1, &pw, &ph, why, sizeof why) >= 0)
                    snprintf(what, sizeof what, " stitched from %s", st->panorama.rig);
            }
            free(rs);
            free(quiet);
            /* "panorama WxH stitched from FILE", or the cameras' picture as
             * the layout makes it when nothing is stitched */
            printf("%s: OK (%d %s camera%s, %s %dx%d%s, algorithm %s, %d output%s", path ? path : "built-in defaults",
                   st->capture.cameras, pc_source_name((pc_source)st->capture.source), st->capture.cameras > 1 ? "s" : "",
                   what[0] ? "panorama" : "unstitched", pw, ph, what, pc_algo_get((pc_algo_id)st->debayer.algo)->name,
                   st->output_count, st->output_count != 1 ? "s" : "");
            for (int v = 0; v < st->vcam_count; v++) /* ", virtual camera: main 1280x720 follow" */
                printf("%s%s %dx%d %s", v ? ", " : st->vcam_count > 1 ? ", virtual cameras: " : ", virtual camera: ",
                       st->vcams[v].name, st->vcams[v].width, st->vcams[v].height,
                       pc_vcam_mode_name((pc_vcam_mode)st->vcams[v].mode));
            printf(")\n");
        }
        else
            fprintf(stderr, "%s: %d error%s\n", path ? path : "command line", diag->errors,
                    diag->errors != 1 ? "s" : "");
        return rc;
    case PC_ACTION_DUMP_CONFIG:
        print_diag(diag, &d->logger, 1);
        if (rc != PC_EXIT_OK)
            return rc;
        return pc_settings_write(&d->settings, stdout) == 0 ? PC_EXIT_OK : PC_EXIT_RUNTIME;
    case PC_ACTION_LIST_CAMERAS:
        /* Discovery helps to write the configuration: a broken one must
         * not prevent it. */
        if (rc != PC_EXIT_OK) {
            print_diag(diag, &d->logger, 1);
            pc_settings_defaults(&d->settings);
        }
        return pc_list_cameras(d);
    default: break;
    }

    /* PC_ACTION_RUN */
    print_diag(diag, &d->logger, 0);
    if (rc != PC_EXIT_OK) {
        pc_log(&d->logger, PC_LOG_ERR, "configuration %s: %d error%s; not starting", path ? path : "(command line)",
               diag->errors, diag->errors != 1 ? "s" : "");
        return rc;
    }
    d->logger.max_level = d->settings.daemon.log_level;

    /* Before any thread exists, so every thread inherits the mask. */
    if (pc_signals_open(&d->signals, err, sizeof err) != 0) {
        pc_log(&d->logger, PC_LOG_ERR, "%s", err);
        return PC_EXIT_RUNTIME;
    }
    if (pc_notify_open(&d->notify, err, sizeof err) != 0) {
        pc_log(&d->logger, PC_LOG_ERR, "%s", err);
        pc_signals_close(d->signals);
        return PC_EXIT_RUNTIME;
    }
    /* Under systemd: libraries' own stderr lines get a priority prefix
     * and a rate limit (stderr_guard.h); panocap's lines go straight out. */
    pc_stderr_guard *guard = NULL;
    if (!d->stderr_tty) {
        if (pc_stderr_guard_start(&guard, err, sizeof err) == 0) {
            d->logger.sink = pc_stderr_guard_sink;
            d->logger.user = guard;
        } else {
            pc_log(&d->logger, PC_LOG_WARNING, "%s", err);
        }
    }
    pc_log(&d->logger, PC_LOG_INFO, "panocap %s starting: configuration %s", PANOCAP_VERSION,
           path ? path : "built-in defaults");

    /* ---- the pipeline (pipeline.h): capture -> debayer -> encode ---- */
    rc = pc_run_pipeline(d);
    if (guard) {
        d->logger.sink = NULL;
        d->logger.user = NULL;
        pc_stderr_guard_stop(guard);
    }

    pc_notify_close(d->notify);
    pc_signals_close(d->signals);
    return rc;
}

int main(int argc, char **argv)
{
    pc_cli *cli = calloc(1, sizeof *cli);
    pc_diag *diag = calloc(1, sizeof *diag);
    pc_daemon *d = calloc(1, sizeof *d);
    int rc = PC_EXIT_RUNTIME;
    if (cli && diag && d)
        rc = panocap_main(argc, argv, cli, diag, d);
    else
        fprintf(stderr, "panocap: out of memory\n");
    free(d);
    free(diag);
    free(cli);
    return rc;
}
