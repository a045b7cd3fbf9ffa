/* raw.c - writer and reader of PCRAW1 raw frame-set files (raw_format.md):
 * what --record-raw writes and the file capture source replays. Version 2
 * carries 10/12-bit and packed slabs; version 1 (8-bit) files still read. */
#include "capture_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RAW_HEADER 32
#define SET_HEADER 24

struct pc_raw_writer {
    FILE *f;
    char *path;
    int width, height, n;
    pc_rawfmt fmt;
    size_t slab_bytes;
};

struct pc_raw_reader {
    FILE *f;
    char *path;
    pc_raw_info info;
    uint64_t next;
};

static void put16(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }
static uint32_t get16(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

int pc_raw_writer_open(pc_raw_writer **out, const char *path, int width, int height, int n,
                       pc_cfa cfa, double fps, char *err, size_t errlen)
{
    pc_rawfmt f = {8, PC_PACK_8, cfa};
    return pc_raw_writer_open_fmt(out, path, width, height, n, &f, fps, err, errlen);
}

static int fmt_valid(const pc_rawfmt *f)
{
    return (unsigned)f->cfa <= PC_CFA_BGGR && (unsigned)f->packing <= PC_PACK_GVSP &&
           (f->packing == PC_PACK_8 ? f->bits == 8 : (f->bits == 10 || f->bits == 12));
}

int pc_raw_writer_open_fmt(pc_raw_writer **out, const char *path, int width, int height, int n,
                           const pc_rawfmt *fmt, double fps, char *err, size_t errlen)
{
    *out = NULL;
    pc_cfa cfa = fmt ? fmt->cfa : PC_CFA_RGGB;
    if (!path || !fmt || !fmt_valid(fmt) || width < 8 || height < 8 || width > 16384 || height > 16384 ||
        ((width | height) & 1) || n < 1 || n > PC_CAPTURE_MAX_CAMERAS ||
        (unsigned)cfa > PC_CFA_BGGR || !(fps > 0 && fps < 4000000)) {
        PC_ERR(err, errlen, "raw writer %s: bad geometry %dx%d x %d cameras, pattern %d, %g fps",
               path ? path : "(no path)", width, height, n, (int)cfa, fps);
        return PC_EINVAL;
    }
    pc_raw_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        PC_ERR(err, errlen, "raw writer %s: out of memory", path);
        return PC_ENOMEM;
    }
    w->f = fopen(path, "wb");
    if (!w->f) {
        PC_ERR(err, errlen, "raw writer %s: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return PC_EIO;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    uint8_t h[RAW_HEADER] = {0};
    memcpy(h, "PCRAW1", 6);
    put16(h + 6, RAW_HEADER);
    put32(h + 8, (uint32_t)width);
    put32(h + 12, (uint32_t)height);
    put16(h + 16, (uint32_t)n);
    h[18] = (uint8_t)cfa;
    h[19] = (uint8_t)fmt->bits;
    put32(h + 20, (uint32_t)lrint(fps * 1000.0));
    put32(h + 24, SET_HEADER);
    /* version 2: packing and version in the formerly reserved bytes; an
     * 8-bit file stays byte for byte a version 1 file */
    if (fmt->packing != PC_PACK_8) {
        h[28] = (uint8_t)fmt->packing;
        h[29] = 2;
    }
    if (fwrite(h, 1, sizeof h, w->f) != sizeof h) {
        PC_ERR(err, errlen, "raw writer %s: %s", path, strerror(errno));
        fclose(w->f);
        free(w->path);
        free(w);
        return PC_EIO;
    }
    w->width = width;
    w->height = height;
    w->n = n;
    w->fmt = *fmt;
    w->slab_bytes = pc_rawfmt_frame_bytes(fmt, width, height);
    *out = w;
    return 0;
}

int pc_raw_writer_write(pc_raw_writer *w, const pc_frameset *s, char *err, size_t errlen)
{
    if (!w || !s)
        return PC_EINVAL;
    if (s->width != w->width || s->height != w->height || s->n != w->n ||
        (s->slab_bytes && s->slab_bytes != w->slab_bytes)) {
        PC_ERR(err, errlen, "raw writer %s: set is %dx%d x %d, the file %dx%d x %d", w->path,
               s->width, s->height, s->n, w->width, w->height, w->n);
        return PC_EINVAL;
    }
    uint8_t h[SET_HEADER];
    memcpy(h, "PCS1", 4);
    put32(h + 4, s->substituted);
    put64(h + 8, s->index);
    put64(h + 16, (uint64_t)s->pts_ns);
    int ok = fwrite(h, 1, sizeof h, w->f) == sizeof h;
    for (int k = 0; k < s->n && ok; k++) {
        if (w->fmt.packing != PC_PACK_8) { /* the camera's stream as it came */
            ok = fwrite(s->slab[k], 1, w->slab_bytes, w->f) == w->slab_bytes;
            continue;
        }
        if (s->pitch[k] == (size_t)s->width) {
            ok = fwrite(s->slab[k], 1, (size_t)s->width * s->height, w->f) ==
                 (size_t)s->width * s->height;
            continue;
        }
        for (int y = 0; y < s->height && ok; y++)
            ok = fwrite(s->slab[k] + (size_t)y * s->pitch[k], 1, (size_t)s->width, w->f) ==
                 (size_t)s->width;
    }
    if (!ok) {
        PC_ERR(err, errlen, "raw writer %s: %s", w->path, strerror(errno));
        return PC_EIO;
    }
    return 0;
}

int pc_raw_writer_close(pc_raw_writer *w, char *err, size_t errlen)
{
    if (!w)
        return 0;
    int rc = 0;
    if (fclose(w->f) != 0) {
        PC_ERR(err, errlen, "raw writer %s: %s", w->path, strerror(errno));
        rc = PC_EIO;
    }
    free(w->path);
    free(w);
    return rc;
}

int pc_raw_reader_open(pc_raw_reader **out, const char *path, pc_raw_info *info, char *err,
                       size_t errlen)
{
    *out = NULL;
    pc_raw_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path ? path : ""))) {
        free(r);
        PC_ERR(err, errlen, "raw file: out of memory");
        return PC_ENOMEM;
    }
    r->f = fopen(path, "rb");
    uint8_t h[RAW_HEADER];
    int rc = 0;
    if (!r->f) {
        PC_ERR(err, errlen, "raw file %s: %s", path, strerror(errno));
        rc = PC_EIO;
        goto fail;
    }
    if (fread(h, 1, sizeof h, r->f) != sizeof h || memcmp(h, "PCRAW1", 6) != 0) {
        PC_ERR(err, errlen, "raw file %s: not a PCRAW1 file (bad magic)", path);
        rc = PC_EINVAL;
        goto fail;
    }
    pc_raw_info *in = &r->info;
    in->width = (int)get32(h + 8);
    in->height = (int)get32(h + 12);
    in->n_cameras = (int)get16(h + 16);
    in->cfa = (pc_cfa)h[18];
    in->fps = get32(h + 20) / 1000.0;
    in->version = h[29] == 2 ? 2 : 1;
    in->fmt = (pc_rawfmt){h[19], in->version == 2 ? (pc_packing)h[28] : PC_PACK_8, (pc_cfa)(h[18] & 3)};
    if (get16(h + 6) != RAW_HEADER || get32(h + 24) != SET_HEADER || !fmt_valid(&in->fmt) ||
        (h[29] != 0 && h[29] != 2)) {
        PC_ERR(err, errlen, "raw file %s: unsupported header (size %u, set header %u, %u bits, packing %u, "
               "version %u; this panocap reads versions 1 and 2: 8, 10 or 12 bits, packing 0..3)",
               path, get16(h + 6), get32(h + 24), h[19], h[28], h[29] ? h[29] : 1);
        rc = PC_EINVAL;
        goto fail;
    }
    if (in->width < 8 || in->height < 8 || in->width > 16384 || in->height > 16384 ||
        ((in->width | in->height) & 1)) {
        PC_ERR(err, errlen, "raw file %s: frame size %dx%d is not even within 8..16384", path,
               in->width, in->height);
        rc = PC_EINVAL;
        goto fail;
    }
    if (in->n_cameras < 1 || in->n_cameras > PC_CAPTURE_MAX_CAMERAS) {
        PC_ERR(err, errlen, "raw file %s: camera count %d out of range 1..%d", path,
               in->n_cameras, PC_CAPTURE_MAX_CAMERAS);
        rc = PC_EINVAL;
        goto fail;
    }
    if ((unsigned)h[18] > PC_CFA_BGGR) {
        PC_ERR(err, errlen, "raw file %s: pattern %u is not 0..3 (RGGB, GRBG, GBRG, BGGR)", path, h[18]);
        rc = PC_EINVAL;
        goto fail;
    }
    if (!(in->fps > 0)) {
        PC_ERR(err, errlen, "raw file %s: frame rate is 0", path);
        rc = PC_EINVAL;
        goto fail;
    }
    struct stat st;
    if (fstat(fileno(r->f), &st) == 0) {
        uint64_t set = SET_HEADER + (uint64_t)in->n_cameras * pc_rawfmt_frame_bytes(&in->fmt, in->width, in->height);
        in->n_sets = st.st_size > RAW_HEADER ? (uint64_t)(st.st_size - RAW_HEADER) / set : 0;
    }
    if (info)
        *info = *in;
    *out = r;
    return 0;
