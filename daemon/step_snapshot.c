/* step_snapshot.c - the snapshot step: when a snapshot is asked for
 * (--snapshot at start, the control socket's `snapshot NAME.png`, the web
 * page's snapshot button), copies
 * the set's raw panorama (through the cameras' colour tables when the
 * colour step is on) and writes it demosaiced as a PNG on a thread of its
 * own, so that a snapshot never delays the stream: the panorama as one
 * PNG, or each camera's picture as its own PNG (`snapshot-cameras DIR`,
 * for panocap-calibrate).
 *
 * The request waits in p->snap_path / snap_token / snap_cameras
 * (snap_lock: the control
 * thread writes it, this step takes it); p->snapshots_active counts the
 * snapshot threads still writing (teardown waits for them before it
 * stops the control socket, through which they answer; the web's answers
 * go through pl_snapshot_done).
 *
 * The demosaic is the algorithm's reference (bit-identical to every
 * backend), except for net, whose float reference would take minutes on a
 * panorama: there the CPU backend's version on one thread of the snapshot's
 * own, with a copy of the weights in force (within one code value of the
 * reference, docs/net.md); each camera on its own, as the backends do. */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct snapshot_job {
    atomic_int *active; /* the pipeline's count of snapshots being written */
    uint8_t *raw;
    int width, height;
    pc_cfa cfa;
    pc_algo_id algo;
    int slab_h;               /* > 0: one PNG per camera (slab) into the folder path */
    int cam_h;                /* the cameras' rows (the slabs) */
    pc_net *net;              /* net: a copy of the weights in force (owned) */
    char path[PC_PATH_LEN];
    const pc_logger *log;
    pipeline *p;              /* answers the client that asked (token) */
    unsigned long long token; /* 0: asked by --snapshot */
} snapshot_job;

/* Demosaics rows y0 .. y0+h-1 of the copied raw panorama (pattern cfa at
 * row 0) with the algorithm in force and writes them as the PNG path;
 * 0, or -1 with msg. */
static int snapshot_write(const snapshot_job *sj, int y0, int h, const char *path, uint8_t *rgb, char *msg,
                          size_t msglen)
{
    char err[256];
    size_t pitch = (size_t)sj->width * 3;
    /* an odd first row swaps the pattern's rows: RGGB <-> GBRG, GRBG <-> BGGR */
    pc_cfa cfa = (y0 & 1) ? (pc_cfa)(sj->cfa ^ 2) : sj->cfa;
    pc_bayer b = {sj->raw + (size_t)y0 * sj->width, (size_t)sj->width, sj->width, h, cfa,
                  h % sj->cam_h == 0 && sj->cam_h >= PC_MIN_DIM && !(sj->cam_h & 1) ? sj->cam_h : 0};
    pc_picture pic = {.fmt = PC_FMT_RGB24, .plane = {rgb}, .pitch = {pitch}, .width = sj->width, .height = h};
    int rc = 0;
    if (sj->algo == PC_ALGO_NET) {
        pc_cpu *cpu = NULL;
        if (!sj->net)
            snprintf(err, sizeof err, "no weights for net (out of memory)");
        rc = !sj->net || pc_cpu_open(&cpu, 1, sj->width, h, err, sizeof err);
        if (!rc) {
            pc_cpu_set_net(cpu, sj->net);
            rc = pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &pic, err, sizeof err);
        }
        pc_cpu_close(cpu);
    } else {
        rc = pc_ref_debayer(sj->algo, &b, &pic, err, sizeof err);
    }
    if (rc)
        snprintf(msg, msglen, "snapshot %s: %s", path, err);
    else if (pc_image_write(path, rgb, pitch, sj->width, h, err, sizeof err))
        snprintf(msg, msglen, "snapshot: %s", err);
    else
        return 0;
    return -1;
}

/* Runs detached: demosaics the copied raw panorama with the algorithm in
 * force (the reference is bit-identical to every backend) and writes a PNG,
 * or (snapshot-cameras) each camera's slab on its own, as the camera's
 * picture, into cam0.png .. in the folder. */
