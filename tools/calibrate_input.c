/* calibrate_input.c - the one frame set panocap-calibrate works on, as
 * the cameras' pictures WORK/cam0.png .. : from image files, from a .pcraw
 * recording (each camera's slab demosaiced on its own with the C
 * reference), or from a running panocap (its snapshot-cameras control
 * command, which writes the pictures of the next set it captures). */
#include "calibrate.h"

#include "capture.h"
#include "colour.h"
#include "debayer.h"
#include "image.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Smallest picture worth matching features in. */
#define MIN_SIDE 64

static int write_camera(const char *work, int i, const uint8_t *rgb, size_t pitch, int w, int h, char *err,
                        size_t errlen)
{
    char path[PATH_MAX], e[512];
    snprintf(path, sizeof path, "%s/cam%d.png", work, i);
    if (pc_image_write(path, rgb, pitch, w, h, e, sizeof e)) {
        snprintf(err, errlen, "camera %d: %s", i, e);
        return -1;
    }
    return 0;
}

/* Checks picture i's size against the first one's. */
static int check_size(cal_pictures *out, int i, int w, int h, const char *what, char *err, size_t errlen)
{
    if (w < MIN_SIDE || h < MIN_SIDE) {
        snprintf(err, errlen, "%s: %dx%d is too small to find control points in (at least %dx%d)", what, w, h,
                 MIN_SIDE, MIN_SIDE);
        return -1;
    }
    if (i == 0) {
        out->w = w;
        out->h = h;
    } else if (w != out->w || h != out->h) {
        snprintf(err, errlen, "%s: %dx%d, but camera 0 is %dx%d: every camera of a rig has one size", what, w, h,
                 out->w, out->h);
        return -1;
    }
    return 0;
}

/* Reads picture file path as camera i (what names it in messages), checks
 * its size and writes it into work. */
static int copy_picture(const char *work, int i, const char *path, const char *what, cal_pictures *out, char *err,
                        size_t errlen)
{
    pc_image img;
    char e[512];
    if (pc_image_read(path, &img, e, sizeof e)) {
        snprintf(err, errlen, "camera %d: %s", i, e);
        return -1;
    }
    int rc = check_size(out, i, img.width, img.height, what, err, errlen);
    if (!rc)
        rc = write_camera(work, i, img.rgb, img.pitch, img.width, img.height, err, errlen);
    pc_image_free(&img);
    return rc;
}

int cal_input_images(const char *work, char *const files[], int nfiles, cal_pictures *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (nfiles < 2 || nfiles > CAL_MAX_CAMERAS) {
        snprintf(err, errlen, "%d pictures: a rig has 2 to %d cameras, one picture each", nfiles, CAL_MAX_CAMERAS);
        return -1;
    }
    for (int i = 0; i < nfiles; i++) {
        char what[PATH_MAX + 32];
        snprintf(what, sizeof what, "camera %d (%s)", i, files[i]);
        if (copy_picture(work, i, files[i], what, out, err, errlen))
            return -1;
    }
    out->n = nfiles;
    snprintf(out->what, sizeof out->what, "%d image files", nfiles);
    return 0;
}

