/* pto.c - reads and writes Hugin project files (.pto), the rig description
 * integrators calibrate with Hugin. Only the `p` (panorama) and `i` (image)
 * lines matter to panocap; `m`, `v`, `c`, `k` lines and comments are read
 * past. Every error names the file, the line and the field:
 *   rig.pto:7: i line (image 2): field v: 0 is not a field of view (0 < v < 180 for a rectilinear lens)
 */
#include "rig.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fields of an `i` line, in the order Hugin writes them. A value may be
 * "=N": the same as image N's. */
enum {
    F_W, F_H, F_F, F_V, F_RA, F_RB, F_RC, F_RD, F_RE, F_EEV, F_ER, F_EB, F_R, F_P, F_Y,
    F_TRX, F_TRY, F_TRZ, F_TPY, F_TPP, F_J, F_A, F_B, F_C, F_D, F_E, F_G, F_T,
    F_VA, F_VB, F_VC, F_VD, F_VX, F_VY, F_VM, F_COUNT
};
static const char *const ifield[F_COUNT] = {
    "w", "h", "f", "v", "Ra", "Rb", "Rc", "Rd", "Re", "Eev", "Er", "Eb", "r", "p", "y",
    "TrX", "TrY", "TrZ", "Tpy", "Tpp", "j", "a", "b", "c", "d", "e", "g", "t",
    "Va", "Vb", "Vc", "Vd", "Vx", "Vy", "Vm"};
/* Hugin's defaults for fields a line leaves out (pto_gen writes them all). */
static const double idefault[F_COUNT] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0};

typedef struct iline {
    double val[F_COUNT];
    int link[F_COUNT]; /* -1, or the image whose value this field takes */
    int given[F_COUNT];
    int crop[4];
    char file[PC_RIG_PATH_LEN];
    int line;
} iline;

typedef struct parser {
    const char *name;
    int line;
    char *err;
    size_t errlen;
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ps->errlen)
        snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->name, ps->line, msg);
    return -1;
}

/* The longest field name of `names` that `s` starts with (names sorted so
 * that "Eev" is tried before "E"); -1 if none. */
static int match_field(const char *s, const char *const *names, int n)
{
    int best = -1;
    size_t bl = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]);
        if (l > bl && strncmp(s, names[i], l) == 0) {
            best = i;
            bl = l;
        }
    }
    return best;
}

/* A number at *s (strtod syntax); advances *s. 0, or -1 if none. */
static int read_number(const char **s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(*s, &end);
    if (end == *s || errno == ERANGE || !isfinite(v))
        return -1;
    if (*end && !isspace((unsigned char)*end))
        return -1;
    *out = v;
    *s = end;
    return 0;
}

/* n"..." (also for the p line); advances *s past the closing quote. */
static int read_quoted(parser *ps, const char **s, char *out, size_t outlen, const char *what)
{
    const char *q = *s;
    if (*q != '"')
        return fail(ps, "%s: expected a quoted string, e.g. n\"camera0.png\"", what);
    const char *e = strchr(q + 1, '"');
    if (!e)
        return fail(ps, "%s: the quoted string has no closing quote", what);
    size_t n = (size_t)(e - q - 1);
    if (n >= outlen)
        return fail(ps, "%s: longer than %zu characters", what, outlen - 1);
    memcpy(out, q + 1, n);
    out[n] = '\0';
    *s = e + 1;
    return 0;
}

/* S left,right,top,bottom */
static int read_crop(parser *ps, const char **s, int *crop, const char *what)
{
    const char *p = *s;
    for (int k = 0; k < 4; k++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 1000000)
            return fail(ps, "%s: expected S<left>,<right>,<top>,<bottom> (pixels)", what);
        crop[k] = (int)v;
        p = end;
        if (k < 3) {
            if (*p != ',')
                return fail(ps, "%s: expected S<left>,<right>,<top>,<bottom> (pixels)", what);
            p++;
        }
    }
    if (*p && !isspace((unsigned char)*p))
        return fail(ps, "%s: expected S<left>,<right>,<top>,<bottom> (pixels)", what);
    if (crop[1] <= crop[0] || crop[3] <= crop[2])
        return fail(ps, "%s: the crop S%d,%d,%d,%d is empty (right must exceed left, bottom top)", what, crop[0],
                    crop[1], crop[2], crop[3]);
    *s = p;
    return 0;
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

