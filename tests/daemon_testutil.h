/* daemon_testutil.h - shared helpers of the daemon's end-to-end tests, which
 * run the real `panocap` executable as a child process: spawning it with its
 * stdout/stderr in files of the test's temp dir (and killed when the test
 * dies: PR_SET_PDEATHSIG, an atexit hook and SIGTERM/SIGINT handlers, so no
 * daemon outlives a failed or timed-out test; the handlers also remove the
 * temp dir), waiting with a deadline,
 * polling its log for a line, the control socket, the summary it prints,
 * and a real libavformat/libavcodec decoder for what it wrote.
 * Header-only, static; the per-binary child table is test-only state. */
#ifndef PANOCAP_DAEMON_TESTUTIL_H
#define PANOCAP_DAEMON_TESTUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "tap.h"

extern char **environ;

/* --- time ---------------------------------------------------------------- */

static inline double dt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void dt_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* --- children -------------------------------------------------------------- */

#define DT_MAX_CHILDREN 8
static volatile pid_t dt_children_[DT_MAX_CHILDREN];
/* The test's temp dir (dt_tmpdir), removed at exit if still there. */
static char dt_dir_[512];
static inline void dt_rmtree(const char *dir);

static inline void dt_kill_children(void)
{
    for (int i = 0; i < DT_MAX_CHILDREN; i++) {
        pid_t p = dt_children_[i];
        if (p > 0) {
            kill(p, SIGKILL);
            waitpid(p, NULL, 0);
            dt_children_[i] = 0;
        }
    }
    if (dt_dir_[0])
        dt_rmtree(dt_dir_);
}

/* Only async-signal-safe calls: kill and reap the children, remove the
 * temp dir with a forked rm (recordings there are hundreds of MB). */