int cal_input_raw(const char *work, const char *path, long set, const char *algo, cal_pictures *out, char *err,
                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    const pc_algo_desc *ad = pc_algo_find(algo);
    if (!ad) {
        char names[256];
        pc_algo_names(names, sizeof names);
        snprintf(err, errlen, "unknown algorithm \"%s\"; available: %s", algo, names);
        return -1;
    }
    pc_raw_reader *r = NULL;
    pc_raw_info info;
    char e[512];
    if (pc_raw_reader_open(&r, path, &info, e, sizeof e)) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    int rc = -1, n = info.n_cameras, w = info.width, h = info.height;
    size_t slab = pc_rawfmt_frame_bytes(&info.fmt, w, h);
    uint8_t *buf = malloc(slab * (size_t)n), *bayer = malloc((size_t)w * h), *rgb = malloc((size_t)w * h * 3);
    uint16_t *row = malloc((size_t)w * sizeof *row);
    if (!buf || !bayer || !rgb || !row) {
        snprintf(err, errlen, "%s: out of memory for %d cameras of %dx%d", path, n, w, h);
        goto out;
    }
    if (n < 2) {
        snprintf(err, errlen, "%s: %d camera: a rig has at least 2", path, n);
        goto out;
    }
    if ((uint64_t)set >= info.n_sets) {
        snprintf(err, errlen, "%s: no frame set %ld: the recording holds %llu (0 .. %llu)", path, set,
                 (unsigned long long)info.n_sets, (unsigned long long)(info.n_sets ? info.n_sets - 1 : 0));
        goto out;
    }
    uint64_t index = 0;
    for (long k = 0; k <= set; k++) {
        int64_t pts;
        uint32_t subst;
        int r2 = pc_raw_reader_read(r, buf, &index, &pts, &subst, e, sizeof e);
        if (r2 != 0) {
            snprintf(err, errlen, "%s: frame set %ld: %s", path, k, r2 == PC_CAPTURE_EOF ? "end of the file" : e);
            goto out;
        }
        if (k == set && subst)
            fprintf(stderr, "panocap-calibrate: warning: %s: frame set %ld has substituted slabs (mask 0x%x): "
                            "those cameras show an older frame or mid-grey\n", path, set, subst);
    }
    if (check_size(out, 0, w, h, path, err, errlen))
        goto out;
    int shift = info.fmt.bits > 8 ? info.fmt.bits - 8 : 0;
    for (int s = 0; s < n; s++) {
        const uint8_t *frame = buf + (size_t)s * slab;
        for (int y = 0; y < h; y++) {
            pc_unpack_row(&info.fmt, frame, w, y, row);
            for (int x = 0; x < w; x++)
                bayer[(size_t)y * w + x] = (uint8_t)(row[x] >> shift);
        }
        pc_bayer b = {bayer, (size_t)w, w, h, info.fmt.cfa, 0};
        pc_picture pic = {.fmt = PC_FMT_RGB24, .plane = {rgb}, .pitch = {(size_t)w * 3}, .width = w, .height = h};
        if (pc_ref_debayer(ad->id, &b, &pic, e, sizeof e)) {
            snprintf(err, errlen, "%s: camera %d: %s", path, s, e);
            goto out;
        }
        if (write_camera(work, s, rgb, (size_t)w * 3, w, h, err, errlen))
            goto out;
    }
    out->n = n;
    snprintf(out->what, sizeof out->what, "frame set %ld (index %llu) of %.80s, %s", set,
             (unsigned long long)index, path, ad->name);
    rc = 0;
out:
    free(buf);
    free(bayer);
    free(rgb);
    free(row);
    pc_raw_reader_close(r);
    return rc;
}

/* Sends one command line and reads the one-line answer (the daemon's
 * snapshot answers come when the files are written). */
static int ask_daemon(const char *socket_path, const char *cmd, int timeout_s, char *answer, size_t n, char *err,
                      size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "control socket %s: path too long", socket_path);
        return -1;
    }
    strcpy(sa.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "control socket %s: %s (is panocap running with daemon.control set to it?)",
                 socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t len = strlen(cmd), off = 0;
    while (off < len) {
        ssize_t w = send(fd, cmd + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errlen, "control socket %s: send: %s", socket_path, strerror(errno));
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    size_t got = 0;
    answer[0] = '\0';
    while (got + 1 < n && !memchr(answer, '\n', got)) {
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, timeout_s * 1000);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0) {
            snprintf(err, errlen, "control socket %s: no answer to \"%.*s\" within %d s", socket_path,
                     (int)strcspn(cmd, "\n"), cmd, timeout_s);
            close(fd);
            return -1;
        }
        ssize_t r = recv(fd, answer + got, n - 1 - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(err, errlen, "control socket %s: the daemon closed the connection without an answer",
                     socket_path);
            close(fd);
            return -1;
        }
        got += (size_t)r;
        answer[got] = '\0';
    }
    close(fd);
    answer[strcspn(answer, "\r\n")] = '\0';
    return 0;
}

int cal_input_daemon(const char *work, const char *socket_path, const char *name, int timeout_s,
                     cal_pictures *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char cmd[PATH_MAX + 32], answer[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd, "snapshot-cameras %s\n", name);
    time_t asked = time(NULL);
    if (ask_daemon(socket_path, cmd, timeout_s, answer, sizeof answer, err, errlen))
        return -1;
    static const char ok[] = "OK snapshot-cameras ";
    if (strncmp(answer, ok, sizeof ok - 1) != 0) {
        snprintf(err, errlen, "panocap (%s) refused snapshot-cameras %s: %s", socket_path, name,
                 strncmp(answer, "ERR ", 4) == 0 ? answer + 4 : answer);
        return -1;
    }
    const char *dir = answer + sizeof ok - 1;
    /* cam0.png, cam1.png ... as long as they exist and were written for
     * this request (an older, larger rig may have left more) */
    for (int i = 0; i < CAL_MAX_CAMERAS; i++) {
        char path[sizeof answer + 32];
        struct stat st;
        snprintf(path, sizeof path, "%s/cam%d.png", dir, i);
        if (stat(path, &st) != 0 || st.st_mtime + 2 < asked)
            break;
        if (copy_picture(work, i, path, path, out, err, errlen))
            return -1;
        out->n = i + 1;
    }
    if (out->n < 2) {
        snprintf(err, errlen, "panocap wrote %d camera picture%s into %s: a rig has at least 2 cameras", out->n,
                 out->n == 1 ? "" : "s", dir);
        return -1;
    }
    snprintf(out->what, sizeof out->what, "the next frame set of panocap (%.100s)", socket_path);
    return 0;
}
