/* test_daemon_pictures.c - fake cameras with a picture each
 * (cameras[i].image) through the real panocap executable: each camera
 * shows its own picture whole (scaled to its size), not a band of it, as
 * the first panorama's snapshot shows after demosaicing; the shared
 * capture.image is still split into bands. argv[1]: panocap. */
#include "daemon_testutil.h"

#include "image.h"

#define W 320
#define H 120
#define NCAM 2

/* Camera k's picture: smooth ramps and waves, each camera its own. */
static void picture(int k, uint8_t *rgb)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = rgb + 3 * ((size_t)y * W + x);
            double u = (double)x / W, v = (double)y / H;
            p[0] = (uint8_t)(30 + 190 * (k ? v : u));
            p[1] = (uint8_t)(128 + 90 * sin(6.283 * (k ? 2 * u + v : u - 2 * v)));
            p[2] = (uint8_t)(40 + 170 * (k ? u * v : 1 - u));
        }
}

/* PSNR of band k of the snapshot against rgb, leaving out the fake
 * cameras' counter (top-left) and moving bar (bottom rows) and a border. */
static double band_psnr(const pc_image *snap, int k, const uint8_t *rgb)
{
    double sse = 0, n = 0;
    for (int y = 10; y < H - 18; y++)
        for (int x = 4; x < W - 4; x++) {
            if (y < 12 && x < 260)
                continue;
            const uint8_t *a = snap->rgb + (size_t)(k * H + y) * snap->pitch + 3 * x, *b = rgb + 3 * ((size_t)y * W + x);
            for (int c = 0; c < 3; c++)
                sse += (double)(a[c] - b[c]) * (a[c] - b[c]), n++;
        }
    return dt_psnr(sse, n);
}

static int run(const char *panocap, const char *dir, const char *conf, const char *snap)
{
    char *args[] = {(char *)panocap, "--config", (char *)conf, "--control", "", "--output", "null",
                    "--frames", "5", "--snapshot", (char *)snap, NULL};
    dt_child ch;
    if (dt_spawn(&ch, dir, "panocap", args, NULL) != 0)
        return -1;
    int rc = dt_wait(&ch, 60);
    if (rc)
        dt_diag_file("panocap stderr", ch.err, 3000);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_daemon_pictures PANOCAP\n");
        return 2;
    }
    dt_guard_children();
    char dir[512], path[NCAM][600], conf[600], snap[600], err[512];
    dt_tmpdir(dir, sizeof dir, "pictures");
    uint8_t *rgb[NCAM];
    for (int k = 0; k < NCAM; k++) {
        rgb[k] = malloc((size_t)W * H * 3);
        picture(k, rgb[k]);
        snprintf(path[k], sizeof path[k], "%s/cam%d.ppm", dir, k);
        pc_image_write_ppm(path[k], rgb[k], 3 * W, W, H, err, sizeof err);
    }
    snprintf(conf, sizeof conf, "%s/panocap.conf", dir);
    snprintf(snap, sizeof snap, "%s/snap.png", dir);
    char text[3000];
    snprintf(text, sizeof text,
             "capture = { source = \"fake\"; cameras = %d; fps = 25; };\n"
             "cameras = ( { width = %d; height = %d; image = \"%s\"; },\n"
             "            { width = %d; height = %d; image = \"%s\"; } );\n"
             "debayer = { algo = \"bilinear\"; backend = \"cpu\"; };\n",
             NCAM, W, H, path[0], W, H, path[1]);
    dt_write_file(conf, text);
    int rc = run(argv[1], dir, conf, snap);
    TAP_CHECK(rc == 0, "panocap with a picture per fake camera ran 5 sets: exit %d", rc);
    pc_image img = {0};
    int read = pc_image_read(snap, &img, err, sizeof err) == 0;
    if (TAP_CHECK(read && img.width == W && img.height == NCAM * H, "snapshot %dx%d%s%s", img.width, img.height,
                  read ? "" : ": ", read ? "" : err)) {
        for (int k = 0; k < NCAM; k++) {
            double own = band_psnr(&img, k, rgb[k]);
            /* what a band of it looks like: band k of the picture scaled
             * to cover W x NCAM*H and centre-cropped (nearest pixel) */
            uint8_t *band = malloc((size_t)W * H * 3);
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    memcpy(band + 3 * ((size_t)y * W + x),
                           rgb[k] + 3 * ((size_t)((k * H + y) / NCAM) * W + (W / 4 + x / NCAM)), 3);
            double other = band_psnr(&img, k, band);
            free(band);
            TAP_CHECK(own > 30.0 && other < own - 8.0, "camera %d shows its whole picture: %.1f dB against it "
                      "(> 30), %.1f dB against a band of it", k, own, other);
        }
    }
    pc_image_free(&img);
    for (int k = 0; k < NCAM; k++)
        free(rgb[k]);
    dt_rmtree(dir);
    return tap_done();
}
