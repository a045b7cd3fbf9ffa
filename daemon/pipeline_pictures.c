/* pipeline_pictures.c - the encoded pictures: what the stage's last step
 * writes per set (pl_steps.out[]: the main picture, a virtual camera, the
 * unstitched cameras for recording), each with its own encoder(s) and
 * outputs, same PTS. Here, on the main thread: each picture's settings
 * (the pipeline's pl_spec: a plain pl_picture_config), its layout (bands
 * or a grid of a picture of the stacked cameras, else one band), its
 * encoders and threads, its slot pictures (any size, in the backend's
 * memory) and pinned host copies, the preview of picture 0, a reload's
 * new outputs and bitrates, the summary; and, on a band's own thread, its
 * encoder's reopening. A picture that is not required (cfg.required 0)
 * whose encoder does not open is logged and counted, and the others run.
 * The threads themselves are pipeline_encoder.c's. */
#include "pipeline_int.h"
#include "urlmask.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int is_null(const pl_picture_config *c)
{
    int real = 0;
    for (int i = 0; i < c->output_count; i++)
        real += !pl_is_null_url(c->outputs[i].url);
    return real == 0;
}

/* A second picture's outputs (a virtual camera's, the unstitched ones). */
static void list_outputs(pl_picture_config *c, const pc_output_list *l)
{
    c->output_count = l->count < PC_MAX_OUTPUTS ? l->count : PC_MAX_OUTPUTS;
    for (int i = 0; i < c->output_count; i++)
        c->outputs[i] = l->item[i];
}

int pl_settings_picture(void *user, const pc_settings *s, int index, pl_picture_config *c, char *err,
                        size_t errlen)
{
    (void)user;
    c->encode = s->encode; /* codec, encoder, fallbacks, preset, GOP, options: encode.* for every picture */
    if (index == 0) { /* the main picture: the top-level outputs, the preview; its failure stops panocap */
        c->output_count = s->output_count;
        memcpy(c->outputs, s->outputs, sizeof c->outputs);
        c->required = 1;
        return 0;
    }
    c->encode.preview_scale = 0; /* the main picture's only */
    if (!strncmp(c->name, "vcam:", 5)) { /* virtual_cameras[]: its outputs and bitrate, one picture */
        for (int v = 0; v < s->vcam_count; v++)
            if (!strcmp(s->vcams[v].name, c->name + 5)) {
                c->encode.bitrate = s->vcams[v].bitrate;
                c->encode.layout = PC_LAYOUT_STACKED;
                list_outputs(c, &s->vcams[v].outputs);
                return 0;
            }
        snprintf(err, errlen, "virtual_cameras has no camera named \"%s\"", c->name + 5);
        return -1;
    }
    if (!strcmp(c->name, "unstitched")) { /* the cameras in encode.layout, for recording */
        list_outputs(c, &s->panorama.unstitched);
        return 0;
    }
    snprintf(err, errlen, "no setting gives picture %d (%s, %dx%d) an encoder and outputs", index, c->name,
             c->width, c->height);
    return -1;
}

/* Picture i's settings from s through the spec, checked. */
static int picture_config(pipeline *p, const pc_settings *s, int i, pl_picture_config *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const pl_pic_desc *d = &p->steps.out[i];
    snprintf(c->name, sizeof c->name, "%s", d->name);
    c->width = d->width;
    c->height = d->height;
    char e[512] = "";
    if (p->spec->picture(p->spec->user, s, i, c, e, sizeof e)) {
        snprintf(err, errlen, "picture %d (%s): %s", i, d->name, e);
        return -1;
    }
    /* what the spec may not change */
    snprintf(c->name, sizeof c->name, "%s", d->name);
    c->width = d->width;
    c->height = d->height;
    if (c->output_count < 0 || c->output_count > PC_MAX_OUTPUTS) {
        snprintf(err, errlen, "picture %d (%s): %d outputs (0..%d)", i, c->name, c->output_count, PC_MAX_OUTPUTS);
        return -1;
    }
    int real = 0;
    for (int o = 0; o < c->output_count; o++)
        real += !pl_is_null_url(c->outputs[o].url);
    if (real && real != c->output_count) {
        snprintf(err, errlen, "%s%s%soutput \"null\" cannot be combined with other outputs", i ? "picture " : "",
                 i ? c->name : "", i ? ": " : "");
        return -1;
    }
    return 0;
}

/* url with "%b" replaced by the band number (one output per band). */
static int band_url(const char *url, int band, int nbands, char *out, size_t n, char *err, size_t errn)
{
    const char *m = strstr(url, "%b");
    if (nbands == 1 && !m) {
        snprintf(out, n, "%s", url);
        return 0;
    }
    if (!m) {
        snprintf(err, errn, "output %s: with %d bands (encode.band_outputs \"separate\") each output URL needs "
                 "%%b, the band number, e.g. \"pano-%%b.ts\"", url, nbands);
        return -1;
    }
    snprintf(out, n, "%.*s%d%s", (int)(m - url), url, band, m + 2);
    return 0;
}

