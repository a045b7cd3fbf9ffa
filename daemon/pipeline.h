/* pipeline.h - the seam between main.c (command line, configuration,
 * process plumbing, exit codes) and the pipeline: capture -> debayer ->
 * encode -> outputs, wired in pipeline.c.
 *
 * main.c has already: parsed the command line, loaded and validated the
 * settings (exit 78 on errors), opened the signal fd (before any thread),
 * the systemd notifier and the logger. The pipeline owns everything else:
 * threads, pc_stats, the control socket (pc_control_start with callbacks
 * into the pipeline), READY=1 once cameras, GPU and outputs are up,
 * status lines, reloads on PC_SIG_RELOAD (pc_cli_reload + pc_settings_diff,
 * RELOADING=1 ... READY=1), the drain on PC_SIG_STOP and the final summary.
 */
#ifndef PANOCAP_PIPELINE_H
#define PANOCAP_PIPELINE_H

#include "cli.h"
#include "log.h"
#include "notify.h"
#include "settings.h"
#include "signals.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_daemon {
    const pc_cli *cli;    /* the command line, re-applied on reload */
    pc_settings settings; /* validated settings in force (replace on reload) */
    pc_logger logger;     /* max_level follows settings.daemon.log_level */
    pc_signals *signals;  /* stop / reload events */
    pc_notify *notify;    /* systemd notifications; inert outside systemd */
    int stderr_tty;       /* 1: status line updated in place with \r */
} pc_daemon;

/* Runs until stopped (signal, --frames, --duration). Returns the exit code:
 * PC_EXIT_OK after a clean stop, PC_EXIT_RUNTIME on failure. */
int pc_run_pipeline(pc_daemon *d);

/* --list-cameras: Aravis discovery (id, model, serial, IP, pixel
 * formats) on stdout. Returns an exit code. */
int pc_list_cameras(pc_daemon *d);

#ifdef __cplusplus
}
#endif
#endif
