/* test_rig_pto.c - the .pto reader (rig/pto.c) on Hugin's own files and on
 * broken ones.
 *
 * Hugin's files: three camera pictures of a synthetic scene go through the
 * calibration chain an integrator runs (pto_gen, cpfind, autooptimiser
 * -a -m -l -s, pto_var to set the lens fields the optimiser leaves at 0,
 * pano_modify to a cylindrical canvas with an automatic crop); the result
 * is read and every field compared with the file's text (an independent
 * tokenizer here, "=N" links followed), its geometry with pano_trafo's,
 * its output size with nona's. Broken files (missing lines, unknown
 * projections, translations, nonsense values, bad syntax, NUL bytes, huge
 * lines) give an error naming the file, the line and the field; what
 * Hugin writes and reads (Vm modes, Rt, C crops, circular crops past the
 * image, disabled images, masks, TUINT8, CRLF) is accepted as Hugin reads
 * it. Without hugin-tools the Hugin checks skip with that reason. */
#include "image.h"
#include "rig.h"
#include "tap.h"
#include "rig_tiff.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* --- the scene ------------------------------------------------------------ */

/* A textured sphere: cells of 1.5 degrees with hashed colours over cells
 * of 5.3 degrees with hashed brightness (corners at every scale, nothing
 * repeats: cpfind finds points). */
static void scene(const float ray[3], uint8_t rgb[3])
{
    const double n = sqrt((double)ray[0] * ray[0] + (double)ray[1] * ray[1] + (double)ray[2] * ray[2]);
    const double lon = atan2(ray[0], ray[2]), lat = asin(ray[1] / n);
    const double d1 = 1.5 * M_PI / 180, d2 = 5.3 * M_PI / 180;
    const int64_t i1 = (int64_t)floor(lon / d1), j1 = (int64_t)floor(lat / d1);
    const int64_t i2 = (int64_t)floor(lon / d2), j2 = (int64_t)floor(lat / d2);
    const uint64_t h1 = (uint64_t)((i1 * 73856093) ^ (j1 * 19349663)) * 2654435761u;
    const uint64_t h2 = (uint64_t)((i2 * 83492791) ^ (j2 * 2971215073)) * 2654435761u;
    const double m = (double)(h2 & 255) / 255;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)(255 * (0.1 + 0.45 * (double)((h1 >> (8 * c)) & 255) / 255 + 0.4 * m) + 0.5);
}

/* Camera i of the chain: 320x240, 60 degrees, yaw -40/0/40, exposures
 * that differ (the photometric optimiser has something to find). */
static int write_chain_cameras(const char *dir)
{
    enum { CW = 320, CH = 240 };
    static const double yaw[3] = {-40, 0, 40}, gain[3] = {1.0, 0.8, 1.1};
    static uint8_t rgb[CW * CH * 3];
    pc_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.ncam = 1;
    for (int i = 0; i < 3; i++) {
        rig.cam[0] = (pc_rig_camera){.w = CW, .h = CH, .hfov = 60, .yaw = yaw[i], .er = 1, .eb = 1, .va = 1};
        pc_cam_model cm;
        pc_rig_camera_model(&rig, 0, &cm);
        for (int y = 0; y < CH; y++)
            for (int x = 0; x < CW; x++) {
                float ray[3];
                uint8_t *p = rgb + 3 * (y * CW + x);
                if (!pc_cam_unproject(&cm, (float)x, (float)y, ray))
                    return -1;
                scene(ray, p);
                for (int c = 0; c < 3; c++) {
                    const double v = p[c] * gain[i];
                    p[c] = (uint8_t)(v > 255 ? 255 : v);
                }
            }
        char path[512], err[256];
        snprintf(path, sizeof path, "%s/cam%d.ppm", dir, i);
        if (pc_image_write_ppm(path, rgb, CW * 3, CW, CH, err, sizeof err)) {
            tap_diag("%s", err);
            return -1;
        }
    }
    return 0;
}

/* --- an independent reading of i lines ------------------------------------ */

typedef struct tokfield {
    const char *name;
    size_t off; /* offset of the double in pc_rig_camera, or (size_t)-1 */
} tokfield;