/* An output's settings as the encoder takes them, with its URL. */
static void output_config(const pipeline *p, const pc_encode_settings *es, pc_output_config *o,
                          const pc_output_settings *so, const char *url)
{
    o->url = url;
    /* a recording's packet queue holds its recording queue's seconds too
     * (a disk stall); others the default */
    double q = pl_is_recording_url(url) ? ceil(es->record_queue_s * p->fps) : 0;
    o->queue_packets = q > 256 ? (int)q : 0;
    o->format = so->format[0] ? so->format : NULL;
    o->segment_seconds = so->segment_s;
    o->options = so->options[0] ? so->options : NULL;
    o->max_bytes = so->max_bytes;
    o->max_age_s = so->max_age_s;
    o->min_free = so->min_free;
}

/* Band b's name in its encoder's log lines: "band 2" (the main picture
 * cut into bands), "vcam:main", "unstitched band 2"; "" for the main
 * picture's only band. */
static void band_label(const pipeline *p, const pl_band *b, char *buf, size_t n)
{
    const pl_picture *pic = b->pic;
    const char *name = pic->index ? pic->cfg.name : "";
    if (pic->nbands > 1)
        snprintf(buf, n, "%s%sband %d", name, name[0] ? " " : "", b->band);
    else
        snprintf(buf, n, "%s", name);
}

/* err prefixed with the band's label, when it has one. */
static void band_prefix(const pipeline *p, const pl_band *b, char *err, size_t errlen)
{
    char pre[PL_PIC_NAME + 24];
    band_label(p, b, pre, sizeof pre - 2);
    if (!pre[0] || errlen < sizeof pre + 8)
        return;
    strcat(pre, ": ");
    size_t l = strlen(pre), keep = errlen - 1 - l;
    memmove(err + l, err, keep);
    memcpy(err, pre, l);
    err[errlen - 1] = '\0';
}

/* A band's encoder (re)opened with c: its keyframe phase (pl_band). */
static void band_opened(pl_band *b, const pl_picture_config *c)
{
    int n = b->pic->nbands;
    b->since_open = 0;
    b->idr_gop = b->preview || n < 2 ? 0 : c->encode.gop;
    b->idr_phase = b->idr_gop ? (int)((int64_t)b->band * b->idr_gop / n) : 0;
}

/* What every encoder of the pipeline shares: a w x h picture at the
 * capture's rate, es's encoder (and fallbacks), codec, GOP and preset,
 * the pipeline's colour signalling, its logger. */
static void encode_base(const pipeline *p, const pc_encode_settings *es, int w, int h, pc_encode_config *ec)
{
    pc_encode_config_default(ec);
    ec->width = w;
    ec->height = h;
    /* 50 -> 50/1; 29.97 -> 29970/1000 */
    ec->fps_den = fabs(p->fps - lround(p->fps)) < 1e-9 ? 1 : 1000;
    ec->fps_num = (int)lround(p->fps * ec->fps_den);
    ec->encoder = es->encoder;
    for (int i = 0; i < es->fallback.count && i < PC_ENCODE_MAX_FALLBACKS; i++)
        ec->fallbacks[i] = es->fallback.item[i];
    ec->codec = (pc_codec)es->codec;
    ec->gop = es->gop;
    ec->preset = es->preset[0] ? es->preset : NULL;
    ec->matrix = p->st.matrix;
    ec->range = p->st.range;
    ec->log = &p->d->logger;
}

/* Opens band b's encoder for the outputs of c into *out and says which
 * picture format it takes. Set-up (main thread) or reopen (b's thread). */