static int parse_i(parser *ps, const char *s, int index, iline *il)
{
    char what[64];
    snprintf(what, sizeof what, "i line (image %d)", index);
    memset(il, 0, sizeof *il);
    for (int k = 0; k < F_COUNT; k++) {
        il->val[k] = idefault[k];
        il->link[k] = -1;
    }
    il->line = ps->line;
    for (s = skip_space(s); *s; s = skip_space(s)) {
        if (*s == 'n' && s[1] == '"') {
            s++;
            if (read_quoted(ps, &s, il->file, sizeof il->file, what))
                return -1;
            continue;
        }
        if (*s == 'S' && isdigit((unsigned char)s[1])) {
            s++;
            if (read_crop(ps, &s, il->crop, what))
                return -1;
            continue;
        }
        int f = match_field(s, ifield, F_COUNT);
        const char *tok = s;
        size_t toklen = strcspn(s, " \t\r\n");
        if (f < 0) {
            /* Known to Hugin, no effect on the picture panocap renders:
             * u (feather width), K/V masks, Vf (flat-field file, refused
             * below through Vm) */
            if (*s == 'u' || (*s == 'V' && s[1] == 'f')) {
                const char *q = strchr(s, '"');
                if (s[1] == 'f' && q == s + 2) {
                    char tmp[PC_RIG_PATH_LEN];
                    s = q;
                    if (read_quoted(ps, &s, tmp, sizeof tmp, what))
                        return -1;
                } else {
                    s += toklen;
                }
                continue;
            }
            return fail(ps, "%s: unknown field \"%.*s\" (panocap reads w h f v y p r a b c d e g t Eev Er Eb "
                            "Ra..Re Va..Vd Vx Vy Vm S n and Hugin's TrX TrY TrZ Tpy Tpp j)",
                        what, (int)(toklen > 20 ? 20 : toklen), tok);
        }
        s += strlen(ifield[f]);
        if (*s == '=') {
            char *end;
            long n = strtol(s + 1, &end, 10);
            if (end == s + 1 || (*end && !isspace((unsigned char)*end)))
                return fail(ps, "%s: field %s: expected =N, N an earlier image's number", what, ifield[f]);
            if (n < 0 || n >= index)
                return fail(ps, "%s: field %s: =%ld links to an image that is not an earlier one (0..%d)", what,
                            ifield[f], n, index - 1);
            il->link[f] = (int)n;
            il->given[f] = 1;
            s = end;
            continue;
        }
        if (read_number(&s, &il->val[f]))
            return fail(ps, "%s: field %s: \"%.*s\" is not a number", what, ifield[f],
                        (int)(toklen > 24 ? 24 : toklen), tok);
        il->given[f] = 1;
    }
    return 0;
}