#define CAM_D(f) offsetof(pc_rig_camera, f)
static const tokfield tokfields[] = {
    {"v", CAM_D(hfov)}, {"y", CAM_D(yaw)}, {"p", CAM_D(pitch)}, {"r", CAM_D(roll)}, {"a", CAM_D(a)},
    {"b", CAM_D(b)}, {"c", CAM_D(c)}, {"d", CAM_D(d)}, {"e", CAM_D(e)}, {"g", CAM_D(g)}, {"t", CAM_D(t)},
    {"Eev", CAM_D(eev)}, {"Er", CAM_D(er)}, {"Eb", CAM_D(eb)}, {"Va", CAM_D(va)}, {"Vb", CAM_D(vb)},
    {"Vc", CAM_D(vc)}, {"Vd", CAM_D(vd)}, {"Vx", CAM_D(vx)}, {"Vy", CAM_D(vy)}, {"Ra", CAM_D(resp[0])},
    {"Rb", CAM_D(resp[1])}, {"Rc", CAM_D(resp[2])}, {"Rd", CAM_D(resp[3])}, {"Re", CAM_D(resp[4])}};
enum { NTOK = sizeof tokfields / sizeof tokfields[0], MAXIMG = 8 };

/* The i lines of a file as name -> text value, links kept as "=N". */
typedef struct tokimg {
    char name[NTOK][8];
    char val[NTOK][48];
    int n;
    int w, h, f, vm;
} tokimg;