static inline void dt_on_fatal_signal(int sig)
{
    for (int i = 0; i < DT_MAX_CHILDREN; i++)
        if (dt_children_[i] > 0) {
            kill(dt_children_[i], SIGKILL);
            waitpid(dt_children_[i], NULL, 0);
        }
    if (dt_dir_[0]) {
        pid_t p = fork();
        if (p == 0) {
            execl("/bin/rm", "rm", "-rf", "--", dt_dir_, (char *)NULL);
            _exit(127);
        }
        if (p > 0)
            waitpid(p, NULL, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Call once at the start of main: children die with the test however it
 * ends (normal exit, meson's timeout SIGTERM, ^C, a crash), and the temp
 * dir goes with them. */
static inline void dt_guard_children(void)
{
    atexit(dt_kill_children);
    signal(SIGTERM, dt_on_fatal_signal);
    signal(SIGINT, dt_on_fatal_signal);
    signal(SIGABRT, dt_on_fatal_signal);
    signal(SIGSEGV, dt_on_fatal_signal);
    signal(SIGPIPE, SIG_IGN);
}

typedef struct dt_child {
    pid_t pid;
    char out[512], err[512]; /* files holding its stdout and stderr */
    double started;
    int status;              /* exit code, 128+signal, -1 while running */
} dt_child;

/* Starts exe with argv (argv[0] included, NULL-terminated) in dir, stdout
 * and stderr to dir/<name>.out / .err. The environment is this process's
 * without NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID (the test may run
 * under systemd), plus env_add ("K=V" strings, NULL-terminated or NULL).
 * Everything the child needs is prepared before fork (the test may run
 * simulator threads), so the child only calls async-signal-safe functions. */
static inline int dt_spawn(dt_child *c, const char *dir, const char *name, char *const argv[],
                           char *const env_add[])
{
    memset(c, 0, sizeof *c);
    c->status = -1;
    snprintf(c->out, sizeof c->out, "%s/%s.out", dir, name);
    snprintf(c->err, sizeof c->err, "%s/%s.err", dir, name);
    int n = 0;
    while (environ[n])
        n++;
    int na = 0;
    while (env_add && env_add[na])
        na++;
    char **envp = calloc((size_t)(n + na + 1), sizeof *envp);
    if (!envp)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (strncmp(environ[i], "NOTIFY_SOCKET=", 14) && strncmp(environ[i], "WATCHDOG_USEC=", 14) &&
            strncmp(environ[i], "WATCHDOG_PID=", 13))
            envp[k++] = environ[i];
    for (int i = 0; i < na; i++)
        envp[k++] = env_add[i];
    envp[k] = NULL;
    int slot = -1;
    for (int i = 0; i < DT_MAX_CHILDREN && slot < 0; i++)
        if (dt_children_[i] <= 0)
            slot = i;
    int ofd = open(c->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int efd = open(c->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (slot < 0 || ofd < 0 || efd < 0 || nfd < 0) {
        free(envp);
        close(ofd);
        close(efd);
        close(nfd);
        return -1;
    }
    /* the child changes directory: a relative executable path must not break */
    char exe[4096];
    if (!realpath(argv[0], exe))
        snprintf(exe, sizeof exe, "%s", argv[0]);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(125);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(nfd, 0) < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0 || chdir(dir) != 0)
            _exit(126);
        execve(exe, argv, envp);
        _exit(127);
    }
    free(envp);
    close(ofd);
    close(efd);
    close(nfd);
    if (pid < 0)
        return -1;
    dt_children_[slot] = pid;
    c->pid = pid;
    c->started = dt_now();
    return 0;
}

static inline void dt_forget(pid_t pid)
{
    for (int i = 0; i < DT_MAX_CHILDREN; i++)
        if (dt_children_[i] == pid)
            dt_children_[i] = 0;
}

/* Non-blocking: 1 when the child has exited (status filled). */
static inline int dt_exited(dt_child *c)
{
    if (c->status >= 0)
        return 1;
    int st;
    pid_t r = waitpid(c->pid, &st, WNOHANG);
    if (r != c->pid)
        return 0;
    c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    dt_forget(c->pid);
    return 1;
}

/* Waits up to timeout_s for the exit; returns the exit code (128+signal
 * when killed), or -1 after killing it when it did not exit in time. */
static inline int dt_wait(dt_child *c, double timeout_s)
{
    double end = dt_now() + timeout_s;
    while (!dt_exited(c)) {
        if (dt_now() > end) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
            dt_forget(c->pid);
            c->status = -2;
            return -1;
        }
        dt_sleep(0.02);
    }
    return c->status;
}

/* --- files ----------------------------------------------------------------- */

/* The whole file, NUL-terminated (malloc'd; "" when unreadable). */
static inline char *dt_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    if (f) {
        size_t r;
        while ((r = fread(b + len, 1, cap - len - 1, f)) > 0) {
            len += r;
            if (len + 1 == cap) {
                char *nb = realloc(b, cap * 2);
                if (!nb)
                    break;
                b = nb;
                cap *= 2;
            }
        }
        fclose(f);
    }
    b[len] = '\0';
    return b;
}

static inline int dt_contains(const char *path, const char *needle)
{
    char *s = dt_slurp(path);
    int r = s && strstr(s, needle) != NULL;
    free(s);
    return r;
}

/* Polls path until it contains needle; 0 on timeout or when c exits first
 * (c may be NULL). */
static inline int dt_wait_for_text(const char *path, const char *needle, double timeout_s, dt_child *c)
{
    double end = dt_now() + timeout_s;
    for (;;) {
        if (dt_contains(path, needle))
            return 1;
        if (dt_now() > end || (c && dt_exited(c)))
            return dt_contains(path, needle);
        dt_sleep(0.05);
    }
}

static inline long long dt_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static inline int dt_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int r = fputs(text, f) < 0;
    return (fclose(f) != 0 || r) ? -1 : 0;
}

/* A fresh temp dir ($TMPDIR or /tmp) and its removal. */
static inline const char *dt_tmpdir(char *buf, size_t n, const char *name)
{
    const char *base = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    snprintf(buf, n, "%s/pc-%s-XXXXXX", base, name);
    if (!mkdtemp(buf))
        return NULL;
    if (strlen(buf) < sizeof dt_dir_)
        memcpy(dt_dir_, buf, strlen(buf) + 1);
    return buf;
}

static inline int dt_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static inline void dt_rmtree(const char *dir)
{
    if (!dir || !dir[0])
        return;
    nftw(dir, dt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (dir == dt_dir_ || !strcmp(dir, dt_dir_))
        dt_dir_[0] = '\0';
}

/* Prints the last max bytes of a child's log as TAP diagnostics. */
static inline void dt_diag_file(const char *what, const char *path, size_t max)
{
    char *s = dt_slurp(path);
    if (!s)
        return;
    size_t len = strlen(s);
    char *p = len > max ? s + len - max : s;
    tap_diag("---- %s (%s)%s ----", what, path, len > max ? ", end" : "");
    for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n"))
        tap_diag("%s", line);
    free(s);
}

/* --- what panocap prints --------------------------------------------------- */

/* "summary: N frame sets in, N encoded, N dropped, N substituted ..." */
static inline int dt_parse_summary(const char *text, long *in, long *encoded, long *dropped)
{
    const char *s = text ? strstr(text, "summary: ") : NULL;
    long a, b, c;
    if (!s || sscanf(s, "summary: %ld frame sets in, %ld encoded, %ld dropped", &a, &b, &c) != 3)
        return -1;
    if (in)
        *in = a;
    if (encoded)
        *encoded = b;
    if (dropped)
        *dropped = c;
    return 0;
}

/* The "enc N" count of a status line ("edge/cpu | 9.1 fps | in 20 enc 16 ..."). */
static inline long dt_status_encoded(const char *line)
{
    const char *s = line ? strstr(line, " enc ") : NULL;
    return s ? strtol(s + 5, NULL, 10) : -1;
}

/* --- the control socket ---------------------------------------------------- */

/* Sends one command line, reads the answer up to its final "OK..." or
 * "ERR..." line (or timeout_s). Returns 0 for OK, 1 for ERR, -1 otherwise;
 * the whole answer in buf. */
static inline int dt_control(const char *sock, const char *cmd, char *buf, size_t len, double timeout_s)
{
    buf[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof a.sun_path) {
        close(fd);
        return -1;
    }
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    char line[1100];
    snprintf(line, sizeof line, "%s\n", cmd);
    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
        close(fd);
        return -1;
    }
    size_t n = 0;
    int rc = -1;
    double end = dt_now() + timeout_s;
    while (n + 1 < len && dt_now() < end) {
        ssize_t r = read(fd, buf + n, len - n - 1);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = '\0';
        /* the answer ends with a line starting OK or ERR */
        if (n && buf[n - 1] == '\n') {
            char *last = buf + n - 1;
            while (last > buf && last[-1] != '\n')
                last--;
            if (!strncmp(last, "OK", 2)) {
                rc = 0;
                break;
            }
            if (!strncmp(last, "ERR", 3)) {
                rc = 1;
                break;
            }
        }
    }
    close(fd);
    return rc;
}

/* --- HTTP ------------------------------------------------------------------ */

/* Sends req raw to 127.0.0.1:port or [::1]:port (family AF_INET6), reads
 * the whole answer (until the server closes or 5 s pass). Returns the bytes
 * read, -1 when the connection fails. */
static inline int dt_http_raw(int family, int port, const char *req, char *buf, size_t len)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss = {0};
    socklen_t l;
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        a->sin6_port = htons((uint16_t)port);
        l = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a->sin_port = htons((uint16_t)port);
        l = sizeof *a;
    }
    buf[0] = '\0';
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, l) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
        close(fd);
        return -1;
    }
    size_t off = 0;
    double end = dt_now() + 5;
    while (off + 1 < len && dt_now() < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 500) != 1)
            continue;
        ssize_t r = recv(fd, buf + off, len - off - 1, 0);
        if (r <= 0)
            break;
        off += (size_t)r;
        buf[off] = '\0';
    }
    close(fd);
    return (int)off;
}