static int open_encoder(pipeline *p, pl_band *b, const pl_picture_config *c, pc_encoder **out, pc_pixfmt *fmt,
                        char *err, size_t errlen)
{
    pl_picture *pic = b->pic;
    const pc_encode_settings *es = &c->encode;
    pc_encode_config ec;
    char urls[PC_ENCODE_MAX_OUTPUTS][PC_URL_LEN + 16];
    char label[PL_PIC_NAME + 16];
    encode_base(p, es, pic->plan.width, pic->plan.height, &ec);
    /* the picture's bitrate: shared by its bands */
    ec.bitrate = es->bitrate / pic->nbands;
    if (ec.bitrate < 100000)
        ec.bitrate = 100000;
    ec.threads = es->threads;
    ec.encoder_options = es->options[0] ? es->options : NULL;
    if (!ec.threads && pic->nbands > 1) { /* the cores shared by the bands' encoders */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ec.threads = cores > pic->nbands ? (int)(cores / pic->nbands) : 1;
    }
    band_label(p, b, label, sizeof label);
    ec.label = label[0] ? label : NULL;
    pc_backend_encoder_device(p->be, &ec.cuda_ctx, &ec.cuda_stream); /* NULL: none */
    ec.n_outputs = 0;
    ec.mux = pic->mux;
    ec.mux_stream = b->band;
    for (int i = 0; i < c->output_count && i < PC_ENCODE_MAX_OUTPUTS && !pic->mux; i++) {
        pc_output_config *o = &ec.outputs[ec.n_outputs++];
        if (band_url(c->outputs[i].url, b->band, pic->nbands, urls[i], sizeof urls[i], err, errlen)) {
            band_prefix(p, b, err, errlen);
            return -1;
        }
        output_config(p, es, o, &c->outputs[i], urls[i]);
    }
    pl_encoder_callbacks(b, &ec);
    pc_encoder *e = NULL;
    if (pc_encoder_open(&e, &ec, err, errlen)) {
        band_prefix(p, b, err, errlen);
        return -1;
    }
    /* The pipeline produces what the encoder takes: NV12 for NVENC and
     * libx264, I420 for encoders without NV12 input. */
    pc_picture f;
    int on_dev;
    if (pc_encoder_frame(e, &f, &on_dev, err, errlen)) {
        pc_encoder_close(e);
        return -1;
    }
    *fmt = f.fmt;
    *out = e;
    int nout = pic->mux ? c->output_count : ec.n_outputs;
    pc_log(&p->d->logger, PC_LOG_INFO, "encoder%s%s: %s (%s%s), %dx%d, %d output%s", label[0] ? " " : "", label,
           pc_encoder_name(e), pc_encoder_codec(e), pc_encoder_zero_copy(e) ? ", zero copy from CUDA" : "",
           ec.width, ec.height, nout, nout == 1 ? "" : "s");
    return 0;
}

/* The outputs' names (URLs) of c to the stats, in pic's slot range. */
static void stats_outputs(pipeline *p, const pl_picture *pic, const pl_picture_config *c)
{
    const char *names[PC_MAX_OUTPUTS];
    char shown[PC_MAX_OUTPUTS][PC_URL_LEN]; /* status, metrics, page and summary: no stream key */
    int n = pic->encoded ? c->output_count : 0;
    for (int i = 0; i < n; i++)
        names[i] = pc_url_mask(c->outputs[i].url, shown[i], sizeof shown[i]);
    pc_stats_set_picture_outputs(p->stats, pic->index, pic->out0, n, PC_MAX_OUTPUTS, names);
}

void pl_picture_publish(pipeline *p, pl_picture *pic)
{
    char name[PC_STATS_NAME] = "";
    pthread_mutex_lock(&p->enc_lock); /* a thread may be swapping its encoder */
    for (int b = pic->first; b < pic->first + pic->nbands && !name[0]; b++)
        if (p->band[b].enc)
            snprintf(name, sizeof name, "%s", pc_encoder_name(p->band[b].enc));
    pthread_mutex_unlock(&p->enc_lock);
    pc_stats_picture_encoders(p->stats, pic->index, name, atomic_load(&pic->live), pic->encoded ? pic->nbands : 0);
}

void pl_band_reopen(pipeline *p, pl_band *b, const pl_picture_config *next)
{
    pl_picture *pic = b->pic;
    pc_encoder *fresh = NULL;
    pc_pixfmt fmt;
    if (open_encoder(p, b, next, &fresh, &fmt, b->err, sizeof b->err)) {
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: new outputs not opened (%s); %s", b->err,
               b->live ? "the running outputs stay" : "still not encoding");
        if (!b->live)
            pc_stats_picture_failure(p->stats, pic->index);
        return;
    }
    pc_encoder *old = b->enc;
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    if (fmt != pic->fmt || (dev && !pc_encoder_zero_copy(fresh) && !pic->host_ref)) {
        /* a different encoder came up: cannot feed it (its format, or host
         * frames where the picture stays in device memory) */
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: the new encoder %s of picture %s takes %s %s frames, the pipeline "
               "makes %s %s pictures for it; %s", pc_encoder_name(fresh), pic->cfg.name, pc_pixfmt_name(fmt),
               pc_encoder_zero_copy(fresh) ? "CUDA" : "host", pc_pixfmt_name(pic->fmt),
               dev && !pic->host_ref ? "CUDA" : "host",
               b->live ? "the running outputs stay" : "restart panocap to encode it");
        pc_encoder_close(fresh);
        return;
    }
    pthread_mutex_lock(&p->enc_lock);
    b->enc = fresh;
    pthread_mutex_unlock(&p->enc_lock);
    snprintf(b->enc_name, sizeof b->enc_name, "%s", pc_encoder_name(fresh));
    band_opened(b, next);
    if (old && pc_encoder_flush(old, b->err, sizeof b->err))
        pc_log(&p->d->logger, PC_LOG_WARNING, "reload: draining the old encoder: %s", b->err);
    pc_encoder_close(old);
    if (!b->live) { /* it encodes again: the sets wait for it from the next one on */
        b->live = 1;
        atomic_fetch_add(&pic->live, 1);
        pl_band_encoding(p, b, 1);
    }
    if (b->band == 0) {
        stats_outputs(p, pic, next);
        pc_log(&p->d->logger, PC_LOG_NOTICE, "reload: %s%snow writing to %d output%s", pic->index ? pic->cfg.name : "",
               pic->index ? ": " : "", next->output_count, next->output_count == 1 ? "" : "s");
    }
    pl_picture_publish(p, pic);
}

