/* pto.c - reads and writes Hugin project files (.pto), the rig description
 * integrators calibrate with Hugin. What panocap renders comes from the `p`
 * (panorama) and `i` (image) lines; `#-hugin` comments say which images
 * are disabled, `k` lines (masks) are counted; `m`, `v`, `c` lines and
 * other comments are read past. Values mean what Hugin 2022's loader makes
 * of them (Panorama.cpp, PTScriptParsing.cpp), checked with its tools
 * (tests/test_rig_pto.c). Every error names the file, the line and the
 * field (control bytes it quotes escaped, \x1b for ESC):
 *   rig.pto:7: i line (image 2): field v: 0 is not a field of view (0.1 <= v < 180 degrees for this lens)
 */
#include "rig.h"

#include "errmsg.h"

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
    F_VA, F_VB, F_VC, F_VD, F_VX, F_VY, F_VM, F_RT, F_U, F_COUNT
};
static const char *const ifield[F_COUNT] = {
    "w", "h", "f", "v", "Ra", "Rb", "Rc", "Rd", "Re", "Eev", "Er", "Eb", "r", "p", "y",
    "TrX", "TrY", "TrZ", "Tpy", "Tpp", "j", "a", "b", "c", "d", "e", "g", "t",
    "Va", "Vb", "Vc", "Vd", "Vx", "Vy", "Vm", "Rt", "u"};
/* Hugin's values for fields a line leaves out (pto_gen writes them all);
 * w, h, f and v have none: a line without them is refused. */
static const double idefault[F_COUNT] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0, 0};

#define LINE_MAX_LEN 8191 /* a p or i line; other lines (masks) may be longer */

typedef struct iline {
    double val[F_COUNT];
    int link[F_COUNT]; /* -1, or the image whose value this field takes */
    int given[F_COUNT];
    int crop[4];
    int has_crop;
    char file[PC_RIG_PATH_LEN];
    int line;
} iline;

typedef struct parser {
    const char *name;
    int line;
    char *err;
    size_t errlen;
} parser;

static int fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *ps, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ps->errlen) { /* the file's bytes it quotes, control bytes escaped */
        snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->name, ps->line, msg);
        pc_escape_ctl_inplace(ps->err, ps->errlen);
    }
    return -1;
}

/* The longest field name of `names` that `s` starts with (so that "Eev" wins
 * over "E"); -1 if none. */
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

static int is_end(char c)
{
    return c == '\0' || isspace((unsigned char)c);
}

/* A decimal number at *s ([+-]digits[.digits][e[+-]digits], as Hugin
 * writes them; no hex, inf or nan), ending at a blank or the line's end;
 * advances *s. 0, or -1 if none. */