static int tokenize_file(const char *path, tokimg *img, int max)
{
    FILE *f = fopen(path, "r");
    char line[16384];
    int n = 0;
    while (f && fgets(line, sizeof line, f) && n < max) {
        if (line[0] != 'i' || line[1] != ' ')
            continue;
        tokimg *t = &img[n++];
        memset(t, 0, sizeof *t);
        for (char *tok = strtok(line + 2, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
            char name[8] = {0};
            int k = 0;
            while (isalpha((unsigned char)tok[k]) && k < 7)
                name[k] = tok[k], k++;
            if (!strcmp(name, "w") || !strcmp(name, "h") || !strcmp(name, "f") || !strcmp(name, "Vm")) {
                int v = atoi(tok + k);
                *(name[0] == 'w' ? &t->w : name[0] == 'h' ? &t->h : name[0] == 'f' ? &t->f : &t->vm) = v;
                continue;
            }
            for (int q = 0; q < NTOK; q++)
                if (!strcmp(name, tokfields[q].name) && t->n < NTOK) {
                    snprintf(t->name[t->n], sizeof t->name[0], "%s", name);
                    snprintf(t->val[t->n], sizeof t->val[0], "%s", tok + k);
                    t->n++;
                }
        }
    }
    if (f)
        fclose(f);
    return n;
}

/* The value of field q of image i, following "=N" links. */
static int token_value(const tokimg *img, int i, const char *name, double *out)
{
    for (int depth = 0; depth < MAXIMG; depth++) {
        int found = -1;
        for (int q = 0; q < img[i].n; q++)
            if (!strcmp(img[i].name[q], name))
                found = q;
        if (found < 0)
            return -1;
        const char *v = img[i].val[found];
        if (v[0] != '=') {
            *out = strtod(v, NULL);
            return 0;
        }
        i = atoi(v + 1);
    }
    return -1;
}

/* --- Hugin's chain ------------------------------------------------------------ */

static int run_in(const char *dir, const char *cmd)
{
    char full[2048];
    snprintf(full, sizeof full, "cd %s && %s >>chain.log 2>&1", dir, cmd);
    return system(full) == 0;
}

static void check_hugin_chain(void)
{
    static const char *const tools[] = {"pto_gen", "cpfind", "autooptimiser", "pto_var", "pano_modify",
                                        "pano_trafo", "nona"};
    for (size_t k = 0; k < sizeof tools / sizeof tools[0]; k++)
        if (!have_tool(tools[k])) {
            char why[160];
            snprintf(why, sizeof why, "%s (hugin-tools) is not installed: tools/install-deps installs it", tools[k]);
            tap_skip(why);
            return;
        }
    char dir[] = "/tmp/pc_test_rig_ptoXXXXXX", err[600], path[600];
    if (!TAP_CHECK(mkdtemp(dir) != NULL, "temporary folder"))
        return;
    int ok = TAP_CHECK(write_chain_cameras(dir) == 0, "three camera pictures of the scene (yaw -40, 0, 40)");
    ok = ok && TAP_CHECK(run_in(dir, "pto_gen -f 60 -o gen.pto cam0.ppm cam1.ppm cam2.ppm"), "pto_gen");
    ok = ok && TAP_CHECK(run_in(dir, "cpfind --linearmatch -o cp.pto gen.pto"), "cpfind");
    ok = ok && TAP_CHECK(run_in(dir, "autooptimiser -a -m -l -s -o opt.pto cp.pto"), "autooptimiser -a -m -l -s");
    /* lens fields the optimiser leaves at 0, set through image 1 and 2
     * where image 0 holds them (pto_gen links them: "=0") */
    ok = ok && TAP_CHECK(run_in(dir, "pto_var --set=d1=3.5,e1=-2.25,g2=0.01,t2=-0.02,Vx0=4,Vy0=-3,Vb0=-0.2,"
                                     "Vc0=0.05,a0=0.002,c0=-0.003 -o var.pto opt.pto"),
                         "pto_var --set d e g t Vx Vy Vb Vc a c");
    ok = ok && TAP_CHECK(run_in(dir, "pano_modify --projection=1 --fov=AUTO --canvas=AUTO --crop=AUTO "
                                     "-o rig.pto var.pto"),
                         "pano_modify --projection=1 --fov=AUTO --canvas=AUTO --crop=AUTO");
    pc_rig rig;
    snprintf(path, sizeof path, "%s/rig.pto", dir);
    if (ok) {
        const int rd = pc_rig_load(path, &rig, err, sizeof err);
        ok = TAP_CHECK(rd == 0, "Hugin's rig.pto reads%s%s", rd ? ": " : "", rd ? err : "");
    }
    if (ok) {
        TAP_CHECK(rig.ncam == 3 && rig.pano.proj == PC_PROJ_CYLINDRICAL, "3 images, a cylindrical canvas");
        int yaws_ok = 1;
        for (int i = 0; i < 3; i++)
            yaws_ok &= fabs(rig.cam[i].yaw - (rig.cam[1].yaw + 40.0 * (i - 1))) < 1.0 &&
                       fabs(rig.cam[i].pitch - rig.cam[1].pitch) < 1.0 && fabs(rig.cam[i].roll) < 1.0;
        TAP_CHECK(yaws_ok, "the optimiser found the rig: yaw %.2f %.2f %.2f, pitch %.2f %.2f %.2f",
                  rig.cam[0].yaw, rig.cam[1].yaw, rig.cam[2].yaw, rig.cam[0].pitch, rig.cam[1].pitch,
                  rig.cam[2].pitch);
        /* every field against the file's text */
        tokimg img[MAXIMG];
        int n = tokenize_file(path, img, MAXIMG), fields = 0, links = 0, wrong = 0;
        for (int i = 0; i < n && i < rig.ncam; i++) {
            const pc_rig_camera *c = &rig.cam[i];
            if (c->w != img[i].w || c->h != img[i].h || c->lens != img[i].f || c->vm != img[i].vm) {
                tap_diag("image %d: w h f Vm %d %d %d %d, file %d %d %d %d", i, c->w, c->h, c->lens, c->vm,
                         img[i].w, img[i].h, img[i].f, img[i].vm);
                wrong++;
            }
            for (int q = 0; q < NTOK; q++) {
                double want;
                if (token_value(img, i, tokfields[q].name, &want)) {
                    tap_diag("image %d: field %s missing in the file", i, tokfields[q].name);
                    wrong++;
                    continue;
                }
                for (int k = 0; k < img[i].n; k++)
                    links += !strcmp(img[i].name[k], tokfields[q].name) && img[i].val[k][0] == '=';
                const double got = *(const double *)((const char *)c + tokfields[q].off);
                if (got != want) {
                    tap_diag("image %d: field %s: read %.17g, the file says %.17g", i, tokfields[q].name, got, want);
                    wrong++;
                }
                fields++;
            }
        }
        TAP_CHECK(n == 3 && wrong == 0 && links >= 30 && fields == 3 * NTOK,
                  "every i-line field as the file says: %d fields, %d of them \"=N\" links, %d wrong", fields,
                  links, wrong);
        TAP_CHECK(rig.cam[0].d == 3.5 && rig.cam[2].d == 3.5 && rig.cam[1].e == -2.25 && rig.cam[1].g == 0.01 &&
                      rig.cam[0].t == -0.02 && rig.cam[2].vx == 4 && rig.cam[1].vb == -0.2,
                  "values set through one image reach the images linked to it");

        /* geometry: the model against pano_trafo for each image */
        pc_view_model view;
        int ow, oh;
        pc_rig_output_size(&rig, &ow, &oh);
        pc_rig_panorama_view(&rig, ow, oh, &view);
        double worst = 0, px[48], py[48];
        int compared = 0;
        snprintf(path, sizeof path, "%s/points.txt", dir);
        FILE *pts = fopen(path, "w");
        for (int k = 0; k < 48; k++) { /* output pixels; pano_trafo takes canvas pixels */
            px[k] = ow * (k % 8 + 0.37) / 8;
            py[k] = oh * (k / 8 + 0.61) / 6;
            if (pts)
                fprintf(pts, "%.6f %.6f\n", px[k] + rig.pano.crop[0], py[k] + rig.pano.crop[2]);
        }
        if (pts)
            fclose(pts);
        for (int i = 0; pts && i < rig.ncam; i++) {
            pc_cam_model cm;
            pc_rig_camera_model(&rig, i, &cm);
            char cmd[1400];
            snprintf(cmd, sizeof cmd, "cd %s && pano_trafo -r rig.pto %d < points.txt", dir, i);
            FILE *pp = popen(cmd, "r");
            double hx, hy;
            for (int k = 0; pp && k < 48 && fscanf(pp, "%lf %lf", &hx, &hy) == 2; k++) {
                float ray[3], sx, sy;
                pc_view_ray(&view, (float)px[k], (float)py[k], ray);
                if (!pc_cam_project(&cm, ray, &sx, &sy))
                    continue;
                worst = fmax(worst, hypot(sx - hx, sy - hy));
                compared++;
            }
            if (pp)
                pclose(pp);
        }
        TAP_CHECK(compared >= 20 && worst < 0.01,
                  "geometry (yaw pitch roll v a b c d e g t, p f w h v S) as pano_trafo: %d points, worst %.2g px",
                  compared, worst);

        /* output size: nona's cropped panorama */
        rig_tiff t;
        int sized = run_in(dir, "sed 's/n\"TIFF_m c:LZW r:CROP\"/n\"TIFF c:NONE r:CROP\"/' rig.pto > out.pto && "
                                "nona -o out out.pto");
        snprintf(path, sizeof path, "%s/out.tif", dir);
        if (sized && rig_tiff_read(path, &t, err, sizeof err) == 0) {
            TAP_CHECK(t.w == ow && t.h == oh, "output size %dx%d (p line S%d,%d,%d,%d) = nona's %dx%d", ow, oh,
                      rig.pano.crop[0], rig.pano.crop[1], rig.pano.crop[2], rig.pano.crop[3], t.w, t.h);
            rig_tiff_free(&t);
        } else {
            TAP_CHECK(0, "nona rendered the cropped panorama: %s", sized ? err : "nona failed (chain.log)");
        }
    }
    if (!ok) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "tail -20 %s/chain.log | sed 's/^/# /'", dir);
        if (system(cmd) != 0)
            tap_diag("no log");
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
}