/* The preview rendition (set-up): picture 0 scaled down preview_scale
 * times (by the backend into pinned pictures, or on the preview's thread
 * from the host picture) into its own encoder, to its own output, on the
 * thread after picture 0's bands. */
static int open_preview(pipeline *p, pl_picture *pic)
{
    const pc_encode_settings *es = &pic->cfg.encode;
    if (p->nthreads >= PL_MAX_ENCODERS) {
        snprintf(p->err, sizeof p->err, "preview: more than %d encoders", PL_MAX_ENCODERS);
        return -1;
    }
    pl_band *b = &p->band[p->nthreads];
    b->pic = pic;
    b->band = 0;
    b->preview = 1;
    pc_encode_config ec;
    int k = p->preview_scale;
    /* the whole picture (a grid's) scaled */
    encode_base(p, es, (pic->width / k) & ~1, (pic->height / k) & ~1, &ec);
    ec.bitrate = es->preview_bitrate;
    ec.threads = 2;
    ec.label = "preview";
    ec.n_outputs = 1;
    ec.outputs[0].url = es->preview_url;
    pl_encoder_callbacks(b, &ec);
    if (pc_encoder_open(&b->enc, &ec, p->err, sizeof p->err)) {
        char tmp[sizeof p->err];
        memcpy(tmp, p->err, sizeof tmp);
        snprintf(p->err, sizeof p->err, "preview: %.*s", (int)sizeof p->err - 16, tmp);
        return -1;
    }
    b->live = 1;
    snprintf(b->enc_name, sizeof b->enc_name, "%s", pc_encoder_name(b->enc));
    b->row0 = ec.height; /* for the summary: the preview's size */
    b->rows = ec.width;
    p->nthreads++;
    pc_picture f;
    int on_dev = 0;
    if (pc_encoder_frame(b->enc, &f, &on_dev, p->err, sizeof p->err))
        return -1;
    /* Device pictures: scaled there and downloaded small, when the encoder
     * takes NV12 like the pipeline; else scaled on its thread from the host
     * picture */
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    p->preview_gpu = dev && p->bops->downscale && f.fmt == PC_FMT_NV12 && pic->fmt == PC_FMT_NV12;
    if (!p->preview_gpu)
        pic->host_ref = 1;
    pc_log(&p->d->logger, PC_LOG_INFO, "preview: %s %dx%d (1/%d, scaled on the %s), %.2f Mbit/s, to %s",
           pc_encoder_name(b->enc), ec.width, ec.height, k, p->preview_gpu ? "GPU" : "CPU", ec.bitrate / 1e6,
           es->preview_url);
    return 0;
}

/* encode.band_outputs "streams": every output of the picture gets one
 * video stream per band, fed by its bands' encoders (pc_mux); it opens
 * when the last band's encoder does. */
static int open_picture_mux(pipeline *p, pl_picture *pic)
{
    const pl_picture_config *c = &pic->cfg;
    pc_output_config oc[PC_ENCODE_MAX_OUTPUTS];
    int n = 0;
    memset(oc, 0, sizeof oc);
    for (int i = 0; i < c->output_count && i < PC_ENCODE_MAX_OUTPUTS; i++) {
        if (strstr(c->outputs[i].url, "%b")) {
            snprintf(p->err, sizeof p->err, "output %s: %%b (one output per band) needs encode.band_outputs = "
                     "\"separate\"; with \"streams\" (the default) each output holds the %d bands as %d video "
                     "streams", c->outputs[i].url, pic->nbands, pic->nbands);
            return -1;
        }
        output_config(p, &c->encode, &oc[n++], &c->outputs[i], c->outputs[i].url);
    }
    if (pc_mux_create(&pic->mux, pic->nbands, oc, n, p->err, sizeof p->err))
        return -1;
    pc_log(&p->d->logger, PC_LOG_INFO, "encode%s%s: %d output%s with %d video streams each, one per band "
           "(encode.band_outputs \"streams\")", pic->index ? " " : "", pic->index ? pic->cfg.name : "", n,
           n == 1 ? "" : "s", pic->nbands);
    return 0;
}

/* The picture's layout: bands or a grid of a picture of the stacked
 * cameras (as encode.layout says), else the one picture the step makes;
 * then its threads (the next nbands of p->band[]). */