static int read_number(const char **s, double *out)
{
    const char *p = *s;
    if (*p == '+' || *p == '-')
        p++;
    int digits = 0;
    while (isdigit((unsigned char)*p))
        p++, digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    if (!digits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (!is_end(*p))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(*s, &end);
    if (end != p || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    *s = p;
    return 0;
}

/* "..." at *s; advances *s past the closing quote. out may be NULL (the
 * value is not kept). */
static int read_quoted(parser *ps, const char **s, char *out, size_t outlen, const char *what, const char *field)
{
    const char *q = *s;
    if (*q != '"')
        return fail(ps, "%s: field %s: expected a quoted string, e.g. %s\"camera0.png\"", what, field, field);
    const char *e = strchr(q + 1, '"');
    if (!e)
        return fail(ps, "%s: field %s: the quoted string has no closing quote", what, field);
    size_t n = (size_t)(e - q - 1);
    if (out) {
        if (n >= outlen)
            return fail(ps, "%s: field %s: longer than %zu characters", what, field, outlen - 1);
        memcpy(out, q + 1, n);
        out[n] = '\0';
    }
    *s = e + 1;
    if (!is_end(**s))
        return fail(ps, "%s: field %s: no blank after the closing quote", what, field);
    return 0;
}

/* S (or C) left,right,top,bottom; Hugin writes negative values for a
 * circular fisheye's crop (its circle may pass the image's edges). */
static int read_crop(parser *ps, const char **s, int *crop, const char *what, char field)
{
    const char *p = *s;
    for (int k = 0; k < 4; k++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || !isdigit((unsigned char)end[-1]) || errno || v < -1000000 || v > 1000000)
            return fail(ps, "%s: field %c: expected %c<left>,<right>,<top>,<bottom> (pixels)", what, field, field);
        crop[k] = (int)v;
        p = end;
        if (k < 3) {
            if (*p != ',')
                return fail(ps, "%s: field %c: expected %c<left>,<right>,<top>,<bottom> (pixels)", what, field,
                            field);
            p++;
        }
    }
    if (!is_end(*p))
        return fail(ps, "%s: field %c: expected %c<left>,<right>,<top>,<bottom> (pixels)", what, field, field);
    if (crop[1] <= crop[0] || crop[3] <= crop[2])
        return fail(ps, "%s: field %c: the crop %c%d,%d,%d,%d is empty (right must exceed left, bottom top)", what,
                    field, field, crop[0], crop[1], crop[2], crop[3]);
    *s = p;
    return 0;
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

static int token_len(const char *s)
{
    size_t n = strcspn(s, " \t\r\n");
    return (int)(n > 24 ? 24 : n);
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
    int have_name = 0;
    for (s = skip_space(s); *s; s = skip_space(s)) {
        const char *tok = s;
        if (*s == 'n' && s[1] == '"') {
            if (have_name)
                return fail(ps, "%s: field n: given twice", what);
            s++;
            if (read_quoted(ps, &s, il->file, sizeof il->file, what, "n"))
                return -1;
            have_name = 1;
            continue;
        }
        if (*s == 'V' && s[1] == 'f' && s[2] == '"') { /* flat-field file: Hugin 2022 does not apply it */
            s += 2;
            if (read_quoted(ps, &s, NULL, 0, what, "Vf"))
                return -1;
            continue;
        }
        if ((*s == 'S' || *s == 'C') && (isdigit((unsigned char)s[1]) || s[1] == '-')) {
            if (il->has_crop)
                return fail(ps, "%s: field %c: a second crop (S or C) on the line", what, *s);
            s++;
            if (read_crop(ps, &s, il->crop, what, tok[0]))
                return -1;
            il->has_crop = 1;
            continue;
        }
        int f = match_field(s, ifield, F_COUNT);
        if (f < 0)
            return fail(ps, "%s: unknown field \"%.*s\" (panocap reads Hugin's w h f v y p r a b c d e g t "
                            "Eev Er Eb Ra..Re Rt Va..Vd Vx Vy Vm Vf S C n TrX TrY TrZ Tpy Tpp j u)",
                        what, token_len(tok), tok);
        if (il->given[f])
            return fail(ps, "%s: field %s: given twice", what, ifield[f]);
        s += strlen(ifield[f]);
        if (*s == '=') {
            char *end;
            errno = 0;
            long n = strtol(s + 1, &end, 10);
            if (end == s + 1 || !is_end(*end) || errno)
                return fail(ps, "%s: field %s: \"%.*s\": expected =N, N an earlier image's number", what, ifield[f],
                            token_len(tok), tok);
            if (n < 0 || n >= index)
                return fail(ps, "%s: field %s: =%ld links to image %ld, not an earlier one (Hugin links to the "
                                "image that holds the value)", what, ifield[f], n, n);
            il->link[f] = (int)n;
            il->given[f] = 1;
            s = end;
            continue;
        }
        if (read_number(&s, &il->val[f]))
            return fail(ps, "%s: field %s: \"%.*s\" is not a number", what, ifield[f], token_len(tok), tok);
        il->given[f] = 1;
    }
    return 0;
}

/* The smallest vignetting factor over camera c's image (the correction
 * divides by it): the polynomial in q on [0, q at the farthest corner]. */
static double min_vignetting(const double *v, double w, double h)
{
    const double cx = fabs(v[F_VX]) + w / 2, cy = fabs(v[F_VY]) + h / 2;
    const double qmax = (cx * cx + cy * cy) / (w * w / 4 + h * h / 4);
    double m = 1e30;
    for (int k = 0; k <= 512; k++) {
        const double q = qmax * k / 512;
        const double f = ((v[F_VD] * q + v[F_VC]) * q + v[F_VB]) * q + v[F_VA];
        if (f < m)
            m = f;
    }
    return m;
}

/* Values in range, after links are resolved. */
static int check_i(parser *ps, const iline *il, int index, pc_rig_camera *c)
{
    char what[64];
    snprintf(what, sizeof what, "i line (image %d)", index);
    ps->line = il->line;
    const double *v = il->val;
    static const int required[] = {F_W, F_H, F_F, F_V};
    static const char *const meaning[] = {"the image width", "the image height", "the lens projection",
                                          "the horizontal field of view"};
    for (int k = 0; k < 4; k++)
        if (!il->given[required[k]])
            return fail(ps, "%s: field %s (%s) is missing", what, ifield[required[k]], meaning[k]);
    if (v[F_W] < 8 || v[F_W] > 65536 || v[F_W] != floor(v[F_W]))
        return fail(ps, "%s: field w: %g is not an image width (8..65536)", what, v[F_W]);
    if (v[F_H] < 8 || v[F_H] > 65536 || v[F_H] != floor(v[F_H]))
        return fail(ps, "%s: field h: %g is not an image height (8..65536)", what, v[F_H]);
    const double w = v[F_W], h = v[F_H];
    int lens = (int)v[F_F];
    if (v[F_F] != lens || (lens != PC_LENS_RECTILINEAR && lens != PC_LENS_FISHEYE_CIRCULAR &&
                           lens != PC_LENS_FISHEYE_FULL))
        return fail(ps, "%s: field f: lens projection %g is not supported (panocap models 0 rectilinear, "
                        "2 circular fisheye, 3 full-frame fisheye; Hugin's 1, 4, 8, 10, 20, 21 are not)",
                    what, v[F_F]);
    double vmax = lens == PC_LENS_RECTILINEAR ? 180.0 : 360.0;
    if (!(v[F_V] > 0 && v[F_V] < vmax))
        return fail(ps, "%s: field v: %g is not a field of view (%g <= v < %g degrees for this lens)", what, v[F_V],
                    PC_RIG_MIN_HFOV, vmax);
    if (v[F_V] < PC_RIG_MIN_HFOV)
        return fail(ps, "%s: field v: %g degrees is narrower than any lens (%g <= v < %g degrees for this lens; the "
                        "longest telephotos see about 1 degree, and the camera model cannot resolve the pixels of a "
                        "camera under %g)", what, v[F_V], PC_RIG_MIN_HFOV, vmax, PC_RIG_MIN_HFOV);
    /* Tpy Tpp orient the translation plane: without a translation they do nothing */
    for (int k = F_TRX; k <= F_TRZ; k++)
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
    if (fabs(v[F_D]) > w || fabs(v[F_E]) > h)
        return fail(ps, "%s: fields d e: the lens shift %g,%g leaves the image", what, v[F_D], v[F_E]);
    if (fabs(v[F_G]) > 1 || fabs(v[F_T]) > 1)
        return fail(ps, "%s: fields g t: shear %g %g is out of range (-1..1)", what, v[F_G], v[F_T]);
    if (!(fabs(v[F_EEV]) <= 20))
        return fail(ps, "%s: field Eev: %g is not an exposure value (-20..20)", what, v[F_EEV]);
    if (!(v[F_ER] > 0.01 && v[F_ER] < 100) || !(v[F_EB] > 0.01 && v[F_EB] < 100))
        return fail(ps, "%s: fields Er Eb: %g %g are not white-balance multipliers (0.01..100)", what, v[F_ER],
                    v[F_EB]);
    const int rt = (int)v[F_RT];
    if (v[F_RT] != rt || (rt != 0 && rt != 1))
        return fail(ps, "%s: field Rt: response type %g is not supported (0 EMoR curve Ra..Re, 1 linear)", what,
                    v[F_RT]);
    for (int k = F_RA; k <= F_RE; k++)
        if (!(fabs(v[k]) <= 10))
            return fail(ps, "%s: field %s: %g is not an EMoR response coefficient (-10..10)", what, ifield[k],
                        v[k]);
    /* Hugin's loader turns every mode but 5 (radial, by division) into no
     * vignetting correction at all, whatever Va..Vd say (nona agrees) */
    const int vm = (int)v[F_VM];
    if (v[F_VM] != vm || vm < 0 || vm > 7)
        return fail(ps, "%s: field Vm: %g is not a vignetting mode (Hugin's 0..7; 5 corrects)", what, v[F_VM]);
    if (vm == 5) {
        for (int k = F_VA; k <= F_VD; k++)
            if (!(fabs(v[k]) <= 100))
                return fail(ps, "%s: field %s: %g is not a vignetting coefficient (-100..100)", what, ifield[k],
                            v[k]);
        if (fabs(v[F_VX]) > w || fabs(v[F_VY]) > h)
            return fail(ps, "%s: fields Vx Vy: the vignetting centre shift %g,%g leaves the image", what, v[F_VX],
                        v[F_VY]);
        double m = min_vignetting(v, w, h);
        if (m < 0.01)
            return fail(ps, "%s: fields Va Vb Vc Vd: the vignetting factor falls to %.3g inside the image (the "
                            "correction divides by it; it must stay above 0.01)", what, m);
    }
    const int *cr = il->crop;
    if (il->has_crop) {
        if (lens == PC_LENS_FISHEYE_CIRCULAR) {
            if (cr[1] - cr[0] > 4 * w || cr[3] - cr[2] > 4 * h || cr[1] <= 0 || cr[0] >= w || cr[3] <= 0 ||
                cr[2] >= h)
                return fail(ps, "%s: field S: the circular crop S%d,%d,%d,%d does not fit the %gx%g image", what,
                            cr[0], cr[1], cr[2], cr[3], w, h);
        } else if (cr[0] < 0 || cr[2] < 0 || cr[1] > w || cr[3] > h) {
            return fail(ps, "%s: field S: the crop S%d,%d,%d,%d leaves the %gx%g image", what, cr[0], cr[1], cr[2],
                        cr[3], w, h);
        }
    }
    memset(c, 0, sizeof *c);
    c->w = (int)w;
    c->h = (int)h;
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
    c->va = vm == 5 ? v[F_VA] : 1.0;
    c->vb = vm == 5 ? v[F_VB] : 0.0;
    c->vc = vm == 5 ? v[F_VC] : 0.0;
    c->vd = vm == 5 ? v[F_VD] : 0.0;
    c->vx = v[F_VX];
    c->vy = v[F_VY];
    c->vm = vm;
    c->response = rt;
    for (int k = 0; k < 5; k++)
        c->resp[k] = v[F_RA + k];
    if (il->has_crop)
        memcpy(c->crop, il->crop, sizeof c->crop);
    snprintf(c->file, sizeof c->file, "%s", il->file);
    c->line = il->line;
    return 0;
}

/* Fields of the `p` line: numbers, except T (the output pixel type, a
 * word), S (the crop), P"..." (projection parameters) and n"..." (the
 * output format), which panocap reads past or keeps. */
enum { P_F, P_W, P_H, P_V, P_E, P_R, P_K, P_B, P_D, P_U, P_COUNT };
static const char *const pfield[P_COUNT] = {"f", "w", "h", "v", "E", "R", "k", "b", "d", "u"};

static int parse_p(parser *ps, const char *s, pc_rig_canvas *p)
{
    const char *what = "p line";
    double val[P_COUNT] = {0};
    int given[P_COUNT] = {0}, have_crop = 0;
    memset(p, 0, sizeof *p);
    p->line = ps->line;
    for (s = skip_space(s); *s; s = skip_space(s)) {
        const char *tok = s;
        if ((*s == 'n' || *s == 'P' || *s == 'T') && s[1] == '"') {
            char field[2] = {*s, 0};
            s++;
            if (read_quoted(ps, &s, NULL, 0, what, field))
                return -1;
            continue;
        }
        if (*s == 'T' && isalpha((unsigned char)s[1])) { /* T<pixel type>, e.g. TUINT8 */
            s += strcspn(s, " \t\r\n");
            continue;
        }
        if (*s == 'S' && (isdigit((unsigned char)s[1]) || s[1] == '-')) {
            if (have_crop)
                return fail(ps, "%s: field S: given twice", what);
            s++;
            if (read_crop(ps, &s, p->crop, what, 'S'))
                return -1;
            have_crop = 1;
            continue;
        }
        int f = match_field(s, pfield, P_COUNT);
        if (f < 0)
            return fail(ps, "%s: unknown field \"%.*s\" (panocap reads Hugin's f w h v E R S n T P k b d u)", what,
                        token_len(tok), tok);
        if (given[f])
            return fail(ps, "%s: field %s: given twice", what, pfield[f]);
        s += strlen(pfield[f]);
        if (read_number(&s, &val[f]))
            return fail(ps, "%s: field %s: \"%.*s\" is not a number", what, pfield[f], token_len(tok), tok);
        given[f] = 1;
    }
    static const int required[] = {P_F, P_W, P_H, P_V};
    static const char *const meaning[] = {"the projection", "the canvas width", "the canvas height",
                                          "the horizontal field of view"};
    for (int k = 0; k < 4; k++)
        if (!given[required[k]])
            return fail(ps, "%s: field %s (%s) is missing", what, pfield[required[k]], meaning[k]);
    const pc_proj_desc *pd = val[P_F] == floor(val[P_F]) && fabs(val[P_F]) < 1e6 ? pc_proj_from_pto((int)val[P_F]) : NULL;
    if (!pd) {
        char list[256];
        pc_proj_pto_list(list, sizeof list);
        return fail(ps, "%s: field f: projection %g is not supported (panocap renders %s)", what, val[P_F], list);
    }
    if (val[P_W] < 16 || val[P_W] > 65536 || val[P_W] != floor(val[P_W]))
        return fail(ps, "%s: field w: %g is not a canvas width (16..65536)", what, val[P_W]);
    if (val[P_H] < 16 || val[P_H] > 65536 || val[P_H] != floor(val[P_H]))
        return fail(ps, "%s: field h: %g is not a canvas height (16..65536)", what, val[P_H]);
    const double vmax = pd->max_hfov;
    const char *vbound = pd->max_open ? "<" : "<=";
    if (!(val[P_V] > 0 && val[P_V] <= vmax) || (pd->max_open && val[P_V] >= vmax))
        return fail(ps, "%s: field v: %g is not a field of view for this projection (%g <= v %s %g degrees)", what,
                    val[P_V], PC_RIG_MIN_HFOV, vbound, vmax);
    if (val[P_V] < PC_RIG_MIN_HFOV)
        return fail(ps, "%s: field v: %g degrees is narrower than any panorama (%g <= v %s %g degrees for this "
                        "projection; the cameras it shows see at least %g)", what, val[P_V], PC_RIG_MIN_HFOV,
                    vbound, vmax, PC_RIG_MIN_HFOV);
    if (!(fabs(val[P_E]) <= 20))
        return fail(ps, "%s: field E: %g is not an exposure value (-20..20)", what, val[P_E]);
    if (val[P_R] != 0 && val[P_R] != 1)
        return fail(ps, "%s: field R: %g is not an output mode (0 = LDR through image 0's response, 1 = HDR, "
                        "linear)", what, val[P_R]);
    p->proj = pd->id;
    p->w = (int)val[P_W];
    p->h = (int)val[P_H];
    p->hfov = val[P_V];
    p->exposure = val[P_E];
    p->response = (int)val[P_R];
    if (have_crop && (p->crop[0] < 0 || p->crop[2] < 0 || p->crop[1] > p->w || p->crop[3] > p->h))
        return fail(ps, "%s: field S: the crop S%d,%d,%d,%d leaves the %dx%d canvas", what, p->crop[0], p->crop[1],
                    p->crop[2], p->crop[3], p->w, p->h);
    return 0;
}

/* A `k` line (mask): "k i<image> t<type> p"<polygon>"": the image it is
 * on. The line (s .. end) is not copied: a polygon can be long. */
static int parse_k(parser *ps, const char *s, const char *end, int *image)
{
    while (s < end) {
        if (isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        const char *tok = s;
        while (s < end && !isspace((unsigned char)*s)) {
            if (*s++ == '"') { /* a quoted value: to its closing quote */
                while (s < end && *s != '"')
                    s++;
                s += s < end;
            }
        }
        if (*tok == 'i') {
            int n = 0, digits = 0;
            for (const char *d = tok + 1; d < s && isdigit((unsigned char)*d) && n < 1000000; d++, digits++)
                n = 10 * n + (*d - '0');
            if (!digits || tok + 1 + digits != s)
                return fail(ps, "k line (mask): field i: \"%.*s\" is not an image number",
                            (int)(s - tok > 24 ? 24 : s - tok), tok);
            *image = n;
            return 0;
        }
    }
    return fail(ps, "k line (mask): field i (the image it masks) is missing");
}

int pc_rig_parse(const char *text, const char *name, pc_rig *rig, char *err, size_t errlen)
{
    parser ps = {name, 0, err, errlen};
    iline *lines = calloc(PC_RIG_MAX_CAMERAS, sizeof *lines);
    char *buf = malloc(LINE_MAX_LEN + 1);
    int n = 0, have_p = 0, rc = -1, nhugin = 0;
    int disabled[PC_RIG_MAX_CAMERAS] = {0}, masks[PC_RIG_MAX_CAMERAS] = {0};
    int last_mask_image = -1, last_mask_line = 0; /* the highest image a k line names */
    memset(rig, 0, sizeof *rig);
    snprintf(rig->path, sizeof rig->path, "%s", name);
    if (!lines || !buf) {
        fail(&ps, "out of memory");
        goto out;
    }
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, "\n");
        const char *line = s;
        s += len + (s[len] == '\n');
        ps.line++;
        const char kind = line[0];
        const int blank_after = len > 1 && (line[1] == ' ' || line[1] == '\t');
        if (kind == '#') {
            /* "#-hugin  cropFactor=1 disabled": the k-th such line is about
             * image k (Hugin uses them when there is one per image) */
            if (len >= 8 && strncmp(line, "#-hugin ", 8) == 0) {
                if (nhugin < PC_RIG_MAX_CAMERAS)
                    for (size_t k = 8; k + 8 <= len; k++)
                        if (memcmp(line + k, "disabled", 8) == 0)
                            disabled[nhugin] = 1;
                nhugin++;
            }
            continue;
        }
        if (!((kind == 'p' || kind == 'i' || kind == 'k' || kind == 'o') && blank_after))
            continue; /* m, v, c, blank and others: nothing panocap renders */
        if (kind == 'o') {
            fail(&ps, "o line: PTOptimizer's result lines are not read (Hugin merges them into the i lines: "
                      "open the project in Hugin and save it)");
            goto out;
        }
        if (kind == 'k') { /* masks: can be long, read without copying the polygon */
            int image = -1;
            if (parse_k(&ps, line + 1, line + len, &image))
                goto out;
            if (image < PC_RIG_MAX_CAMERAS)
                masks[image]++;
            if (image > last_mask_image) {
                last_mask_image = image;
                last_mask_line = ps.line;
            }
            continue;
        }
        if (len > LINE_MAX_LEN) {
            fail(&ps, "%c line longer than %d characters: not a Hugin project line", kind, LINE_MAX_LEN);
            goto out;
        }
        memcpy(buf, line, len);
        buf[len] = '\0';
        if (len && buf[len - 1] == '\r')
            buf[len - 1] = '\0';
        if (kind == 'p') {
            if (have_p) {
                fail(&ps, "a second p line (the first is line %d)", rig->pano.line);
                goto out;
            }
            if (parse_p(&ps, buf + 1, &rig->pano))
                goto out;
            have_p = 1;
        } else {
            if (n == PC_RIG_MAX_CAMERAS) {
                fail(&ps, "more than %d i lines (images); panocap takes at most %d cameras", PC_RIG_MAX_CAMERAS,
                     PC_RIG_MAX_CAMERAS);
                goto out;
            }
            if (parse_i(&ps, buf + 1, n, &lines[n]))
                goto out;
            n++;
        }
    }
    if (!have_p) {
        if (errlen)
            snprintf(err, errlen, "%s: no p line (the panorama's projection and size): not a Hugin project?", name);
        goto out;
    }
    if (n == 0) {
        if (errlen)
            snprintf(err, errlen, "%s: no i lines (images): not a Hugin project of a rig?", name);
        goto out;
    }
    if (last_mask_image >= n) {
        ps.line = last_mask_line;
        fail(&ps, "k line (mask): field i: image %d does not exist (%d i lines)", last_mask_image, n);
        goto out;
    }
    /* links: a field "=N" takes image N's value (N earlier, so resolved) */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < F_COUNT; k++)
            if (lines[i].link[k] >= 0)
                lines[i].val[k] = lines[lines[i].link[k]].val[k];
    for (int i = 0; i < n; i++) {
        if (check_i(&ps, &lines[i], i, &rig->cam[i]))
            goto out;
        rig->cam[i].disabled = nhugin == n && disabled[i];
        rig->cam[i].masks = masks[i];
    }
    rig->ncam = n;
    rc = 0;
out:
    free(buf);
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
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *p = buf; p < nul; p++)
            line += *p == '\n';
        snprintf(err, errlen, "%s:%d: a NUL byte: not a Hugin project (a text file)", path, line);
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
    const pc_proj_desc *pd = pc_proj_get(rig->pano.proj);
    if (!pd) {
        snprintf(err, errlen, "%s: not written: the canvas' projection %d is not one panocap knows", path,
                 rig->pano.proj);
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    const pc_rig_canvas *p = &rig->pano;
    fprintf(f, "# hugin project file\n#hugin_ptoversion 2\n");
    fprintf(f, "p f%d w%d h%d v%.17g E%.17g R%d", pd->pto, p->w, p->h, p->hfov, p->exposure, p->response);
    if (p->crop[1] || p->crop[3])
        fprintf(f, " S%d,%d,%d,%d", p->crop[0], p->crop[1], p->crop[2], p->crop[3]);
    fprintf(f, " n\"TIFF_m c:NONE\"\nm i0\n\n");
    for (int i = 0; i < rig->ncam; i++) {
        const pc_rig_camera *c = &rig->cam[i];
        fprintf(f, "#-hugin  cropFactor=1%s\n", c->disabled ? " disabled" : "");
        fprintf(f, "i w%d h%d f%d v%.17g Ra%.17g Rb%.17g Rc%.17g Rd%.17g Re%.17g Eev%.17g Er%.17g Eb%.17g "
                   "r%.17g p%.17g y%.17g TrX0 TrY0 TrZ0 Tpy0 Tpp0 j0 a%.17g b%.17g c%.17g d%.17g e%.17g "
                   "g%.17g t%.17g Va%.17g Vb%.17g Vc%.17g Vd%.17g Vx%.17g Vy%.17g Vm%d",
                c->w, c->h, c->lens, c->hfov, c->resp[0], c->resp[1], c->resp[2], c->resp[3], c->resp[4], c->eev,
                c->er, c->eb, c->roll, c->pitch, c->yaw, c->a, c->b, c->c, c->d, c->e, c->g, c->t, c->va, c->vb,
                c->vc, c->vd, c->vx, c->vy, c->vm);
        if (c->response)
            fprintf(f, " Rt%d", c->response);
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