/* Values in range, after links are resolved. */
static int check_i(parser *ps, const iline *il, int index, pc_rig_camera *c)
{
    char what[64];
    snprintf(what, sizeof what, "i line (image %d)", index);
    ps->line = il->line;
    const double *v = il->val;
    if (!il->given[F_W] || !il->given[F_H])
        return fail(ps, "%s: fields w and h (the image size) are required", what);
    if (v[F_W] < 8 || v[F_W] > 65536 || v[F_W] != floor(v[F_W]))
        return fail(ps, "%s: field w: %g is not an image width (8..65536)", what, v[F_W]);
    if (v[F_H] < 8 || v[F_H] > 65536 || v[F_H] != floor(v[F_H]))
        return fail(ps, "%s: field h: %g is not an image height (8..65536)", what, v[F_H]);
    int lens = (int)v[F_F];
    if (v[F_F] != lens || (lens != PC_LENS_RECTILINEAR && lens != PC_LENS_FISHEYE_CIRCULAR &&
                           lens != PC_LENS_FISHEYE_FULL))
        return fail(ps, "%s: field f: lens projection %g is not supported (panocap models 0 rectilinear, "
                        "2 circular fisheye, 3 full-frame fisheye)", what, v[F_F]);
    double vmax = lens == PC_LENS_RECTILINEAR ? 180.0 : 360.0;
    if (!(v[F_V] > 0 && v[F_V] < vmax))
        return fail(ps, "%s: field v: %g is not a field of view (0 < v < %g degrees for this lens)", what, v[F_V],
                    vmax);
    for (int k = F_TRX; k <= F_TPP; k++)
        if (v[k] != 0)
            return fail(ps, "%s: field %s: %g: camera translation (Hugin's mosaic mode) is not supported; "
                            "panocap models cameras turning about one point", what, ifield[k], v[k]);
    static const int angle[3] = {F_Y, F_P, F_R};
    for (int k = 0; k < 3; k++)
        if (fabs(v[angle[k]]) > 360.0)
            return fail(ps, "%s: field %s: %g is not an angle in degrees (-360..360)", what, ifield[angle[k]],
                        v[angle[k]]);
    double dd = 1.0 - v[F_A] - v[F_B] - v[F_C];
    if (fabs(v[F_A]) > 1 || fabs(v[F_B]) > 1 || fabs(v[F_C]) > 1 || dd <= 0.05)
        return fail(ps, "%s: fields a b c: %g %g %g is not a lens distortion (|a|,|b|,|c| <= 1 and "
                        "d = 1-a-b-c > 0.05)", what, v[F_A], v[F_B], v[F_C]);
    if (fabs(v[F_D]) > v[F_W] || fabs(v[F_E]) > v[F_H])
        return fail(ps, "%s: fields d e: the lens shift %g,%g leaves the image", what, v[F_D], v[F_E]);
    if (fabs(v[F_G]) > 1 || fabs(v[F_T]) > 1)
        return fail(ps, "%s: fields g t: shear %g %g is out of range (-1..1)", what, v[F_G], v[F_T]);
    if (!(fabs(v[F_EEV]) <= 20))
        return fail(ps, "%s: field Eev: %g is not an exposure value (-20..20)", what, v[F_EEV]);
    if (!(v[F_ER] > 0.01 && v[F_ER] < 100) || !(v[F_EB] > 0.01 && v[F_EB] < 100))
        return fail(ps, "%s: fields Er Eb: %g %g are not white-balance multipliers (0.01..100)", what, v[F_ER],
                    v[F_EB]);
    int vm = (int)v[F_VM];
    if (v[F_VM] != vm || (vm != 0 && vm != 5 && vm != 1))
        return fail(ps, "%s: field Vm: vignetting mode %g is not supported (0 none, 1 or 5 radial; "
                        "flat-field images are not)", what, v[F_VM]);
    for (int k = F_RA; k <= F_RE; k++)
        if (!(fabs(v[k]) <= 10))
            return fail(ps, "%s: field %s: %g is not an EMoR response coefficient (-10..10)", what, ifield[k],
                        v[k]);
    for (int k = F_VA; k <= F_VD; k++)
        if (!(fabs(v[k]) <= 100))
            return fail(ps, "%s: field %s: %g is not a vignetting coefficient (-100..100)", what, ifield[k], v[k]);
    if (il->crop[1] > v[F_W] || il->crop[3] > v[F_H])
        return fail(ps, "%s: field S: the crop S%d,%d,%d,%d leaves the %gx%g image", what, il->crop[0],
                    il->crop[1], il->crop[2], il->crop[3], v[F_W], v[F_H]);
    memset(c, 0, sizeof *c);
    c->w = (int)v[F_W];
    c->h = (int)v[F_H];
    c->lens = lens;
    c->hfov = v[F_V];
    c->yaw = v[F_Y];
    c->pitch = v[F_P];
    c->roll = v[F_R];
    c->a = v[F_A];
    c->b = v[F_B];
    c->c = v[F_C];
    c->d = v[F_D];
    c->e = v[F_E];
    c->g = v[F_G];
    c->t = v[F_T];
    c->eev = v[F_EEV];
    c->er = v[F_ER];
    c->eb = v[F_EB];
    /* Vm0: Hugin applies no vignetting correction */
    c->va = vm ? v[F_VA] : 1.0;
    c->vb = vm ? v[F_VB] : 0.0;
    c->vc = vm ? v[F_VC] : 0.0;
    c->vd = vm ? v[F_VD] : 0.0;
    c->vx = v[F_VX];
    c->vy = v[F_VY];
    c->vm = vm;
    for (int k = 0; k < 5; k++)
        c->resp[k] = v[F_RA + k];
    memcpy(c->crop, il->crop, sizeof c->crop);
    snprintf(c->file, sizeof c->file, "%s", il->file);
    c->line = il->line;
    return 0;
}

static const char *const pfield[] = {"f", "w", "h", "v", "E", "R", "k", "b", "d", "T", "u"};
enum { P_F, P_W, P_H, P_V, P_E, P_R, P_K, P_B, P_D, P_T, P_U, P_COUNT };