static int picture_layout(pipeline *p, pl_picture *pic)
{
    const pc_encode_settings *es = &pic->cfg.encode;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    pic->plan = (pc_layout_plan){.layout = PC_LAYOUT_STACKED, .bands = 1, .width = pic->width, .height = pic->height};
    if (!pic->encoded)
        snprintf(pic->plan.why, sizeof pic->plan.why, "not encoded (output null)");
    else if (pic->width != p->width || pic->height != p->height) {
        /* a step made a picture of its own (not the stacked cameras): the
         * layouts of camera slabs do not apply, it is one picture */
        if (es->layout == PC_LAYOUT_GRID || es->layout == PC_LAYOUT_BANDS) {
            snprintf(p->err, sizeof p->err, "%s%sencode.layout %s cuts the stacked cameras, but the stage makes "
                     "one %dx%d picture; use \"stacked\" or \"auto\"", pic->index ? pic->cfg.name : "",
                     pic->index ? ": " : "", pc_layout_name(es->layout), pic->width, pic->height);
            return -1;
        }
        snprintf(pic->plan.why, sizeof pic->plan.why, "one %dx%d picture, as the stage's last step makes it",
                 pic->width, pic->height);
    } else {
        /* encoder auto: whether NVENC will encode decides the automatic layout */
        int nvenc = -1;
        if (strcmp(es->encoder, "auto") == 0)
            nvenc = pc_encoder_opens(es->codec == PC_CODEC_H264 ? "h264_nvenc" : "hevc_nvenc");
        if (pc_layout_resolve(es, p->ncam, p->width, p->slab_h, nvenc, cores > 0 ? (int)cores : 1, &pic->plan,
                              p->err, sizeof p->err))
            return -1;
    }
    if (pic->plan.layout == PC_LAYOUT_GRID) {
        pic->width = pic->plan.width;
        pic->height = pic->plan.height;
    }
    if (pic->plan.bands > PL_MAX_BANDS) {
        snprintf(p->err, sizeof p->err, "encode.bands: %d bands, at most %d", pic->plan.bands, PL_MAX_BANDS);
        return -1;
    }
    if (p->nthreads + pic->plan.bands > PL_MAX_ENCODERS) {
        snprintf(p->err, sizeof p->err, "picture %s: %d more encoders, %d in all: at most %d", pic->cfg.name,
                 pic->plan.bands, p->nthreads + pic->plan.bands, PL_MAX_ENCODERS);
        return -1;
    }
    pic->nbands = pic->plan.bands;
    pic->first = p->nthreads;
    p->nthreads += pic->nbands;
    int rows = pic->height / pic->nbands;
    for (int i = 0; i < pic->nbands; i++) {
        pl_band *b = &p->band[pic->first + i];
        b->pic = pic;
        b->band = i;
        b->row0 = i * rows;
        b->rows = rows;
    }
    if (pic->encoded)
        pc_log(&p->d->logger, PC_LOG_INFO, "encode.layout%s%s %s: %s", pic->index ? " of " : "",
               pic->index ? pic->cfg.name : "", pc_layout_name(pic->plan.layout), pic->plan.why);
    return 0;
}

/* Opens every band's encoder of pic (set-up). 0; 1: a picture that is not
 * required could not open (logged, counted: it is not encoded, the rest
 * runs); -1: p->err says why. */
static int open_picture_encoders(pipeline *p, pl_picture *pic)
{
    const pl_picture_config *c = &pic->cfg;
    int nvenc = 0, rc = 0;
    char fell[512] = "";
    if (pic->nbands > 1 && c->encode.band_outputs == PC_BAND_OUTPUTS_STREAMS && open_picture_mux(p, pic))
        rc = -1;
    for (int i = 0; i < pic->nbands && !rc; i++) {
        pl_band *b = &p->band[pic->first + i];
        pc_pixfmt fmt;
        if (open_encoder(p, b, c, &b->enc, &fmt, p->err, sizeof p->err)) {
            rc = -1;
            break;
        }
        band_opened(b, c);
        b->live = 1;
        snprintf(b->enc_name, sizeof b->enc_name, "%s", pc_encoder_name(b->enc));
        if (i == 0)
            pic->fmt = fmt;
        else if (fmt != pic->fmt) {
            snprintf(p->err, sizeof p->err, "band %d: encoder %s takes %s, band 0's %s takes %s; give every band "
                     "the same kind of encoder (encode.encoder)", i, pc_encoder_name(b->enc), pc_pixfmt_name(fmt),
                     pc_encoder_name(p->band[pic->first].enc), pc_pixfmt_name(pic->fmt));
            rc = -1;
            break;
        }
        pic->host_ref |= !pc_encoder_zero_copy(b->enc);
        int is_nv = strstr(pc_encoder_name(b->enc), "_nvenc") != NULL;
        nvenc += is_nv;
        if (!is_nv && pic->nbands > 1) {
            size_t l = strlen(fell);
            snprintf(fell + l, sizeof fell - l, "%s%d", l ? "," : "", i);
        }
    }
    if (rc && c->required)
        return -1;
    if (rc) { /* not required: it is not encoded; what opened closes */
        pc_log(&p->d->logger, PC_LOG_ERR, "picture %s: encoder not opened: %s; it is not encoded, the other "
               "pictures go on (a reload of its outputs opens it again)", c->name, p->err);
        p->err[0] = '\0';
        for (int i = 0; i < pic->nbands; i++) {
            pl_band *b = &p->band[pic->first + i];
            pc_encoder_close(b->enc);
            b->enc = NULL;
            b->live = 0;
            b->enc_name[0] = '\0';
        }
        pc_mux_close(pic->mux);
        pic->mux = NULL;
        pic->fmt = PC_FMT_NV12; /* what every encoder panocap knows but libx265/libsvtav1 takes */
        pic->host_ref = 1;      /* a reload may open a host encoder */
        pc_stats_picture_failure(p->stats, pic->index);
        return 1;
    }
    atomic_store(&pic->live, pic->nbands);
    if (pic->nbands > 1)
        pc_log(&p->d->logger, PC_LOG_INFO, "encode%s%s: %d band encoders, %d NVENC session%s%s%s%s",
               pic->index ? " " : "", pic->index ? c->name : "", pic->nbands, nvenc, nvenc == 1 ? "" : "s",
               fell[0] ? "; bands " : "", fell,
               !fell[0] ? "" : strcmp(c->encode.encoder, "auto") ? " on the configured software encoder"
                                                                : " on software encoders (each band's line above says why)");
    return 0;
}

