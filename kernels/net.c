/* net.c - the learned demosaic's weights file: loading and checking it
 * (pc_net_load), the default path, the network's margin (net.h).
 *
 * The file (version 1; written by tools/convert-demosaicnet, whose header
 * comment and docs/net.md describe it; integers and floats little-endian):
 *   header 64 bytes: magic "PCNETWTS", u32 version, u32 tensors, u32 depth,
 *       u32 width, u64 file size, char[32] model name
 *   table: one 80-byte entry per tensor: char[48] name, u32 ndim,
 *       u32 dims[4], u32 0, u64 offset of its float32 data
 *   data, then the SHA-256 of every byte before it (the last 32 bytes).
 * The checks, in order, each failure naming the file: readable, long
 * enough for a header and a digest, magic, version, the size the header
 * states (truncated or trailing bytes), the digest, the model's depth and
 * width, then every tensor: a name the model has (each once), its shape,
 * its data inside the file, every value finite.
 */
#include "net.h"

#include "errmsg.h"
#include "panocap_config.h"
#include "sha256.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NET_MAGIC "PCNETWTS"
#define NET_VERSION 1u
#define NET_HEADER 64
#define NET_ENTRY 80
#define NET_NAME 48
#define NET_DIGEST 32
#define NET_MAX_FILE ((size_t)256 << 20) /* far above any model of PC_NET_MAX_* */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

int pc_net_margin(const pc_net *net)
{
    /* each half-resolution 3x3 layer loses one half-resolution pixel per
     * side (2 full-resolution ones), post's 3x3 one more */
    return net ? 2 * net->depth + (net->post.k - 1) / 2 : 31;
}

double pc_net_flops(const pc_net *net, int w, int h, int cam_rows, pc_cfa cfa)
{
    const int ch = cam_rows > 0 ? cam_rows : h;
    if (!net || w < 2 || ch < 2 || h % ch)
        return 0;
    const int M = pc_net_margin(net), D = net->depth, W = net->width;
    const int ox = cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR, oy = cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR;
    const int hw = (w + 2 * (M + ((((ox + 1) & 1) + M) & 1))) / 2, hh = (ch + 2 * (M + ((oy + M) & 1))) / 2;
    double macs = (double)hw * hh * 4 * 3 * 4; /* pack */
    for (int l = 0; l < D; l++)
        macs += (double)(hw - 2 * (l + 1)) * (hh - 2 * (l + 1)) * net->main[l].cout * net->main[l].cin * 9;
    const double half = (double)(hw - 2 * D) * (hh - 2 * D), full = 4 * half;
    macs += half * (W + 12.0 * W); /* filters * masks, residual */
    macs += full * 4;             /* the transposed convolution: 4 products per output sample */
    const double out = (double)(2 * (hw - 2 * D) - 2) * (2 * (hh - 2 * D) - 2);
    macs += out * ((double)W * 6 * 9 + 3.0 * W); /* post, out */
    return 2 * macs * (h / ch);
}

const char *pc_net_default_path(void)
{
    if (access(PANOCAP_NET_WEIGHTS, R_OK) == 0)
        return PANOCAP_NET_WEIGHTS;
    return PANOCAP_NET_WEIGHTS_SRC;
}

/* One tensor the model needs: its name, shape and where it goes. */
typedef struct want {
    char name[NET_NAME];
    int ndim, dims[4];
    const float **dst;
    int seen;
} want;

static void want_set(want *w, const char *name, int ndim, int d0, int d1, int d2, int d3, const float **dst)
{
    snprintf(w->name, sizeof w->name, "%s", name);
    w->ndim = ndim;
    w->dims[0] = d0;
    w->dims[1] = d1;
    w->dims[2] = d2;
    w->dims[3] = d3;
    w->dst = dst;
    w->seen = 0;
}

/* A conv's weight and bias (PyTorch's names prefix.weight, prefix.bias). */
static int want_conv(want *w, const char *prefix, pc_net_conv *c, int cout, int cin, int k)
{
    char n[NET_NAME];
    c->cin = cin;
    c->cout = cout;
    c->k = k;
    snprintf(n, sizeof n, "%s.weight", prefix);
    want_set(&w[0], n, 4, cout, cin, k, k, &c->w);
    snprintf(n, sizeof n, "%s.bias", prefix);
    want_set(&w[1], n, 1, cout, 0, 0, 0, &c->b);
    return 2;
}