/* --- broken files ----------------------------------------------------------------- */

#define PLINE "p f1 w3000 h800 v120 E0 R0 n\"TIFF_m c:LZW r:CROP\"\n"
#define ILINE(rest) "i w320 h240 f0 v60 Ra0 Rb0 Rc0 Rd0 Re0 Eev0 Er1 Eb1 r0 p0 TrY0 TrZ0 Tpy0 Tpp0 j0 " \
                    "a0 b0 c0 d0 e0 g0 t0 Va1 Vb0 Vc0 Vd0 Vx0 Vy0 Vm5 " rest "\n"
#define GOOD PLINE ILINE("n\"cam0.ppm\"") ILINE("y40 n\"cam1.ppm\"")

static void check_bad(const char *what, const char *text, const char *want_line, const char *want)
{
    pc_rig rig;
    char err[600] = "";
    int rc = pc_rig_parse(text, "rig.pto", &rig, err, sizeof err);
    TAP_CHECK(rc == -1 && strstr(err, want_line) == err && strstr(err, want), "%s: %s", what,
              rc ? err : "accepted");
}

static void check_bad_files(void)
{
    check_bad("no p line", ILINE("n\"a\""), "rig.pto: ", "no p line");
    check_bad("no i lines", PLINE "m i0\n", "rig.pto: ", "no i lines");
    check_bad("a second p line", GOOD PLINE, "rig.pto:4:", "a second p line (the first is line 1)");
    check_bad("unknown projection", "p f5 w3000 h800 v120\n" ILINE(""), "rig.pto:1:", "field f: projection 5");
    check_bad("unknown lens", "# x\n" PLINE "i w320 h240 f4 v60\n", "rig.pto:3:", "i line (image 0): field f: lens");
    check_bad("translation", PLINE ILINE("") ILINE("TrX0.5"), "rig.pto:3:", "field TrX: 0.5: camera translation");
    check_bad("given twice", PLINE ILINE("y3 y4"), "rig.pto:2:", "field y: given twice");
    check_bad("no field of view", PLINE "i w320 h240 f0 y0\n", "rig.pto:2:", "field v (the horizontal field of view) is missing");
    check_bad("no lens", PLINE "i w320 h240 v60\n", "rig.pto:2:", "field f (the lens projection) is missing");
    check_bad("no canvas width", "p f1 h800 v120\n" ILINE(""), "rig.pto:1:", "field w (the canvas width) is missing");
    check_bad("fov 0", PLINE "i w320 h240 f0 v0\n", "rig.pto:2:", "field v: 0 is not a field of view");
    check_bad("fov 200 rectilinear", PLINE "i w320 h240 f0 v200\n", "rig.pto:2:", "field v: 200");
    /* fields of view no lens or canvas has: refused with the bounds (they
     * were read, checked OK, and the camera rendered nothing) */
    check_bad("fov 1e-300", PLINE "i w320 h240 f0 v1e-300\n", "rig.pto:2:",
              "field v: 1e-300 degrees is narrower than any lens (0.1 <= v < 180 degrees for this lens");
    check_bad("fov 0.001", PLINE ILINE("") "i w320 h240 f0 v0.001\n", "rig.pto:3:",
              "i line (image 1): field v: 0.001 degrees is narrower than any lens");
    check_bad("fisheye fov 0.05", PLINE "i w320 h240 f3 v0.05\n", "rig.pto:2:", "(0.1 <= v < 360 degrees for this lens");
    check_bad("canvas fov 1e-300", "p f1 w3000 h800 v1e-300\n" ILINE(""), "rig.pto:1:",
              "p line: field v: 1e-300 degrees is narrower than any panorama (0.1 <= v <= 360 degrees");
    check_bad("rectilinear canvas fov 0.09", "p f0 w3000 h800 v0.09\n" ILINE(""), "rig.pto:1:",
              "(0.1 <= v < 180 degrees for this projection");
    {
        pc_rig rig;
        char err[600] = "";
        int rc = pc_rig_parse("p f1 w3000 h800 v0.1\ni w320 h240 f0 v0.1\n", "rig.pto", &rig, err, sizeof err);
        TAP_CHECK(rc == 0 && rig.cam[0].hfov == 0.1 && rig.pano.hfov == 0.1, "0.1 degree, the bound, is read: %s",
                  rc ? err : "ok");
    }
    check_bad("negative width", PLINE "i w-5 h240 f0 v60\n", "rig.pto:2:", "field w: -5 is not an image width");
    check_bad("width not a number", PLINE "i wabc h240 f0 v60\n", "rig.pto:2:", "field w: \"wabc\" is not a number");
    check_bad("hex", PLINE "i w0x140 h240 f0 v60\n", "rig.pto:2:", "field w: \"w0x140\" is not a number");
    check_bad("nan", PLINE "i w320 h240 f0 vnan\n", "rig.pto:2:", "field v: \"vnan\" is not a number");
    check_bad("overflow", PLINE "i w320 h240 f0 v1e999\n", "rig.pto:2:", "field v: \"v1e999\" is not a number");
    check_bad("two dots", PLINE "i w320 h240 f0 v6.0.1\n", "rig.pto:2:", "field v: \"v6.0.1\" is not a number");
    /* terminal escapes in a field: quoted escaped, never as raw bytes (they
     * went to the terminal and the journal) */
    check_bad("control bytes in an i field", PLINE "i w320 h240 f0 v35.1\x1b[2J\x1b]0;pwned\x07\n", "rig.pto:2:",
              "field v: \"v35.1\\x1b[2J\\x1b]0;pwned\\x07\" is not a number");
    check_bad("control bytes in a p field", "p f1 w3000 h800 v1\x1b[31m20\n" ILINE(""), "rig.pto:1:",
              "field v: \"v1\\x1b[31m20\" is not a number");
    {
        pc_rig rig;
        char err[600] = "";
        pc_rig_parse(PLINE "i w320 h240 f0 v35.1\x1b[2J\x1b]0;pwned\x07 y\x7f\n", "rig\x1b.pto", &rig, err, sizeof err);
        int raw = 0;
        for (const char *c = err; *c; c++)
            raw |= (unsigned char)*c < 0x20 || *c == 0x7f;
        TAP_CHECK(err[0] && !raw && strstr(err, "rig\\x1b.pto:2:"),
                  "an error quoting control bytes (and a file name with one) holds none: %s", err);
    }
    check_bad("a field twice (Eev)", PLINE ILINE("") ILINE("Eev99"), "rig.pto:3:", "field Eev: given twice");
    check_bad("exposure 99", PLINE "i w320 h240 f0 v60 Eev99\n", "rig.pto:2:", "field Eev: 99 is not an exposure");
    check_bad("white balance 0", PLINE "i w320 h240 f0 v60 Er0\n", "rig.pto:2:", "fields Er Eb: 0 1");
    check_bad("distortion d <= 0", PLINE "i w320 h240 f0 v60 a0.5 b0.3 c0.2\n", "rig.pto:2:", "fields a b c");
    check_bad("response 20", PLINE "i w320 h240 f0 v60 Rc20\n", "rig.pto:2:", "field Rc: 20 is not an EMoR");
    check_bad("response type gamma", PLINE "i w320 h240 f0 v60 Rt2\n", "rig.pto:2:", "field Rt: response type 2");
    check_bad("vignetting mode 9", PLINE "i w320 h240 f0 v60 Vm9\n", "rig.pto:2:", "field Vm: 9");
    check_bad("vignetting through 0", PLINE "i w320 h240 f0 v60 Va1 Vb-2 Vm5\n", "rig.pto:2:",
              "fields Va Vb Vc Vd: the vignetting factor falls to -1");
    check_bad("unterminated quote", PLINE "i w320 h240 f0 v60 n\"cam0.ppm\n", "rig.pto:2:",
              "field n: the quoted string has no closing quote");
    check_bad("unknown field", PLINE "i w320 h240 f0 v60 Q3\n", "rig.pto:2:", "unknown field \"Q3\"");
    check_bad("unknown p field", "p f1 w3000 h800 v120 Z9\n", "rig.pto:1:", "p line: unknown field \"Z9\"");
    check_bad("link to itself", PLINE "i w320 h240 f0 v=0\n", "rig.pto:2:", "field v: =0 links to image 0, not an earlier one");
    check_bad("link to a later image", GOOD "i w320 h240 f0 v=3\n", "rig.pto:4:", "field v: =3 links");
    check_bad("bad link", PLINE ILINE("") "i w320 h240 f0 v=x\n", "rig.pto:3:", "field v: \"v=x\": expected =N");
    check_bad("crop outside", PLINE "i w320 h240 f0 v60 S0,400,0,240\n", "rig.pto:2:", "field S: the crop S0,400,0,240 leaves");
    check_bad("empty crop", PLINE "i w320 h240 f0 v60 S10,5,0,240\n", "rig.pto:2:", "field S: the crop S10,5,0,240 is empty");
    check_bad("crop syntax", PLINE "i w320 h240 f0 v60 S10,20\n", "rig.pto:2:", "field S: expected S<left>");
    check_bad("canvas crop outside", "p f1 w300 h80 v120 S0,301,0,80\n" ILINE(""), "rig.pto:1:", "field S: the crop");
    check_bad("output mode 2", "p f1 w300 h80 v120 R2\n" ILINE(""), "rig.pto:1:", "field R: 2");
    check_bad("o line", GOOD "o f0 r0 p0 y0 v60\n", "rig.pto:4:", "o line: PTOptimizer");
    check_bad("mask on a missing image", GOOD "k i5 t0 p\"1 1 5 5 9 1\"\n", "rig.pto:4:", "image 5 does not exist");
    check_bad("mask on image 40", GOOD "k i1 t0 p\"1 1 5 5 9 1\"\nk i40 t0 p\"1 1\"\n", "rig.pto:5:",
              "field i: image 40 does not exist");
    check_bad("mask without an image", GOOD "k t0 p\"1 1 5 5 9 1\"\n" ILINE(""), "rig.pto:4:",
              "field i (the image it masks) is missing");
    check_bad("mask image not a number", GOOD "k i1x t0\n", "rig.pto:4:", "field i: \"i1x\" is not an image number");

    char big[12000];
    snprintf(big, sizeof big, PLINE "i w320 h240 f0 v60 n\"%0*d\"\n", 9000, 0);
    check_bad("huge i line", big, "rig.pto:2:", "i line longer than 8191 characters");
    char *many = malloc(20 * sizeof ILINE("") + 200);
    strcpy(many, PLINE);
    for (int i = 0; i < PC_RIG_MAX_CAMERAS + 1; i++)
        strcat(many, ILINE(""));
    check_bad("17 images", many, "rig.pto:18:", "more than 16 i lines");
    free(many);

    /* NUL bytes: pc_rig_load names the line */
    char path[] = "/tmp/pc_test_rig_nulXXXXXX";
    int fd = mkstemp(path);
    static const char nul_text[] = PLINE "i w320 h240 f0 v60\0 n\"x\"\n";
    if (fd >= 0 && write(fd, nul_text, sizeof nul_text - 1) == (ssize_t)(sizeof nul_text - 1)) {
        pc_rig rig;
        char err[600] = "";
        int rc = pc_rig_load(path, &rig, err, sizeof err);
        TAP_CHECK(rc == -1 && strstr(err, ":2: a NUL byte"), "NUL byte: %s", err);
    } else {
        TAP_CHECK(0, "temporary file for the NUL test");
    }
    if (fd >= 0)
        close(fd);
    unlink(path);

    /* camera count and size against panocap's cameras */
    pc_rig rig;
    char err[600] = "";
    if (TAP_CHECK(pc_rig_parse(GOOD, "rig.pto", &rig, err, sizeof err) == 0, "a good file reads: %s", err)) {
        TAP_CHECK(pc_rig_check_cameras(&rig, 2, 320, 240, err, sizeof err) == 0, "2 cameras of 320x240: match");
        TAP_CHECK(pc_rig_check_cameras(&rig, 5, 320, 240, err, sizeof err) == -1 &&
                      strstr(err, "rig.pto: 2 i lines (images) for 5 cameras"),
                  "count mismatch: %s", err);
        TAP_CHECK(pc_rig_check_cameras(&rig, 2, 2040, 1080, err, sizeof err) == -1 &&
                      strstr(err, "rig.pto:2: i line (image 0): fields w h: 320x240, but camera 0 delivers 2040x1080"),
                  "size mismatch: %s", err);
    }
}

