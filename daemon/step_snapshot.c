/* step_snapshot.c - the snapshot step: when a snapshot is asked for
 * (--snapshot at start, the control socket's `snapshot NAME.png [VIEW]`,
 * the web page's snapshot button and POST /api/snapshot), writes what the
 * stream shows as a PNG, on a thread of its own, so that a snapshot never
 * delays the stream:
 *
 *   the main picture   stitched: the set's panorama, the picture its
 *                      encoders got (downloaded, converted back to RGB as
 *                      a player shows it: pc_yuv_to_rgb); unstitched: the
 *                      stacked cameras, demosaiced from the set's raw
 *                      panorama (through the colour tables when the colour
 *                      step is on) with the algorithm in force
 *   a view (VIEW)      that virtual camera's picture of the set, as the
 *                      panorama's
 *   snapshot-cameras   each camera's picture, demosaiced from the raw set,
 *                      as its own PNG, DIR/cam0.png .. (panocap-calibrate)
 *
 * It runs after the steps that write the slot's pictures (the render
 * step's panorama and views), with the set's slot: the stage thread copies
 * what it needs (a download of the picture, or the raw panorama) and a
 * snapshot thread converts and writes it. The files are opened with
 * O_NOFOLLOW (pc_image_write_nofollow; the cameras' folder too): the path
 * was checked when it was asked for, and a symbolic link put there since
 * is refused, not followed.
 *
 * The request waits in p->snap_path / snap_view / snap_token /
 * snap_cameras (snap_lock: the control and HTTP threads write it, this
 * step takes it); p->snapshots_active counts the snapshot threads still
 * writing (teardown waits for them before it stops the control socket,
 * through which they answer; the web's answers go through
 * pl_snapshot_done).
 *
 * A raw set is demosaiced with the algorithm's reference (bit-identical to
 * every backend), except for net, whose float reference would take minutes
 * on a panorama: there the CPU backend's version on one thread of the
 * snapshot's own, with a copy of the weights in force (within one code
 * value of the reference, docs/net.md); each camera on its own, as the
 * backends do. */
#include "pipeline_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The step's own: what the pictures are (constant after prepare). */
typedef struct snap_step {
    pipeline *p;
    int raw_main; /* the main picture is the stacked cameras: its snapshot is the demosaiced raw set */
    int npics;
    char name[PL_MAX_PICTURES][PL_PIC_NAME]; /* the slot's pictures' names ("panorama", "vcam:main") */
} snap_step;

typedef struct snapshot_job {
    atomic_int *active; /* the pipeline's count of snapshots being written */
    /* the raw set (raw != NULL): demosaiced here */
    uint8_t *raw;
    int width, height;
    pc_cfa cfa;
    pc_algo_id algo;
    int slab_h;               /* > 0: one PNG per camera (slab) into the folder path */
    int cam_h;                /* the cameras' rows (the slabs) */
    pc_net *net;              /* net: a copy of the weights in force (owned) */
    /* or a picture of the slot, downloaded (pic.plane[0] in buf) */
    pc_picture pic;
    uint8_t *buf;
    char what[PL_PIC_NAME + 32]; /* "the panorama", "the view main" */
    char path[PC_PATH_LEN];
    const pc_logger *log;
    pipeline *p;              /* answers the client that asked (token) */
    unsigned long long token; /* 0: asked by --snapshot */
} snapshot_job;

/* Demosaics rows y0 .. y0+h-1 of the copied raw panorama (pattern cfa at
 * row 0) with the algorithm in force and writes them as the PNG name
 * (relative to dirfd; label names it in messages); 0, or -1 with msg. */
static int snapshot_write(const snapshot_job *sj, int y0, int h, int dirfd, const char *name, const char *label,
                          uint8_t *rgb, char *msg, size_t msglen)
{
    char err[PC_PATH_LEN + 256];
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
        snprintf(msg, msglen, "snapshot %s: %s", label, err);
    else if (pc_image_write_nofollow(dirfd, name, rgb, pitch, sj->width, h, err, sizeof err))
        snprintf(msg, msglen, "snapshot %s%s%s", dirfd == AT_FDCWD ? "" : label, dirfd == AT_FDCWD ? "" : ": ", err);
    else
        return 0;
    return -1;
}

/* The raw set: the stacked cameras as one PNG, or (snapshot-cameras) each
 * camera's slab as its own into the folder, opened without following a
 * link. 0, or -1 with msg. */
