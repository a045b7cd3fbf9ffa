/* step_raw_record.c - the raw-record step (daemon.record_raw,
 * --record-raw FILE): every frame set as it came from capture, written
 * to a .pcraw file that the file source replays. Absent from the list
 * when no file is set (restart-only). A write error stops the recording,
 * once, with a log line; the stream goes on. The writer is the stage
 * thread's from start to teardown. */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct step_raw_record {
    const pl_step_env *env;
    char path[PC_PATH_LEN];
    pc_raw_writer *w; /* NULL once a write failed */
    int stopped;      /* stage thread: a write failed */
} step_raw_record;

static int raw_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    if (!env->s->daemon.record_raw[0])
        return PL_STEP_ABSENT;
    step_raw_record *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *priv = r;
    r->env = env;
    snprintf(r->path, sizeof r->path, "%s", env->s->daemon.record_raw);
    return 0;
}

/* Opened at start, once the encoders are up: a set-up that fails before
 * leaves no file behind. */
static int raw_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    step_raw_record *r = priv;
    return pc_raw_writer_open_fmt(&r->w, r->path, env->width, env->slab_h, env->ncam, &env->rawfmt, env->fps, err,
                                  errlen)
               ? -1
               : 0;
}

static int raw_run(void *priv, pl_set *set)
{
    step_raw_record *r = priv;
    char e[512];
    if (r->w && pc_raw_writer_write(r->w, set->frames, e, sizeof e)) {
        pc_log(r->env->log, PC_LOG_ERR, "--record-raw: %s; recording stopped", e);
        pc_raw_writer_close(r->w, NULL, 0);
        r->w = NULL;
        __atomic_store_n(&r->stopped, 1, __ATOMIC_RELAXED);
    }
    return 0;
}

static void raw_describe(void *priv, char *buf, size_t len)
{
    step_raw_record *r = priv;
    snprintf(buf, len, "%s%s", r->path, __atomic_load_n(&r->stopped, __ATOMIC_RELAXED) ? ", stopped" : "");
}

static void raw_close(void *priv)
{
    step_raw_record *r = priv;
    if (!r)
        return;
    char e[512];
    if (r->w && pc_raw_writer_close(r->w, e, sizeof e))
        pc_log(r->env->log, PC_LOG_ERR, "--record-raw: %s", e);
    free(r);
}

const pl_step_ops pl_step_raw_record = {
    .name = "record-raw",
    .prepare = raw_prepare,
    .start = raw_start,
    .run = raw_run,
    .describe = raw_describe,
    .close = raw_close,
};