static int parse_p(parser *ps, const char *s, pc_rig_canvas *p)
{
    const char *what = "p line";
    double val[P_COUNT] = {0};
    int given[P_COUNT] = {0};
    memset(p, 0, sizeof *p);
    p->line = ps->line;
    for (s = skip_space(s); *s; s = skip_space(s)) {
        size_t toklen = strcspn(s, " \t\r\n");
        if ((*s == 'n' || *s == 'T') && s[1] == '"') {
            char tmp[512];
            s++;
            if (read_quoted(ps, &s, tmp, sizeof tmp, what))
                return -1;
            continue;
        }
        if (*s == 'S' && isdigit((unsigned char)s[1])) {
            s++;
            if (read_crop(ps, &s, p->crop, what))
                return -1;
            continue;
        }
        int f = match_field(s, pfield, P_COUNT);
        if (f < 0)
            return fail(ps, "%s: unknown field \"%.*s\" (panocap reads f w h v E R S n)", what,
                        (int)(toklen > 20 ? 20 : toklen), s);
        const char *tok = s;
        s += strlen(pfield[f]);
        if (read_number(&s, &val[f]))
            return fail(ps, "%s: field %s: \"%.*s\" is not a number", what, pfield[f],
                        (int)(toklen > 24 ? 24 : toklen), tok);
        given[f] = 1;
    }
    if (!given[P_W] || !given[P_H] || !given[P_V])
        return fail(ps, "%s: fields w, h and v (canvas size and field of view) are required", what);
    int proj = (int)val[P_F];
    if (val[P_F] != proj || proj < PC_PROJ_RECTILINEAR || proj > PC_PROJ_EQUIRECT)
        return fail(ps, "%s: field f: projection %g is not supported (panocap renders 0 rectilinear, "
                        "1 cylindrical, 2 equirectangular)", what, val[P_F]);
    if (val[P_W] < 16 || val[P_W] > 65536 || val[P_W] != floor(val[P_W]))
        return fail(ps, "%s: field w: %g is not a canvas width (16..65536)", what, val[P_W]);
    if (val[P_H] < 16 || val[P_H] > 65536 || val[P_H] != floor(val[P_H]))
        return fail(ps, "%s: field h: %g is not a canvas height (16..65536)", what, val[P_H]);
    double vmax = proj == PC_PROJ_RECTILINEAR ? 180.0 : 360.0;
    if (!(val[P_V] > 0 && val[P_V] <= vmax) || (proj == PC_PROJ_RECTILINEAR && val[P_V] >= 180.0))
        return fail(ps, "%s: field v: %g is not a field of view for this projection (0 < v %s %g degrees)", what,
                    val[P_V], proj == PC_PROJ_RECTILINEAR ? "<" : "<=", vmax);
    if (!(fabs(val[P_E]) <= 20))
        return fail(ps, "%s: field E: %g is not an exposure value (-20..20)", what, val[P_E]);
    if (val[P_R] != 0 && val[P_R] != 1)
        return fail(ps, "%s: field R: %g is not an output response (0 = the images', 1 = linear)", what, val[P_R]);
    p->proj = proj;
    p->w = (int)val[P_W];
    p->h = (int)val[P_H];
    p->hfov = val[P_V];
    p->exposure = val[P_E];
    p->response = (int)val[P_R];
    if ((p->crop[1] || p->crop[3]) && (p->crop[1] > p->w || p->crop[3] > p->h))
        return fail(ps, "%s: field S: the crop S%d,%d,%d,%d leaves the %dx%d canvas", what, p->crop[0], p->crop[1],
                    p->crop[2], p->crop[3], p->w, p->h);
    return 0;
}

int pc_rig_parse(const char *text, const char *name, pc_rig *rig, char *err, size_t errlen)
{
    parser ps = {name, 0, err, errlen};
    iline *lines = calloc(PC_RIG_MAX_CAMERAS, sizeof *lines);
    int n = 0, have_p = 0, rc = -1;
    if (!lines)
        return fail(&ps, "out of memory");
    memset(rig, 0, sizeof *rig);
    snprintf(rig->path, sizeof rig->path, "%s", name);
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, "\n");
        char buf[8192];
        ps.line++;
        if (len >= sizeof buf) {
            fail(&ps, "line longer than %zu characters", sizeof buf - 1);
            goto out;
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        s += len + (s[len] == '\n');
        if (len && buf[len - 1] == '\r')
            buf[len - 1] = '\0';
        if (buf[0] == 'p' && (buf[1] == ' ' || buf[1] == '\t')) {
            if (have_p) {
                fail(&ps, "a second p line (the first is line %d)", rig->pano.line);
                goto out;
            }
            if (parse_p(&ps, buf + 1, &rig->pano))
                goto out;
            have_p = 1;
        } else if (buf[0] == 'i' && (buf[1] == ' ' || buf[1] == '\t')) {
            if (n == PC_RIG_MAX_CAMERAS) {
                fail(&ps, "more than %d i lines (images); panocap takes at most %d cameras", PC_RIG_MAX_CAMERAS,
                     PC_RIG_MAX_CAMERAS);
                goto out;
            }
            if (parse_i(&ps, buf + 1, n, &lines[n]))
                goto out;
            n++;
        }
        /* m, v, c, k, #, o (PTGui), blank: nothing panocap renders */
    }
    if (!have_p) {
        ps.line = 0;
        if (errlen)
            snprintf(err, errlen, "%s: no p line (the panorama's projection and size): not a Hugin project?", name);
        goto out;
    }
    if (n == 0) {
        if (errlen)
            snprintf(err, errlen, "%s: no i lines (images): not a Hugin project of a rig?", name);
        goto out;
    }
    /* links: a field "=N" takes image N's value (N earlier, so resolved) */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < F_COUNT; k++)
            if (lines[i].link[k] >= 0)
                lines[i].val[k] = lines[lines[i].link[k]].val[k];
    for (int i = 0; i < n; i++)
        if (check_i(&ps, &lines[i], i, &rig->cam[i]))
            goto out;
    rig->ncam = n;
    rc = 0;