static int write_raw(snapshot_job *sj, char *msg, size_t msglen)
{
    uint8_t *rgb = malloc((size_t)sj->width * 3 * (size_t)sj->height);
    int rc = -1;
    if (!rgb) {
        snprintf(msg, msglen, "snapshot %s: out of memory", sj->path);
    } else if (sj->slab_h <= 0) {
        rc = snapshot_write(sj, 0, sj->height, AT_FDCWD, sj->path, sj->path, rgb, msg, msglen);
    } else {
        int dfd = open(sj->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            snprintf(msg, msglen, "snapshot-cameras %s: %s", sj->path,
                     errno == ELOOP || errno == ENOTDIR ? "not a folder any more (a symbolic link is not followed)"
                                                        : strerror(errno));
        for (int s = 0, n = sj->height / sj->slab_h; dfd >= 0 && s < n; s++) {
            char name[32], label[PC_PATH_LEN + 32];
            snprintf(name, sizeof name, "cam%d.png", s);
            snprintf(label, sizeof label, "%s/%s", sj->path, name);
            if ((rc = snapshot_write(sj, s * sj->slab_h, sj->slab_h, dfd, name, label, rgb, msg, msglen)))
                break;
        }
        if (dfd >= 0)
            close(dfd);
    }
    free(rgb);
    return rc;
}

/* A downloaded picture of the slot: back to RGB as a player shows it. */
static int write_picture(snapshot_job *sj, char *msg, size_t msglen)
{
    char err[PC_PATH_LEN + 256];
    size_t pitch = 3 * (size_t)sj->pic.width;
    uint8_t *rgb = malloc(pitch * (size_t)sj->pic.height);
    int rc = -1;
    if (!rgb)
        snprintf(msg, msglen, "snapshot %s: out of memory", sj->path);
    else if (pc_yuv_to_rgb(&sj->pic, rgb, pitch, err, sizeof err))
        snprintf(msg, msglen, "snapshot %s: %s", sj->path, err);
    else if (pc_image_write_nofollow(AT_FDCWD, sj->path, rgb, pitch, sj->pic.width, sj->pic.height, err, sizeof err))
        snprintf(msg, msglen, "snapshot %s", err);
    else
        rc = 0;
    free(rgb);
    return rc;
}

/* Runs detached: converts and writes, answers, logs. */
static void *snapshot_thread(void *arg)
{
    snapshot_job *sj = arg;
    char msg[PC_PATH_LEN * 2 + 400];
    int rc = sj->raw ? write_raw(sj, msg, sizeof msg) : write_picture(sj, msg, sizeof msg);
    int n = sj->slab_h > 0 ? sj->height / sj->slab_h : 1;
    if (rc)
        pc_log(sj->log, PC_LOG_ERR, "%s", msg);
    else if (sj->raw && sj->slab_h > 0)
        pc_log(sj->log, PC_LOG_NOTICE, "camera snapshots written to %s/cam0.png .. cam%d.png (%dx%d each, %s)",
               sj->path, n - 1, sj->width, sj->slab_h, pc_algo_get(sj->algo)->name);
    else if (sj->raw)
        pc_log(sj->log, PC_LOG_NOTICE, "snapshot written to %s (%dx%d, the stacked cameras, %s)", sj->path,
               sj->width, sj->height, pc_algo_get(sj->algo)->name);
    else
        pc_log(sj->log, PC_LOG_NOTICE, "snapshot written to %s (%dx%d, %s)", sj->path, sj->pic.width,
               sj->pic.height, sj->what);
    if (sj->token) /* the control socket's client, or the web's request */
        pl_snapshot_done(sj->p, sj->token, rc, rc ? msg : sj->path);
    free(sj->raw);
    free(sj->buf);
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
    snap_step *ss = calloc(1, sizeof *ss);
    if (!ss) {
        snprintf(err, errlen, "snapshot: out of memory");
        return -1;
    }
    ss->p = p;
    ss->npics = io->nout;
    for (int i = 0; i < io->nout && i < PL_MAX_PICTURES; i++)
        snprintf(ss->name[i], sizeof ss->name[i], "%s", io->out[i].name);
    /* the stitched panorama is the render step's picture 0; anything else
     * there is the stacked cameras (the demosaic's, or the render step's
     * without a panorama) */
    ss->raw_main = io->nout < 1 || strcmp(io->out[0].name, "panorama") != 0;
    *priv = ss;
    if (env->s->daemon.snapshot[0]) /* --snapshot: the first set's main picture */
        snprintf(p->snap_path, sizeof p->snap_path, "%s", env->s->daemon.snapshot);
    return 0;
}

/* Starts the thread of job sj (its copies made); answers and frees it
 * when it cannot. */
static void start_job(pipeline *p, snapshot_job *sj)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&p->snapshots_active, 1);
    if (pthread_create(&t, &a, snapshot_thread, sj)) {
        atomic_fetch_sub(&p->snapshots_active, 1);
        pc_log(&p->d->logger, PC_LOG_ERR, "snapshot %s: cannot start a thread", sj->path);
        if (sj->token)
            pl_snapshot_done(p, sj->token, -1, "cannot start a thread");
        free(sj->raw);
        free(sj->buf);
        pc_net_free(sj->net);
        free(sj);
    }
    pthread_attr_destroy(&a);
}