/* --- what Hugin writes and reads ------------------------------------------------- */

static int parse_ok(const char *what, const char *text, pc_rig *rig)
{
    char err[600] = "";
    int rc = pc_rig_parse(text, "rig.pto", rig, err, sizeof err);
    if (rc)
        tap_diag("%s: %s", what, err);
    return rc == 0;
}

static void check_hugin_features(void)
{
    pc_rig rig;
    /* Vm: only 5 corrects (Hugin 2022 turns every other mode into none) */
    int ok = parse_ok("Vm", PLINE "i w320 h240 f0 v60 Va1 Vb-0.3 Vc0.1 Vm5\n"
                                  "i w320 h240 f0 v60 Va1 Vb-0.3 Vc0.1 Vm1\n"
                                  "i w320 h240 f0 v60 Va1 Vb-0.3 Vc0.1 Vm0\n"
                                  "i w320 h240 f0 v60 Va1 Vb-0.3 Vc0.1\n", &rig);
    TAP_CHECK(ok && rig.cam[0].vb == -0.3 && rig.cam[0].vc == 0.1 && rig.cam[1].vb == 0 && rig.cam[2].vb == 0 &&
                  rig.cam[3].vb == 0 && rig.cam[1].vm == 1,
              "Vm5 keeps Va..Vd; Vm1, Vm0 and no Vm mean no vignetting correction, as in Hugin");
    ok = parse_ok("Rt C crop Tpy", PLINE "i w320 h240 f0 v60 Rt1 C10,300,20,220 Tpy12 Tpp-3 n\"a b.ppm\"\n", &rig);
    TAP_CHECK(ok && rig.cam[0].response == 1 && rig.cam[0].crop[0] == 10 && rig.cam[0].crop[1] == 300 &&
                  rig.cam[0].crop[2] == 20 && rig.cam[0].crop[3] == 220 && !strcmp(rig.cam[0].file, "a b.ppm"),
              "Rt1 (linear response), the old crop C, Tpy/Tpp without a translation, a name with a blank");
    ok = parse_ok("circular crop", PLINE "i w320 h240 f2 v180 S-40,360,-80,320\n", &rig);
    pc_cam_model cm;
    if (ok)
        pc_rig_camera_model(&rig, 0, &cm);
    TAP_CHECK(ok && cm.circle && cm.x0 == 0 && cm.x1 == 319 && cm.ccx == 160 && cm.ccy == 120 && cm.cr2 == 200 * 200,
              "a circular fisheye's crop past the image's edges: its circle (centre 160,120, radius 200)");
    ok = parse_ok("disabled, masks, p-line extras, CRLF, tabs",
                  "# hugin project file\r\np f1 w3000 h800 v120  k0 E0.5 R1 TUINT8 P\"1 2\" S10,2990,20,780 "
                  "n\"TIFF_m c:LZW r:CROP\"\r\nm i0\r\n"
                  "#-hugin  cropFactor=1\r\ni w320 h240 f0 v60\tn\"cam0.ppm\"\r\n"
                  "#-hugin  cropFactor=1 disabled\r\ni w320 h240 f0 v=0 y40 n\"cam1.ppm\"\r\n"
                  "k i1 t0 p\"1 1 5 5 9 1\"\r\nk i1 t1 p\"1 1 5 5 9 1\"\r\n",
                  &rig);
    TAP_CHECK(ok && !rig.cam[0].disabled && rig.cam[1].disabled && rig.cam[1].masks == 2 && rig.cam[0].masks == 0 &&
                  rig.pano.exposure == 0.5 && rig.pano.response == 1 && rig.pano.crop[1] == 2990 &&
                  rig.cam[1].hfov == 60 && !strcmp(rig.cam[0].file, "cam0.ppm"),
              "#-hugin disabled, k masks counted, p line k E R T P S, CRLF and tabs");
    /* a mask line longer than any p or i line may be */
    size_t n = 40000;
    char *big = malloc(n + 400);
    int len = snprintf(big, 400, GOOD "k i0 t0 p\"");
    for (size_t k = 0; k < n - 10; k += 4)
        memcpy(big + len + k, "1 1 ", 4);
    strcpy(big + len + n - 10, "\"\n");
    ok = parse_ok("long k line", big, &rig);
    TAP_CHECK(ok && rig.cam[0].masks == 1, "a 40000-character mask line is read past");
    free(big);

    /* what pc_rig_save writes, pc_rig_load reads back the same */
    if (parse_ok("round trip source",
                 PLINE "#-hugin  cropFactor=1\n"
                       "i w320 h240 f0 v60 Ra0.1 Rb-0.1 Rc0.05 Rd0.01 Re-0.02 Eev0.3 Er1.1 Eb0.9 r1.5 p-2.5 y-40 "
                       "a0.001 b-0.01 c0.002 d3 e-2 g0.01 t0.02 Va1.1 Vb-0.2 Vc0.03 Vd-0.01 Vx3 Vy-4 Vm5 "
                       "S5,315,6,234 n\"c0.ppm\"\n"
                       "#-hugin  cropFactor=1 disabled\n"
                       "i w320 h240 f3 v=0 y40 Rt1 Vm1 n\"c1.ppm\"\n", &rig)) {
        char path[] = "/tmp/pc_test_rig_saveXXXXXX", err[600];
        int fd = mkstemp(path);
        pc_rig back;
        if (fd >= 0)
            close(fd);
        int rt = fd >= 0 && pc_rig_save(&rig, path, err, sizeof err) == 0 &&
                 pc_rig_load(path, &back, err, sizeof err) == 0;
        int same = rt && back.ncam == rig.ncam && !memcmp(&back.pano.proj, &rig.pano.proj, sizeof(int) * 3);
        for (int i = 0; same && i < rig.ncam; i++) {
            pc_rig_camera a = rig.cam[i], b = back.cam[i];
            a.line = b.line = 0;
            same = !memcmp(&a, &b, sizeof a);
        }
        TAP_CHECK(same, "pc_rig_save then pc_rig_load: every camera field the same");
        unlink(path);
    }
}

int main(void)
{
    check_bad_files();
    check_hugin_features();
    check_hugin_chain();
    return tap_done();
}