/* The tensors of BayerDemosaick(depth, width) (demosaicnet's modules.py). */
static int model_tensors(pc_net *net, want *w)
{
    const int D = net->depth, W = net->width;
    int n = 0;
    n += want_conv(w + n, "main_processor.pack_mosaic", &net->pack, 4, 3, 2);
    for (int i = 0; i < D; i++) {
        char p[40];
        snprintf(p, sizeof p, "main_processor.conv%d", i + 1);
        n += want_conv(w + n, p, &net->main[i], i == D - 1 ? 2 * W : W, i == 0 ? 4 : W, 3);
    }
    n += want_conv(w + n, "residual_predictor", &net->residual, 12, W, 1);
    /* ConvTranspose2d(12, 3, 2, stride 2, groups 3): weight [12][1][2][2] */
    net->up.cin = 12;
    net->up.cout = 3;
    net->up.k = 2;
    want_set(&w[n++], "upsampler.weight", 4, 12, 1, 2, 2, &net->up.w);
    want_set(&w[n++], "upsampler.bias", 1, 3, 0, 0, 0, &net->up.b);
    n += want_conv(w + n, "fullres_processor.post_conv", &net->post, W, 6, 3);
    n += want_conv(w + n, "fullres_processor.output", &net->out, 3, W, 1);
    return n;
}

static void shape_str(char *buf, size_t len, int ndim, const int *dims)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndim && o < len; i++) {
        int k = snprintf(buf + o, len - o, "%s%d", i ? "x" : "", dims[i]);
        if (k < 0)
            break;
        o += (size_t)k;
    }
}

static int read_file(const char *path, uint8_t **out, size_t *size, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        pc_set_err(err, errlen, "weights file %s: cannot open (%s)", path, strerror(errno));
        return PC_EIO;
    }
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        pc_set_err(err, errlen, "weights file %s: cannot find its size (%s)", path, strerror(errno));
        fclose(f);
        return PC_EIO;
    }
    if ((size_t)n > NET_MAX_FILE) {
        pc_set_err(err, errlen, "weights file %s: %ld bytes, more than any model holds (%zu at most)", path, n,
                   NET_MAX_FILE);
        fclose(f);
        return PC_EINVAL;
    }
    uint8_t *buf = malloc((size_t)n + 1);
    if (!buf) {
        pc_set_err(err, errlen, "weights file %s: cannot allocate %ld bytes", path, n);
        fclose(f);
        return PC_ENOMEM;
    }
    size_t got = fread(buf, 1, (size_t)n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != (size_t)n) {
        pc_set_err(err, errlen, "weights file %s: read error after %zu of %ld bytes", path, got, n);
        free(buf);
        return PC_EIO;
    }
    *out = buf;
    *size = (size_t)n;
    return PC_OK;
}