/* --- decoding what panocap wrote ------------------------------------------- */

typedef struct dt_decoded {
    int frames, errors, width, height, sizes_ok;
    int pts_increasing;  /* every frame's pts > the previous one */
    int64_t first_pts, last_pts;
    AVRational tb;
    char codec[32];
    int video_streams;   /* how many video streams the file has */
} dt_decoded;

/* Called for each decoded frame (index from 0, in output order); a
 * non-zero return stops the decoding. */
typedef int (*dt_frame_cb)(void *user, int index, const AVFrame *f);

/* Decodes every frame of video stream `video` (0 = the first video
 * stream, -1 = the best one) of path with libavformat + libavcodec. */
static inline int dt_decode_stream(const char *path, int video, dt_frame_cb cb, void *user, dt_decoded *r)
{
    memset(r, 0, sizeof *r);
    r->pts_increasing = 1;
    r->sizes_ok = 1;
    AVFormatContext *ic = NULL;
    if (avformat_open_input(&ic, path, NULL, NULL) < 0)
        return -1;
    if (avformat_find_stream_info(ic, NULL) < 0) {
        avformat_close_input(&ic);
        return -2;
    }
    int si = video < 0 ? av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0) : -1;
    for (unsigned i = 0; i < ic->nb_streams; i++)
        if (ic->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && r->video_streams++ == video)
            si = (int)i;
    if (si < 0) {
        avformat_close_input(&ic);
        return -3;
    }
    AVStream *st = ic->streams[si];
    r->tb = st->time_base;
    const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
    AVCodecContext *dc = dec ? avcodec_alloc_context3(dec) : NULL;
    if (!dc || avcodec_parameters_to_context(dc, st->codecpar) < 0 || avcodec_open2(dc, dec, NULL) < 0) {
        avcodec_free_context(&dc);
        avformat_close_input(&ic);
        return -4;
    }
    snprintf(r->codec, sizeof r->codec, "%s", dec->name);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    int eof = 0, stop = 0;
    while (!eof && !stop) {
        int rr = av_read_frame(ic, pkt);
        if (rr < 0) {
            eof = 1;
            avcodec_send_packet(dc, NULL);
        } else {
            if (pkt->stream_index == si && avcodec_send_packet(dc, pkt) < 0)
                r->errors++;
            av_packet_unref(pkt);
        }
        while (!stop && avcodec_receive_frame(dc, f) == 0) {
            if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT))
                r->errors++;
            int64_t pts = f->best_effort_timestamp;
            if (r->frames == 0)
                r->first_pts = pts;
            else if (pts == AV_NOPTS_VALUE || pts <= r->last_pts)
                r->pts_increasing = 0;
            r->last_pts = pts;
            if (r->frames == 0) {
                r->width = f->width;
                r->height = f->height;
            } else if (f->width != r->width || f->height != r->height)
                r->sizes_ok = 0;
            if (cb && cb(user, r->frames, f))
                stop = 1;
            r->frames++;
            av_frame_unref(f);
        }
    }
    av_frame_free(&f);
    av_packet_free(&pkt);
    avcodec_free_context(&dc);
    avformat_close_input(&ic);
    return 0;
}

/* Decodes every video frame of path's best video stream. */
static inline int dt_decode(const char *path, dt_frame_cb cb, void *user, dt_decoded *r)
{
    return dt_decode_stream(path, -1, cb, user, r);
}

/* --- picture comparison ---------------------------------------------------- */

/* Squared error of two 8-bit planes over a rectangle. */
static inline double dt_sse(const uint8_t *a, size_t ap, const uint8_t *b, size_t bp, int x0, int y0, int w, int h)
{
    double se = 0;
    for (int y = y0; y < y0 + h; y++) {
        const uint8_t *ra = a + (size_t)y * ap, *rb = b + (size_t)y * bp;
        long s = 0;
        for (int x = x0; x < x0 + w; x++) {
            int d = ra[x] - rb[x];
            s += d * d;
        }
        se += (double)s;
    }
    return se;
}

static inline double dt_psnr(double sse, double count)
{
    double mse = sse / count;
    return mse <= 1e-10 ? 99.0 : 10 * log10(255.0 * 255.0 / mse);
}

#endif
