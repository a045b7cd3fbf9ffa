/* step_vcam_motion.c - the virtual cameras' motion, stepped once per frame
 * set on the stage thread (pl_vcams_step), so that a view the operator
 * moves gets there at its speed, the status and the page show it moving,
 * and time is kept by the sets' numbers (a dropped set still advances it).
 * It draws nothing: the render step that draws the views at these poses
 * steps them itself (with the activity map of the follow mode) and takes
 * this step's place in the list. Present only with virtual cameras.
 *
 * Ownership: p->vcams is the pipeline's (pipeline_vcams.c; thread-safe);
 * this step owns only the last set's number. */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct vcam_step {
    pl_vcams *v;
    double fps;
    uint64_t last;
    int have_last;
    pc_vcam_pose pose[PC_MAX_VCAMS];
} vcam_step;

static int motion_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    (void)io;
    if (!env->p || !env->p->vcams)
        return PL_STEP_ABSENT;
    vcam_step *vs = calloc(1, sizeof *vs);
    if (!vs) {
        snprintf(err, errlen, "virtual cameras: out of memory");
        return -1;
    }
    vs->v = env->p->vcams;
    vs->fps = env->fps > 0 ? env->fps : 25.0;
    *priv = vs;
    return 0;
}

static int motion_run(void *priv, pl_set *set)
{
    vcam_step *vs = priv;
    uint64_t idx = set->frames->index;
    double dt = vs->have_last && idx > vs->last ? (double)(idx - vs->last) / vs->fps : 1.0 / vs->fps;
    vs->last = idx;
    vs->have_last = 1;
    pl_vcams_step(vs->v, dt, NULL, vs->pose);
    return 0;
}

static void motion_describe(void *priv, char *buf, size_t len)
{
    vcam_step *vs = priv;
    int n = pl_vcams_count(vs->v);
    snprintf(buf, len, "%d view%s stepped per set (not rendered)", n, n == 1 ? "" : "s");
}

static void motion_close(void *priv) { free(priv); }

const pl_step_ops pl_step_vcam_motion = {
    .name = "virtual cameras",
    .prepare = motion_prepare,
    .run = motion_run,
    .describe = motion_describe,
    .close = motion_close,
};