int pl_pictures_open(pipeline *p)
{
    p->nthreads = 0;
    p->npictures = p->steps.nout;
    for (int t = 0; t < PL_MAX_ENCODERS; t++) {
        pl_band *b = &p->band[t];
        b->p = p;
        b->index = t;
        b->ready.cap = MAX_SLOTS + 2;
        b->ready.item = b->ready.small;
    }
    for (int i = 0; i < MAX_SLOTS; i++)
        p->slot_tok[i] = (pl_slot_token){p, i};
    if (p->steps.last_writer < 0 || p->npictures < 1) {
        snprintf(p->err, sizeof p->err, "no step of the stage writes a picture");
        return -1;
    }
    for (int i = 0; i < p->npictures; i++) {
        pl_picture *pic = &p->picture[i];
        pic->index = i;
        pic->fmt = PC_FMT_NV12;
        pic->width = p->steps.out[i].width;
        pic->height = p->steps.out[i].height;
        pic->out0 = i * PC_MAX_OUTPUTS;
        if (picture_config(p, p->s, i, &pic->cfg, p->err, sizeof p->err))
            return -1;
        pic->encoded = !is_null(&pic->cfg);
        p->have_encoder |= pic->encoded;
    }
    if (!p->picture[0].encoded)
        pc_log(&p->d->logger, PC_LOG_INFO, "output null: demosaicing only, no encoder%s",
               p->have_encoder ? " for the main picture" : "");
    for (int i = 0; i < p->npictures; i++) {
        pl_picture *pic = &p->picture[i];
        if (picture_layout(p, pic)) /* without FFmpeg, encode_stub.c's pc_encoder_open says so */
            return -1;
        pc_stats_set_picture(p->stats, i, pic->cfg.name, pic->width, pic->height);
        if (pic->encoded && open_picture_encoders(p, pic) < 0)
            return -1;
        if (i == 0 && pic->encoded && pic->cfg.encode.preview_scale) {
            p->preview_scale = pic->cfg.encode.preview_scale;
            if (open_preview(p, pic))
                return -1;
        }
        stats_outputs(p, pic, &pic->cfg);
        pl_picture_publish(p, pic);
    }
    for (int t = 0; t < p->nthreads; t++)
        if (p->band[t].live)
            pl_band_encoding(p, &p->band[t], 1);
    if (p->npictures > 1) {
        char what[1024];
        size_t o = 0;
        what[0] = '\0';
        for (int i = 0; i < p->npictures && o + 1 < sizeof what; i++) {
            const pl_picture *pic = &p->picture[i];
            int w = snprintf(what + o, sizeof what - o, "%s%s %dx%d%s", i ? ", " : "", pic->cfg.name, pic->width,
                             pic->height, !pic->encoded ? " (not encoded)" : !atomic_load(&pic->live) ? " (failed)" : "");
            if (w < 0)
                break;
            o += (size_t)w < sizeof what - o ? (size_t)w : sizeof what - o - 1;
        }
        pc_log(&p->d->logger, PC_LOG_INFO, "pictures: %s; %d encoder threads", what, p->nthreads);
    }
    return 0;
}