fail:
    if (r->f)
        fclose(r->f);
    free(r->path);
    free(r);
    return rc;
}

int pc_raw_reader_read(pc_raw_reader *r, uint8_t *dst, uint64_t *index, int64_t *pts,
                       uint32_t *substituted, char *err, size_t errlen)
{
    if (!r || !dst)
        return PC_EINVAL;
    if (r->next >= r->info.n_sets)
        return PC_CAPTURE_EOF;
    uint8_t h[SET_HEADER];
    size_t bytes = (size_t)r->info.n_cameras * pc_rawfmt_frame_bytes(&r->info.fmt, r->info.width, r->info.height);
    if (fread(h, 1, sizeof h, r->f) != sizeof h) {
        PC_ERR(err, errlen, "raw file %s: set %llu: %s", r->path, (unsigned long long)r->next,
               feof(r->f) ? "truncated" : strerror(errno));
        return PC_EIO;
    }
    if (memcmp(h, "PCS1", 4) != 0) {
        PC_ERR(err, errlen, "raw file %s: set %llu has no PCS1 header (corrupt file)", r->path,
               (unsigned long long)r->next);
        return PC_EIO;
    }
    if (fread(dst, 1, bytes, r->f) != bytes) {
        PC_ERR(err, errlen, "raw file %s: set %llu: %s", r->path, (unsigned long long)r->next,
               feof(r->f) ? "truncated" : strerror(errno));
        return PC_EIO;
    }
    if (substituted)
        *substituted = get32(h + 4);
    if (index)
        *index = get64(h + 8);
    if (pts)
        *pts = (int64_t)get64(h + 16);
    r->next++;
    return 0;
}

int pc_raw_reader_rewind(pc_raw_reader *r)
{
    if (!r || fseek(r->f, RAW_HEADER, SEEK_SET) != 0)
        return PC_EIO;
    r->next = 0;
    return 0;
}

void pc_raw_reader_close(pc_raw_reader *r)
{
    if (!r)
        return;
    fclose(r->f);
    free(r->path);
    free(r);
}