/* The raw panorama of the set, through the cameras' tables. */
static int copy_raw(pipeline *p, const pl_set *set, snapshot_job *sj, int cameras)
{
    const pc_frameset *fs = set->frames;
    uint8_t *raw = malloc((size_t)p->width * p->height);
    if (!raw)
        return -1;
    const pl_set_colour *c = set->colour;
    for (int k = 0; c && k < fs->n; k++) /* through the cameras' tables */
        pc_colour_slab(c->fmt, &c->tables[k], fs->slab[k], fs->pitch[k], fs->width, fs->height,
                       raw + (size_t)k * fs->height * fs->width, (size_t)fs->width);
    if (!c)
        pc_frameset_stack(fs, raw, (size_t)p->width);
    sj->raw = raw;
    sj->width = p->width;
    sj->height = p->height;
    sj->cfa = p->cfa;
    /* the algorithm in force: the debayer step before this one took any
     * switch at the start of this set */
    sj->algo = pl_algo_of(atomic_load(&p->algo_in_force));
    sj->slab_h = cameras ? p->slab_h : 0;
    sj->cam_h = p->slab_h;
    sj->net = sj->algo == PC_ALGO_NET ? pc_net_copy(p->net) : NULL;
    return 0;
}

/* Picture i of the slot into host memory (downloaded after the steps
 * that wrote it; the slot waited for). 0, or -1 with err. */
static int copy_picture(pipeline *p, const pl_set *set, int i, snapshot_job *sj, char *err, size_t errlen)
{
    const pc_picture *src = set->picture[i];
    pc_picture hp;
    size_t bytes = pc_picture_layout(&hp, src->fmt, src->matrix, src->range, src->width, src->height, 64, NULL);
    uint8_t *buf = malloc(bytes);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pc_picture_layout(&hp, src->fmt, src->matrix, src->range, src->width, src->height, 64, buf);
    if (pc_backend_download(p->be, set->slot, src, &hp, err, errlen) || pc_backend_wait(p->be, set->slot, err, errlen)) {
        free(buf);
        return -1;
    }
    sj->pic = hp;
    sj->buf = buf;
    return 0;
}

/* Stage thread, with the slot's pictures written: takes a request, copies
 * what it needs and hands it to a snapshot thread. */
static int snapshot_run(void *priv, pl_set *set)
{
    snap_step *ss = priv;
    pipeline *p = ss->p;
    char path[PC_PATH_LEN], view[PL_PIC_NAME];
    pthread_mutex_lock(&p->snap_lock);
    snprintf(path, sizeof path, "%s", p->snap_path);
    snprintf(view, sizeof view, "%s", p->snap_view);
    unsigned long long token = p->snap_token;
    int cameras = p->snap_cameras;
    p->snap_path[0] = '\0';
    p->snap_view[0] = '\0';
    p->snap_token = 0;
    p->snap_cameras = 0;
    pthread_mutex_unlock(&p->snap_lock);
    if (!path[0])
        return 0;
    char err[512] = "";
    snapshot_job *sj = calloc(1, sizeof *sj);
    int rc = -1;
    if (!sj) {
        snprintf(err, sizeof err, "out of memory");
    } else if (cameras || (!view[0] && ss->raw_main)) {
        rc = copy_raw(p, set, sj, cameras);
        if (rc)
            snprintf(err, sizeof err, "out of memory");
    } else {
        /* the main picture (the panorama) or the view's */
        char want[PL_PIC_NAME + 8];
        snprintf(want, sizeof want, "%s%s", view[0] ? "vcam:" : "", view[0] ? view : ss->name[0]);
        int i = 0;
        while (i < ss->npics && i < set->npictures && strcmp(ss->name[i], want))
            i++;
        if (i >= ss->npics || i >= set->npictures || !set->picture[i])
            snprintf(err, sizeof err, "no picture %s in this run", want);
        else if (!(rc = copy_picture(p, set, i, sj, err, sizeof err)))
            snprintf(sj->what, sizeof sj->what, "%s%s", view[0] ? "the view " : "the ", view[0] ? view : want);
    }
    if (rc) {
        pc_log(&p->d->logger, PC_LOG_ERR, "snapshot %s: %s", path, err);
        if (token)
            pl_snapshot_done(p, token, -1, err);
        free(sj);
        return 0;
    }
    sj->active = &p->snapshots_active;
    sj->log = &p->d->logger;
    sj->p = p;
    sj->token = token;
    snprintf(sj->path, sizeof sj->path, "%s", path);
    start_job(p, sj);
    return 0;
}

static void snapshot_describe(void *priv, char *buf, size_t len)
{
    snap_step *ss = priv;
    pipeline *p = ss->p;
    pthread_mutex_lock(&p->snap_lock);
    if (p->snap_path[0])
        snprintf(buf, len, "next set to %s", p->snap_path);
    else
        snprintf(buf, len, "on request, %s", ss->raw_main ? "the stacked cameras" : "the panorama");
    pthread_mutex_unlock(&p->snap_lock);
}

static void snapshot_close(void *priv) { free(priv); }

const pl_step_ops pl_step_snapshot = {
    .name = "snapshot",
    .flags = PL_STEP_SLOT,
    .prepare = snapshot_prepare,
    .run = snapshot_run,
    .describe = snapshot_describe,
    .close = snapshot_close,
};