int pl_pictures_slots(pipeline *p)
{
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    for (int i = 0; i < p->npictures; i++) {
        pl_picture *pic = &p->picture[i];
        const pl_pic_desc *d = &p->steps.out[i];
        for (int k = 0; k < p->nslots; k++) {
            if (pc_backend_picture_alloc(p->be, pic->fmt, p->st.matrix, p->st.range, d->width, d->height,
                                         &pic->slot[k], p->err, sizeof p->err))
                return -1;
            /* grid: the same memory as the cameras' tiles; the final pass
             * stores each camera's rows in its tile (no copy) */
            if (pic->plan.layout == PC_LAYOUT_GRID &&
                pc_picture_as_grid(&pic->slot[k], pic->plan.grid_cols, p->slab_h)) {
                snprintf(p->err, sizeof p->err, "encode.layout grid %dx%d: %d cameras of %d rows do not tile it",
                         pic->plan.grid_cols, pic->plan.grid_rows, p->ncam, p->slab_h);
                return -1;
            }
        }
        /* Device pictures and a host encoder: pinned host copies of the
         * slots, taken by reference; the stage thread queues the download
         * right after the last step (pinned: at PCIe speed, ~1 ms for
         * 2040x5400 NV12, where pageable memory took 3-5 ms on the
         * encoder thread). */
        for (int k = 0; k < p->nslots && dev && pic->host_ref && pic->encoded; k++)
            if (pc_backend_host_picture_alloc(p->bops, pic->fmt, p->st.matrix, p->st.range, pic->width,
                                              pic->height, &pic->host[k], p->err, sizeof p->err))
                return -1;
    }
    /* the preview scaled by the backend: pinned, its size */
    const pl_picture *main = &p->picture[0];
    for (int i = 0; i < p->nslots && p->preview_gpu; i++) {
        int k = p->preview_scale;
        if (pc_backend_host_picture_alloc(p->bops, PC_FMT_NV12, p->st.matrix, p->st.range, (main->width / k) & ~1,
                                          (main->height / k) & ~1, &p->prev_pic[i], p->err, sizeof p->err))
            return -1;
    }
    char what[256];
    pc_backend_describe(p->be, what, sizeof what);
    pc_log(&p->d->logger, PC_LOG_INFO, "%s, %d frame sets in flight", what, p->nslots);
    return 0;
}

void pl_pictures_close(pipeline *p)
{
    for (int t = 0; t < PL_MAX_ENCODERS; t++) {
        pc_encoder_close(p->band[t].enc); /* writes trailers, ends playlists */
        p->band[t].enc = NULL;
    }
    for (int i = 0; i < PL_MAX_PICTURES; i++) {
        pc_mux_close(p->picture[i].mux); /* the bands' shared outputs, once every band's encoder has drained */
        p->picture[i].mux = NULL;
    }
}

void pl_pictures_free(pipeline *p)
{
    for (int i = 0; i < PL_MAX_PICTURES; i++) {
        pl_picture *pic = &p->picture[i];
        for (int k = 0; k < MAX_SLOTS && p->be; k++) {
            pc_backend_picture_free(p->be, &pic->slot[k]);
            pc_backend_host_picture_free(p->bops, &pic->host[k]);
        }
    }
    for (int k = 0; k < MAX_SLOTS && p->be; k++)
        pc_backend_host_picture_free(p->bops, &p->prev_pic[k]);
}

/* The same outputs, by what makes them (not where the file says so). */
static int same_outputs(const pl_picture_config *a, const pl_picture_config *b)
{
    if (a->output_count != b->output_count)
        return 0;
    for (int i = 0; i < a->output_count; i++) {
        const pc_output_settings *x = &a->outputs[i], *y = &b->outputs[i];
        if (strcmp(x->url, y->url) || strcmp(x->options, y->options) || strcmp(x->format, y->format) ||
            x->segment_s != y->segment_s || x->max_bytes != y->max_bytes || x->max_age_s != y->max_age_s ||
            x->min_free != y->min_free)
            return 0;
    }
    return 1;
}

int pl_picture_set_bitrate(pipeline *p, pl_picture *pic, int64_t bitrate, char *err, size_t n)
{
    int rc = 0;
    pthread_mutex_lock(&p->enc_lock);
    for (int b = pic->first; b < pic->first + pic->nbands && !rc; b++)
        if (p->band[b].enc)
            rc = pc_encoder_set_bitrate(p->band[b].enc, bitrate / pic->nbands, err, n);
    pthread_mutex_unlock(&p->enc_lock);
    if (!rc)
        pic->cfg.encode.bitrate = bitrate;
    return rc ? -1 : 0;
}