out:
    free(lines);
    return rc;
}

int pc_rig_load(const char *path, pc_rig *rig, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the rig file: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    int rc = -1;
    while (buf) {
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (len < cap)
            break;
        if (cap >= (64u << 20)) {
            snprintf(err, errlen, "%s: larger than 64 MiB: not a Hugin project", path);
            goto out;
        }
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        goto out;
    }
    if (memchr(buf, '\0', len)) {
        snprintf(err, errlen, "%s: contains NUL bytes: not a Hugin project (a text file)", path);
        goto out;
    }
    buf[len] = '\0';
    rc = pc_rig_parse(buf, path, rig, err, errlen);
out:
    free(buf);
    fclose(f);
    return rc;
}

int pc_rig_save(const pc_rig *rig, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    const pc_rig_canvas *p = &rig->pano;
    fprintf(f, "# hugin project file\n#hugin_ptoversion 2\n");
    fprintf(f, "p f%d w%d h%d v%.17g E%.17g R%d", p->proj, p->w, p->h, p->hfov, p->exposure, p->response);
    if (p->crop[1] || p->crop[3])
        fprintf(f, " S%d,%d,%d,%d", p->crop[0], p->crop[1], p->crop[2], p->crop[3]);
    fprintf(f, " n\"TIFF_m c:NONE\"\nm i0\n\n");
    for (int i = 0; i < rig->ncam; i++) {
        const pc_rig_camera *c = &rig->cam[i];
        fprintf(f, "i w%d h%d f%d v%.17g Ra%.17g Rb%.17g Rc%.17g Rd%.17g Re%.17g Eev%.17g Er%.17g Eb%.17g "
                   "r%.17g p%.17g y%.17g TrX0 TrY0 TrZ0 Tpy0 Tpp0 j0 a%.17g b%.17g c%.17g d%.17g e%.17g "
                   "g%.17g t%.17g Va%.17g Vb%.17g Vc%.17g Vd%.17g Vx%.17g Vy%.17g Vm%d",
                c->w, c->h, c->lens, c->hfov, c->resp[0], c->resp[1], c->resp[2], c->resp[3], c->resp[4], c->eev,
                c->er, c->eb, c->roll, c->pitch, c->yaw, c->a, c->b, c->c, c->d, c->e, c->g, c->t, c->va, c->vb,
                c->vc, c->vd, c->vx, c->vy, c->vm ? c->vm : 5);
        if (c->crop[1] || c->crop[3])
            fprintf(f, " S%d,%d,%d,%d", c->crop[0], c->crop[1], c->crop[2], c->crop[3]);
        fprintf(f, " n\"%s\"\n", c->file);
    }
    if (fclose(f)) {
        snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int pc_rig_check_cameras(const pc_rig *rig, int ncam, int w, int h, char *err, size_t errlen)
{
    if (rig->ncam != ncam) {
        snprintf(err, errlen, "%s: %d i lines (images) for %d cameras: the .pto's images map to the cameras in "
                              "order, one each", rig->path, rig->ncam, ncam);
        return -1;
    }
    for (int i = 0; i < ncam; i++) {
        const pc_rig_camera *c = &rig->cam[i];
        if (c->w != w || c->h != h) {
            snprintf(err, errlen, "%s:%d: i line (image %d): fields w h: %dx%d, but camera %d delivers %dx%d",
                     rig->path, c->line, i, c->w, c->h, i, w, h);
            return -1;
        }
    }
    return 0;
}