/* Checks the header and the digest of the file's bytes. */
static int check_header(const char *path, const uint8_t *b, size_t size, pc_net *hdr, int *ntensors, char *err,
                        size_t errlen)
{
    if (size < NET_HEADER + NET_DIGEST) {
        pc_set_err(err, errlen, "weights file %s: truncated (%zu bytes, less than a header and a digest)", path,
                   size);
        return PC_EINVAL;
    }
    if (memcmp(b, NET_MAGIC, 8) != 0) {
        pc_set_err(err, errlen, "weights file %s: bad magic (not a panocap weights file; expected \"%s\", "
                   "docs/net.md)", path, NET_MAGIC);
        return PC_EINVAL;
    }
    uint32_t ver = rd32(b + 8);
    if (ver != NET_VERSION) {
        pc_set_err(err, errlen, "weights file %s: version %u, this panocap reads version %u", path, ver,
                   NET_VERSION);
        return PC_EINVAL;
    }
    uint64_t stated = rd64(b + 24);
    if (stated != size) {
        pc_set_err(err, errlen, "weights file %s: %s (%zu bytes, its header says %llu)", path,
                   size < stated ? "truncated" : "trailing bytes after the digest", size,
                   (unsigned long long)stated);
        return PC_EINVAL;
    }
    uint8_t dg[32];
    pc_sha256(b, size - NET_DIGEST, dg);
    if (memcmp(dg, b + size - NET_DIGEST, NET_DIGEST) != 0) {
        char have[65], want_hex[65];
        pc_sha256_hex(dg, have);
        pc_sha256_hex(b + size - NET_DIGEST, want_hex);
        pc_set_err(err, errlen, "weights file %s: checksum mismatch (payload SHA-256 %s, the file states %s): "
                   "the file is damaged", path, have, want_hex);
        return PC_EINVAL;
    }
    pc_sha256_hex(dg, hdr->sha256);
    uint32_t nt = rd32(b + 12), depth = rd32(b + 16), width = rd32(b + 20);
    if (depth < 1 || depth > PC_NET_MAX_DEPTH || width < 1 || width > PC_NET_MAX_WIDTH) {
        pc_set_err(err, errlen, "weights file %s: depth %u, width %u (this panocap takes depth 1..%d, width "
                   "1..%d)", path, depth, width, PC_NET_MAX_DEPTH, PC_NET_MAX_WIDTH);
        return PC_EINVAL;
    }
    if (memchr(b + 32, 0, 32) == NULL) {
        pc_set_err(err, errlen, "weights file %s: the model name is not NUL-terminated", path);
        return PC_EINVAL;
    }
    snprintf(hdr->name, sizeof hdr->name, "%s", (const char *)(b + 32));
    hdr->depth = (int)depth;
    hdr->width = (int)width;
    if (nt != 2u * (depth + 5)) {
        pc_set_err(err, errlen, "weights file %s: %u tensors, a model of depth %u has %u", path, nt, depth,
                   2u * (depth + 5));
        return PC_EINVAL;
    }
    if ((uint64_t)NET_HEADER + (uint64_t)nt * NET_ENTRY > size - NET_DIGEST) {
        pc_set_err(err, errlen, "weights file %s: truncated (its %u-entry tensor table ends past the data)", path,
                   nt);
        return PC_EINVAL;
    }
    *ntensors = (int)nt;
    return PC_OK;
}