void pl_pictures_reload(pipeline *p, const pc_settings *s)
{
    const pc_logger *lg = &p->d->logger;
    pl_picture_config *c = malloc(sizeof *c);
    if (!c) {
        pc_log(lg, PC_LOG_ERR, "reload: out of memory; the pictures' outputs stay");
        return;
    }
    for (int i = 0; i < p->npictures; i++) {
        pl_picture *pic = &p->picture[i];
        const char *name = pic->cfg.name;
        char err[700];
        if (picture_config(p, s, i, c, err, sizeof err)) {
            pc_log(lg, PC_LOG_ERR, "reload: %s; its settings in force stay", err);
            continue;
        }
        if (!pic->encoded && is_null(c))
            continue;
        if (!same_outputs(c, &pic->cfg)) {
            if (is_null(c) != !pic->encoded)
                pc_log(lg, PC_LOG_WARNING, "reload: %s%sswitching %s output null needs a restart (the running "
                       "outputs stay)", i ? name : "", i ? ": " : "", pic->encoded ? "to" : "from");
            else if (pic->mux)
                /* the bands share their outputs (one stream each): they
                 * cannot be re-opened one band at a time */
                pc_log(lg, PC_LOG_WARNING, "reload: %s%soutputs not changed: with encode.band_outputs \"streams\" "
                       "the %d bands share them; restart panocap to apply the new outputs", i ? name : "",
                       i ? ": " : "", pic->nbands);
            else {
                /* Each band's thread reopens between frames, from its own
                 * copy; a request not yet taken is replaced by this newer
                 * one. */
                for (int t = pic->first; t < pic->first + pic->nbands; t++) {
                    pl_picture_config *copy = malloc(sizeof *copy);
                    if (!copy) {
                        pc_log(lg, PC_LOG_ERR, "reload: out of memory; %s band %d's running outputs stay", name,
                               p->band[t].band);
                        continue;
                    }
                    *copy = *c;
                    pthread_mutex_lock(&p->reopen_lock);
                    free(p->reopen[t]);
                    p->reopen[t] = copy;
                    pthread_mutex_unlock(&p->reopen_lock);
                }
                pic->cfg.output_count = c->output_count;
                memcpy(pic->cfg.outputs, c->outputs, sizeof c->outputs);
            }
        }
        if (pic->encoded && c->encode.bitrate != pic->cfg.encode.bitrate &&
            pl_picture_set_bitrate(p, pic, c->encode.bitrate, err, sizeof err))
            pc_log(lg, PC_LOG_WARNING, "reload: %s%sbitrate: %s", i ? name : "", i ? ": " : "", err);
    }
    free(c);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void pl_pictures_summary(pipeline *p, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    if (!p->have_encoder)
        return;
    float *tmp = malloc(sizeof(float) * BAND_LAT_RING);
    if (!tmp)
        return;
#define PUT(...)                                                                                                   \
    do {                                                                                                           \
        int w_ = snprintf(buf + off, n - off, __VA_ARGS__);                                                        \
        if (w_ > 0)                                                                                                \
            off += (size_t)w_ < n - off ? (size_t)w_ : n - off - 1;                                                \
    } while (0)
    for (int i = 0; i < p->npictures && off + 1 < n; i++) {
        const pl_picture *pic = &p->picture[i];
        if (!pic->encoded)
            continue;
        if (i == 0)
            PUT("layout: %s, %d band%s of %dx%d (%s)\n", pc_layout_name(pic->plan.layout), pic->nbands,
                pic->nbands == 1 ? "" : "s", pic->plan.width, pic->plan.height, pic->plan.why);
        else
            PUT("picture %d %s: %s, %d band%s of %dx%d (%s)\n", i, pic->cfg.name, pc_layout_name(pic->plan.layout),
                pic->nbands, pic->nbands == 1 ? "" : "s", pic->plan.width, pic->plan.height, pic->plan.why);
        int last = pic->first + pic->nbands + (i == 0 && p->preview_scale ? 1 : 0);
        for (int t = pic->first; t < last && t < p->nthreads && off + 1 < n; t++) {
            const pl_band *b = &p->band[t];
            size_t k = b->nlat < BAND_LAT_RING ? (size_t)b->nlat : BAND_LAT_RING;
            memcpy(tmp, b->lat_ms, k * sizeof *tmp);
            qsort(tmp, k, sizeof *tmp, cmp_float);
            double p50 = k ? tmp[k / 2] : 0, p99 = k ? tmp[(k * 99) / 100 < k ? (k * 99) / 100 : k - 1] : 0,
                   mx = k ? tmp[k - 1] : 0;
            const char *name = b->enc_name[0] ? b->enc_name : "-";
            if (b->preview)
                PUT("  preview 1/%d %4dx%-5d %-10s frames %6llu  encode p50 %6.2f  p99 %6.2f  max %6.2f ms\n",
                    p->preview_scale, b->rows, b->row0, name, (unsigned long long)b->frames, p50, p99, mx);
            else
                PUT("  band %d  rows %5d-%-5d %-10s frames %6llu  encode p50 %6.2f  p99 %6.2f  max %6.2f ms%s\n",
                    b->band, b->row0, b->row0 + b->rows - 1, name, (unsigned long long)b->frames, p50, p99, mx,
                    b->live ? "" : b->enc_name[0] ? "  (stopped: its encoder failed)" : "  (its encoder did not open)");
        }
    }
#undef PUT
    free(tmp);
}
