/* pipeline_reload.c - configuration reload (SIGHUP or the control
 * socket's "reload"), on the main thread: re-reads the configuration,
 * applies what can change live and hands the rest to the threads that own
 * it (each picture's outputs -> its encoder threads, its bitrate -> its
 * encoders: pipeline_pictures.c; colour, algorithm -> the stage thread's
 * steps, through their reload op). */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ reload */

void pl_reload(pipeline *p)
{
    pc_daemon *d = p->d;
    /* the control clients that asked before the file is read: this
     * reload's outcome is their answer */
    unsigned long long tokens[PL_RELOAD_WAITERS];
    pthread_mutex_lock(&p->reload_lock);
    int ntok = p->nreload;
    memcpy(tokens, p->reload_token, (size_t)ntok * sizeof *tokens);
    p->nreload = 0;
    pthread_mutex_unlock(&p->reload_lock);
    int failed = 1;
    char outcome[1024] = "";
    pc_notify_reloading(d->notify);
    pc_settings *next = malloc(sizeof *next);
    pc_settings_delta *delta = malloc(sizeof *delta);
    pc_diag *diag = malloc(sizeof *diag);
    if (!next || !delta || !diag) {
        pc_log(&d->logger, PC_LOG_ERR, "reload: out of memory");
        snprintf(outcome, sizeof outcome, "reload: out of memory");
        goto out;
    }
    pc_diag_init(diag);
    int rc = pc_cli_reload(d->cli, &d->settings, next, delta, diag);
    char first[900] = "";
    for (int i = 0; i < diag->count; i++) {
        char line[900];
        pc_diag_format(&diag->item[i], line, sizeof line);
        pc_log(&d->logger, diag->item[i].severity == PC_DIAG_ERROR ? PC_LOG_ERR : PC_LOG_WARNING, "%s", line);
        if (!first[0] && diag->item[i].severity == PC_DIAG_ERROR)
            snprintf(first, sizeof first, "%s", line);
    }
    if (rc != PC_EXIT_OK) {
        pc_log(&d->logger, PC_LOG_ERR, "reload: configuration rejected, keeping the running settings");
        int nerr = diag->errors > 0 ? diag->errors : 1;
        snprintf(outcome, sizeof outcome, "reload: configuration rejected, keeping the running settings (%d error%s%s): "
                 "%s", nerr, nerr == 1 ? "" : "s", nerr > 1 ? "; the log has them all" : "",
                 first[0] ? first : "see the log");
        goto out;
    }
    failed = 0;
    if (!delta->changes) {
        pc_log(&d->logger, PC_LOG_NOTICE, "reload: nothing changed");
        snprintf(outcome, sizeof outcome, "nothing changed");
        goto out;
    }
    char desc[2048];
    pc_settings_diff_describe(delta, desc, sizeof desc);
    pc_log(&d->logger, PC_LOG_NOTICE, "reload: %s", desc);
    snprintf(outcome, sizeof outcome, "%.900s%s", desc, strlen(desc) > 900 ? " ..." : "");
    unsigned live = delta->live;
    /* the main picture's outputs and bitrate: what cannot apply is kept
     * out of the settings in force (a later reload compares with them) */
    if (live & PC_LIVE_OUTPUTS) {
        int was_null = !p->picture[0].encoded, now_null = 1;
        for (int i = 0; i < next->output_count; i++)
            now_null &= pl_is_null_url(next->outputs[i].url);
        if (was_null || now_null) {
            pc_log(&d->logger, PC_LOG_WARNING, "reload: switching %s output null needs a restart "
                   "(the running outputs stay)", was_null ? "from" : "to");
            live &= ~PC_LIVE_OUTPUTS;
            memcpy(next->outputs, d->settings.outputs, sizeof next->outputs);
            next->output_count = d->settings.output_count;
        }
    }
    if (live & PC_LIVE_BITRATE) {
        char err[256];
        if (p->picture[0].encoded && pl_picture_set_bitrate(p, &p->picture[0], next->encode.bitrate, err, sizeof err)) {
            pc_log(&d->logger, PC_LOG_WARNING, "reload: bitrate: %s", err);
            next->encode.bitrate = d->settings.encode.bitrate;
        }
    }
    pthread_mutex_lock(&p->settings_lock); /* the control thread may be copying them */
    pc_settings_apply_live(&d->settings, next);
    pthread_mutex_unlock(&p->settings_lock);
    if (live & PC_LIVE_LOG_LEVEL) /* every thread reads it */
        __atomic_store_n(&d->logger.max_level, d->settings.daemon.log_level, __ATOMIC_RELAXED);
    /* every picture: new outputs to its threads (they reopen between
     * frames), a new bitrate to its encoders */
    pl_pictures_reload(p, &d->settings);
    /* the stage thread's steps (colour, algorithm, ...): each builds what
     * it needs here and its run takes it at the start of its next set */
    pl_steps_reload(&p->steps, &d->settings, live, &d->logger);
    pl_vcams_reload_live(p, live); /* the virtual cameras' poses, presets, limits */
    if (delta->restart)
        pc_log(&d->logger, PC_LOG_WARNING, "reload: %d changed setting%s need%s a restart to take effect",
               delta->restart, delta->restart == 1 ? "" : "s", delta->restart == 1 ? "s" : "");
out:
    pc_notify_ready(d->notify, "reloaded");
    for (int i = 0; i < ntok; i++)
        pc_control_done(p->ctl, tokens[i], failed ? -1 : 0, outcome);
    free(next);
    free(delta);
    free(diag);
}