int pc_net_load(pc_net **out, const char *path, char *err, size_t errlen)
{
    if (!out || !path || !*path) {
        pc_set_err(err, errlen, "weights file: %s", out ? "no path given" : "output pointer is NULL");
        return PC_EINVAL;
    }
    *out = NULL;
    uint8_t *b;
    size_t size;
    int rc = read_file(path, &b, &size, err, errlen);
    if (rc)
        return rc;
    pc_net hdr;
    memset(&hdr, 0, sizeof hdr);
    int nt = 0;
    rc = check_header(path, b, size, &hdr, &nt, err, errlen);
    if (rc) {
        free(b);
        return rc;
    }
    /* the struct, then every tensor's floats (64-byte aligned), in one
     * block sized by the model's shapes (not by what the table says) */
    want w[2 * (PC_NET_MAX_DEPTH + 5)];
    int nw = model_tensors(&hdr, w);
    size_t head = (sizeof(pc_net) + 63) & ~(size_t)63, floats = 0;
    for (int k = 0; k < nw; k++) {
        size_t n = 1;
        for (int d = 0; d < w[k].ndim; d++)
            n *= (size_t)w[k].dims[d];
        floats += (n + 15) & ~(size_t)15;
    }
    pc_net *net = NULL;
    if (posix_memalign((void **)&net, 64, head + floats * sizeof(float)) != 0) {
        pc_set_err(err, errlen, "weights file %s: cannot allocate %zu bytes", path, head + floats * sizeof(float));
        free(b);
        return PC_ENOMEM;
    }
    *net = hdr;
    net->bytes = head + floats * sizeof(float);
    snprintf(net->path, sizeof net->path, "%s", path);
    nw = model_tensors(net, w);
    float *fp = (float *)(void *)((uint8_t *)net + head);
    for (int i = 0; i < nt && !rc; i++) {
        const uint8_t *e = b + NET_HEADER + (size_t)i * NET_ENTRY;
        char name[NET_NAME + 1];
        memcpy(name, e, NET_NAME);
        name[NET_NAME] = '\0';
        want *t = NULL;
        for (int k = 0; k < nw && !t; k++)
            if (strcmp(w[k].name, name) == 0)
                t = &w[k];
        if (!t || t->seen) {
            pc_set_err(err, errlen, "weights file %s: tensor %d, \"%.48s\", is %s", path, i, name,
                       t ? "there twice" : "not one of the model's (docs/net.md lists them)");
            rc = PC_EINVAL;
            break;
        }
        uint32_t nd = rd32(e + 48);
        int dims[4] = {0, 0, 0, 0}, same = nd == (uint32_t)t->ndim;
        for (int d = 0; d < 4; d++) {
            uint32_t v = rd32(e + 52 + 4 * d);
            dims[d] = v > 1000000 ? -1 : (int)v;
            if (d < t->ndim && dims[d] != t->dims[d])
                same = 0;
        }
        if (!same) {
            char hs[64], ws[64];
            shape_str(hs, sizeof hs, nd > 4 ? 4 : (int)nd, dims);
            shape_str(ws, sizeof ws, t->ndim, t->dims);
            pc_set_err(err, errlen, "weights file %s: tensor %s has shape %s, the model (depth %d, width %d) "
                       "needs %s", path, name, hs, net->depth, net->width, ws);
            rc = PC_EINVAL;
            break;
        }
        size_t n = 1;
        for (int d = 0; d < t->ndim; d++)
            n *= (size_t)t->dims[d];
        uint64_t off = rd64(e + 72);
        if ((off & 3) || off < NET_HEADER || off > size - NET_DIGEST || n * 4 > size - NET_DIGEST - off) {
            pc_set_err(err, errlen, "weights file %s: tensor %s's data (%zu bytes at offset %llu) lies outside "
                       "the file's data", path, name, n * 4, (unsigned long long)off);
            rc = PC_EINVAL;
            break;
        }
        for (size_t k = 0; k < n; k++) {
            uint32_t u = rd32(b + off + 4 * k);
            memcpy(&fp[k], &u, 4);
            if (!isfinite(fp[k])) {
                pc_set_err(err, errlen, "weights file %s: tensor %s, element %zu is not a finite number", path,
                           name, k);
                rc = PC_EINVAL;
                break;
            }
        }
        *t->dst = fp;
        t->seen = 1;
        fp += (n + 15) & ~(size_t)15;
    }
    free(b);
    for (int k = 0; k < nw && !rc; k++)
        if (!w[k].seen) {
            pc_set_err(err, errlen, "weights file %s: the model's tensor %s is missing", path, w[k].name);
            rc = PC_EINVAL;
        }
    if (rc) {
        free(net);
        return rc;
    }
    *out = net;
    return PC_OK;
}

void pc_net_free(pc_net *net) { free(net); }

pc_net *pc_net_copy(const pc_net *net)
{
    pc_net *c = NULL;
    if (!net || posix_memalign((void **)&c, 64, net->bytes) != 0)
        return NULL;
    memcpy(c, net, net->bytes);
    /* every tensor pointer into the new block, at the same offset */
    const uint8_t *ob = (const uint8_t *)net;
    uint8_t *nb = (uint8_t *)c;
    pc_net_conv *convs[PC_NET_MAX_DEPTH + 5];
    int n = 0;
    convs[n++] = &c->pack;
    for (int i = 0; i < c->depth; i++)
        convs[n++] = &c->main[i];
    convs[n++] = &c->residual;
    convs[n++] = &c->up;
    convs[n++] = &c->post;
    convs[n++] = &c->out;
    for (int i = 0; i < n; i++) {
        convs[i]->w = (const float *)(const void *)(nb + ((const uint8_t *)convs[i]->w - ob));
        convs[i]->b = (const float *)(const void *)(nb + ((const uint8_t *)convs[i]->b - ob));
    }
    return c;
}