static void *snapshot_thread(void *arg)
{
    snapshot_job *sj = arg;
    char msg[PC_PATH_LEN + 300], file[PC_PATH_LEN + 32];
    uint8_t *rgb = malloc((size_t)sj->width * 3 * (size_t)sj->height);
    int rc = -1, n = sj->slab_h > 0 ? sj->height / sj->slab_h : 1;
    if (!rgb)
        snprintf(msg, sizeof msg, "snapshot %s: out of memory", sj->path);
    else if (sj->slab_h <= 0)
        rc = snapshot_write(sj, 0, sj->height, sj->path, rgb, msg, sizeof msg);
    else
        for (int s = 0; s < n; s++) {
            if (snprintf(file, sizeof file, "%s/cam%d.png", sj->path, s) >= (int)sizeof file) {
                snprintf(msg, sizeof msg, "snapshot-cameras %s: path too long", sj->path);
                break;
            }
            if ((rc = snapshot_write(sj, s * sj->slab_h, sj->slab_h, file, rgb, msg, sizeof msg)))
                break;
        }
    if (rc)
        pc_log(sj->log, PC_LOG_ERR, "%s", msg);
    else if (sj->slab_h > 0)
        pc_log(sj->log, PC_LOG_NOTICE, "camera snapshots written to %s/cam0.png .. cam%d.png (%dx%d each, %s)",
               sj->path, n - 1, sj->width, sj->slab_h, pc_algo_get(sj->algo)->name);
    else
        pc_log(sj->log, PC_LOG_NOTICE, "snapshot written to %s (%dx%d, %s)", sj->path, sj->width,
               sj->height, pc_algo_get(sj->algo)->name);
    if (sj->token) /* the control socket's client, or the web's request */
        pl_snapshot_done(sj->p, sj->token, rc, rc ? msg : sj->path);
    free(rgb);
    free(sj->raw);
    pc_net_free(sj->net);
    atomic_fetch_sub(sj->active, 1);
    free(sj);
    return NULL;
}

static int snapshot_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    pipeline *p = env->p;
    if (!p) {
        snprintf(err, errlen, "snapshot: needs the pipeline's request slot");
        return -1;
    }
    *priv = p;
    if (env->s->daemon.snapshot[0]) /* --snapshot: the first set */
        snprintf(p->snap_path, sizeof p->snap_path, "%s", env->s->daemon.snapshot);
    return 0;
}

/* Stage thread, while it still holds the set: takes a request, copies the
 * raw panorama and hands it to a snapshot thread. */
static int snapshot_run(void *priv, pl_set *set)
{
    pipeline *p = priv;
    const pc_frameset *fs = set->frames;
    char path[PC_PATH_LEN];
    pthread_mutex_lock(&p->snap_lock);
    snprintf(path, sizeof path, "%s", p->snap_path);
    unsigned long long token = p->snap_token;
    int cameras = p->snap_cameras;
    p->snap_path[0] = '\0';
    p->snap_token = 0;
    p->snap_cameras = 0;
    pthread_mutex_unlock(&p->snap_lock);
    if (!path[0])
        return 0;
    snapshot_job *sj = calloc(1, sizeof *sj);
    uint8_t *raw = malloc((size_t)p->width * p->height);
    if (!sj || !raw) {
        free(sj);
        free(raw);
        pc_log(&p->d->logger, PC_LOG_ERR, "snapshot %s: out of memory", path);
        if (token)
            pl_snapshot_done(p, token, -1, "out of memory");
        return 0;
    }
    const pl_set_colour *c = set->colour;
    for (int k = 0; c && k < fs->n; k++) /* through the cameras' tables */
        pc_colour_slab(c->fmt, &c->tables[k], fs->slab[k], fs->pitch[k], fs->width, fs->height,
                       raw + (size_t)k * fs->height * fs->width, (size_t)fs->width);
    if (!c)
        pc_frameset_stack(fs, raw, (size_t)p->width);
    /* the algorithm in force: the debayer step changes it only later in
     * the set's trip */
    pc_algo_id algo = pl_algo_of(atomic_load(&p->algo_in_force));
    *sj = (snapshot_job){&p->snapshots_active, raw, p->width, p->height, p->cfa, algo, cameras ? p->slab_h : 0,
                         p->slab_h, algo == PC_ALGO_NET ? pc_net_copy(p->net) : NULL, "", &p->d->logger, p, token};
    snprintf(sj->path, sizeof sj->path, "%s", path);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&p->snapshots_active, 1);
    if (pthread_create(&t, &a, snapshot_thread, sj)) {
        atomic_fetch_sub(&p->snapshots_active, 1);
        pc_log(&p->d->logger, PC_LOG_ERR, "snapshot %s: cannot start a thread", path);
        if (token)
            pl_snapshot_done(p, token, -1, "cannot start a thread");
        free(raw);
        free(sj);
    }
    pthread_attr_destroy(&a);
    return 0;
}

static void snapshot_describe(void *priv, char *buf, size_t len)
{
    pipeline *p = priv;
    pthread_mutex_lock(&p->snap_lock);
    if (p->snap_path[0])
        snprintf(buf, len, "next set to %s", p->snap_path);
    else
        snprintf(buf, len, "on request");
    pthread_mutex_unlock(&p->snap_lock);
}

const pl_step_ops pl_step_snapshot = {
    .name = "snapshot",
    .prepare = snapshot_prepare,
    .run = snapshot_run,
    .describe = snapshot_describe,
};
