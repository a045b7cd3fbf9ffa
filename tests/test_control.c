/* test_control.c - the control socket server on a temporary socket: every
 * line command answers as documented and fires its callback, bad input is
 * answered with ERR lines, HTTP GET /metrics works (with curl --unix-socket
 * when curl is installed), an idle client does not block others, stale and
 * live sockets are told apart, and stop removes the socket.
 * No client can lock it: with 1,000 idle connections open, and with 15
 * clients that ask for large answers and never read them, `status` is
 * still answered. Snapshots stay inside the snapshot folder (.., absolute
 * paths elsewhere, symlinked folders refused) and are answered with the
 * writer's real result; snapshot-cameras makes its folder there. */
#include "control.h"
#include "tap.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/resource.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct calls {
    pthread_mutex_t mu;
    int status, metrics, algo, snapshot, snapshot_cameras, idr, reload, vcam;
    char last_vcam[600];
    pc_algo_id last_algo;
    pc_variant last_variant;
    char last_path[PATH_MAX];
    char last_view[64];       /* snapshot's view, "(none)" */
    int fail_idr;
    int big_metrics;      /* answer metrics with 200 KiB */
    int snapshot_fails;   /* the writer reports a failure */
    int reload_defer;     /* reload: the test answers (pc_control_done) */
    unsigned long long reload_token;
    pc_control *ctl;
} calls;

static int cb_status(void *u, char *buf, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->status++;
    pthread_mutex_unlock(&c->mu);
    snprintf(buf, len, "edge/auto | 50.0 fps | in 10 enc 10 drop 0");
    return 0;
}

/* vcam: what the daemon's pl_vcams answers, by the args */
static int cb_vcam(void *u, const char *args, char *buf, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->vcam++;
    snprintf(c->last_vcam, sizeof c->last_vcam, "%s", args);
    pthread_mutex_unlock(&c->mu);
    if (!args[0]) {
        snprintf(buf, len, "main 1920x1080: pan 0.0\nside 1280x720: pan 10.0\nOK 2 virtual cameras");
        return 0;
    }
    if (!strcmp(args, "main goto 200 0")) {
        snprintf(buf, len, "ERR main: PAN 200 is out of range: -180..180 degrees");
        return -1;
    }
    if (!strcmp(args, "main silent"))
        return -1; /* an answer without OK or ERR */
    snprintf(buf, len, "OK %s", args);
    return 0;
}

static int cb_metrics(void *u, char *buf, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->metrics++;
    pthread_mutex_unlock(&c->mu);
    snprintf(buf, len, "# HELP panocap_fps Frames.\n# TYPE panocap_fps gauge\npanocap_fps 50\n");
    if (c->big_metrics) {
        size_t l = strlen(buf);
        for (; l + 40 < len && l < 200 * 1024; l += 32)
            memcpy(buf + l, "# padding padding padding pad.\n\n", 32);
        buf[l] = '\0';
    }
    return 0;
}

static int cb_algo(void *u, pc_algo_id a, pc_variant v, char *err, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->algo++;
    c->last_algo = a;
    c->last_variant = v;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* The "writer": answers at once from the control thread itself (as a
 * writer thread would, through pc_control_done). */
static int cb_snapshot(void *u, const char *path, const char *view, unsigned long long token, char *err, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->snapshot++;
    snprintf(c->last_path, sizeof c->last_path, "%s", path);
    snprintf(c->last_view, sizeof c->last_view, "%s", view ? view : "(none)");
    int fail = c->snapshot_fails;
    pthread_mutex_unlock(&c->mu);
    pc_control_done(c->ctl, token, fail ? -1 : 0, fail ? "disk full" : path);
    return 0;
}

/* snapshot-cameras: the folder exists when the callback runs. */
static int cb_snapshot_cameras(void *u, const char *dir, unsigned long long token, char *err, size_t len)
{
    calls *c = u;
    struct stat st;
    pthread_mutex_lock(&c->mu);
    c->snapshot_cameras++;
    snprintf(c->last_path, sizeof c->last_path, "%s", dir);
    pthread_mutex_unlock(&c->mu);
    int isdir = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    pc_control_done(c->ctl, token, isdir ? 0 : -1, isdir ? dir : "no folder");
    return 0;
}

static int cb_idr(void *u, char *err, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->idr++;
    int fail = c->fail_idr;
    pthread_mutex_unlock(&c->mu);
    if (fail) {
        snprintf(err, len, "encoder not running\nsecond line");
        return -1;
    }
    return 0;
}

/* reload: answered at once with an empty outcome, or (reload_defer) its
 * token kept for the test to answer later, as the main thread does once
 * the file is read */
static int cb_reload(void *u, unsigned long long token, char *err, size_t len)
{
    calls *c = u;
    pthread_mutex_lock(&c->mu);
    c->reload++;
    int defer = c->reload_defer;
    c->reload_token = token;
    pthread_mutex_unlock(&c->mu);
    if (!defer)
        pc_control_done(c->ctl, token, 0, "");
    return 0;
}

/* A logger that keeps every line (the control thread logs). */
typedef struct kept_log {
    pthread_mutex_t mu;
    char text[16384];
    size_t len;
} kept_log;

static void keep_line(void *user, int level, const char *line)
{
    kept_log *k = user;
    (void)level;
    pthread_mutex_lock(&k->mu);
    int n = snprintf(k->text + k->len, sizeof k->text - k->len, "%s\n", line);
    if (n > 0 && (size_t)n < sizeof k->text - k->len)
        k->len += (size_t)n;
    pthread_mutex_unlock(&k->mu);
}

/* 1 when s holds a control byte other than newline. */
static int has_raw_ctl(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f)
            return 1;
    return 0;
}

static int dial(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads until a line starting with OK or ERR (or EOF / 3 s). */
static char *read_answer(int fd, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (;;) {
        /* Complete when the last full line is OK... or ERR... */
        if (off && buf[off - 1] == '\n') {
            char *last = buf + off - 1;
            while (last > buf && last[-1] != '\n')
                last--;
            if (strncmp(last, "OK", 2) == 0 || strncmp(last, "ERR ", 4) == 0)
                return buf;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 3000) != 1)
            return buf;
        ssize_t n = recv(fd, buf + off, len - off - 1, 0);
        if (n <= 0)
            return buf;
        off += (size_t)n;
        buf[off] = '\0';
    }
}

static char *ask(const char *path, const char *cmd, char *buf, size_t len)
{
    int fd = dial(path);
    if (fd < 0) {
        snprintf(buf, len, "(connect failed: %s)", strerror(errno));
        return buf;
    }
    if (send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0)
        snprintf(buf, len, "(send failed)");
    else
        read_answer(fd, buf, len);
    close(fd);
    return buf;
}

/* Whole reply until the server closes (HTTP). */
static char *ask_all(const char *path, const char *req, char *buf, size_t len)
{
    int fd = dial(path);
    size_t off = 0;
    buf[0] = '\0';
    if (fd < 0)
        return buf;
    send(fd, req, strlen(req), MSG_NOSIGNAL);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 3000) != 1)
            break;
        ssize_t n = recv(fd, buf + off, len - off - 1, 0);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    buf[off] = '\0';
    close(fd);
    return buf;
}

int main(void)
{
    char dir[] = "/tmp/pc-control-XXXXXX", path[100], err[512], buf[8192];
    if (!mkdtemp(dir))
        return tap_skip_all("mkdtemp failed");
    snprintf(path, sizeof path, "%s/control.sock", dir);
    calls c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    char snapdir[PATH_MAX], other[PATH_MAX];
    snprintf(snapdir, sizeof snapdir, "%s/snaps", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    mkdir(snapdir, 0755);
    mkdir(other, 0755);
    pc_control_ops ops = {&c, cb_status, cb_metrics, cb_algo, cb_snapshot, cb_idr, cb_reload, snapdir, NULL, NULL,
                          cb_snapshot_cameras, cb_vcam};
    pc_logger quiet = {.max_level = PC_LOG_ERR};
    pc_control *ctl = NULL;
    int rc = pc_control_start(&ctl, path, &ops, &quiet, err, sizeof err);
    c.ctl = ctl;
    TAP_CHECK(rc == 0, "server started on %s (%s)", path, rc ? err : "ok");
    struct stat st;
    TAP_CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0660, "socket file mode 0660");

    ask(path, "help\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "algo NAME [VARIANT]") && strstr(buf, "snapshot NAME.png [VIEW]") && strstr(buf, "\nOK\n"),
              "help");
    ask(path, "status\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "edge/auto | 50.0 fps | in 10 enc 10 drop 0\nOK\n") == 0 && c.status == 1,
              "status: the callback's line, then OK");
    ask(path, "metrics\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "# TYPE panocap_fps gauge\npanocap_fps 50\nOK\n") && c.metrics == 1, "metrics");
    ask(path, "algos\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "wd-modified") && strstr(buf, "bilinear") && strstr(buf, "\nOK\n"), "algos lists the table");
    ask(path, "algo bilinear 4px\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "OK algo bilinear 4px\n") == 0 && c.algo == 1 && c.last_algo == PC_ALGO_BILINEAR &&
                  c.last_variant == PC_VARIANT_4PX,
              "algo bilinear 4px: callback with the ids, [%s]", buf);
    ask(path, "algo HQ-Linear\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "OK algo hq-linear auto\n") == 0 && c.last_algo == PC_ALGO_HQ_LINEAR &&
                  c.last_variant == PC_VARIANT_AUTO,
              "algo names are case-insensitive, variant defaults to auto");
    ask(path, "algo edgy\n", buf, sizeof buf);
    TAP_CHECK(strncmp(buf, "ERR unknown algorithm \"edgy\"; available: bilinear, smooth-hue", 60) == 0 && c.algo == 2,
              "unknown algorithm: ERR with the list, no callback: %s", buf);
    ask(path, "algo edge 8px\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR unknown variant \"8px\"") && c.algo == 2, "unknown variant: ERR");
    ask(path, "algo\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR usage: algo NAME [VARIANT]\n") == 0, "algo without a name: usage");
    /* vcam: the rest of the line to the callback, its answer relayed */
    ask(path, "vcam\n", buf, sizeof buf);
    TAP_CHECK(!strcmp(buf, "main 1920x1080: pan 0.0\nside 1280x720: pan 10.0\nOK 2 virtual cameras\n") && c.vcam == 1 &&
                  !strcmp(c.last_vcam, ""),
              "vcam: a status line per view, then OK");
    ask(path, "VCAM   main goto 10 -5 speed 3  \n", buf, sizeof buf);
    TAP_CHECK(!strcmp(buf, "OK main goto 10 -5 speed 3\n") && !strcmp(c.last_vcam, "main goto 10 -5 speed 3"),
              "vcam NAME ...: the words after vcam to the callback, its OK line back: %s", buf);
    ask(path, "vcam main goto 200 0\n", buf, sizeof buf);
    TAP_CHECK(!strcmp(buf, "ERR main: PAN 200 is out of range: -180..180 degrees\n"), "a refused one: its ERR: %s", buf);
    ask(path, "vcam main silent\n", buf, sizeof buf);
    TAP_CHECK(!strcmp(buf, "ERR no answer\n"), "an answer without OK or ERR is an ERR: %s", buf);
    ask(path, "help\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "vcam NAME [VERB ...]") && strstr(buf, "follow on|off"), "help lists vcam");
    /* snapshots: inside the folder only, answered with the writer's result */
    char want[PATH_MAX + 64], cmd[PATH_MAX + 64];
    ask(path, "snapshot pic.png\n", buf, sizeof buf);
    snprintf(want, sizeof want, "OK snapshot %s/pic.png\n", snapdir);
    TAP_CHECK(strcmp(buf, want) == 0 && c.snapshot == 1, "snapshot NAME: written into the folder: %s", buf);
    snprintf(cmd, sizeof cmd, "snapshot %s/pano shot.png\n", snapdir);
    ask(path, cmd, buf, sizeof buf);
    snprintf(want, sizeof want, "%s/pano shot.png", snapdir);
    TAP_CHECK(strncmp(buf, "OK snapshot ", 12) == 0 && c.snapshot == 2 && strcmp(c.last_path, want) == 0,
              "snapshot: an absolute path inside the folder (spaces kept)");
    TAP_CHECK(!strcmp(c.last_view, "(none)"), "snapshot NAME with spaces in it: no view (%s)", c.last_view);
    /* a view's picture: the word after NAME.png */
    ask(path, "snapshot view.png main\n", buf, sizeof buf);
    snprintf(want, sizeof want, "OK snapshot %s/view.png\n", snapdir);
    TAP_CHECK(!strcmp(buf, want) && c.snapshot == 3 && !strcmp(c.last_view, "main"),
              "snapshot NAME.png VIEW: the view to the callback (%s), the file as before: %s", c.last_view, buf);
    c.snapshot = 2; /* the counts below are of the checks that follow */
    ask(path, "snapshot view main\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "must end in .png") && c.snapshot == 2,
              "snapshot NAME VIEW without .png: ERR (%s)", buf);
    ask(path, "snapshot ../escape.png\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "\"..\" is not allowed") && c.snapshot == 2,
              "snapshot ../escape.png: ERR, no write: %s", buf);
    snprintf(cmd, sizeof cmd, "snapshot %s/x.png\n", other);
    ask(path, cmd, buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "outside the snapshot folder") && c.snapshot == 2,
              "snapshot to an absolute path elsewhere: ERR: %s", buf);
    ask(path, "snapshot /etc/x.png\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && c.snapshot == 2, "snapshot /etc/x.png: ERR");
    char link[PATH_MAX + 16];
    snprintf(link, sizeof link, "%s/out", snapdir);
    TAP_CHECK(symlink(other, link) == 0, "a symlink from the folder to elsewhere");
    ask(path, "snapshot out/y.png\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "outside the snapshot folder") && c.snapshot == 2,
              "snapshot through a symlinked folder: ERR: %s", buf);
    ask(path, "snapshot out.png.txt\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, ".png"), "snapshot without .png: ERR");
    ask(path, "snapshot nosuchdir/a.png\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "No such file"), "snapshot into a missing folder: %s", buf);
    c.snapshot_fails = 1;
    ask(path, "snapshot fail.png\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR disk full\n") == 0 && c.snapshot == 3,
              "snapshot: the writer's failure is the answer: %s", buf);
    c.snapshot_fails = 0;
    /* snapshot-cameras: a folder inside the snapshot folder, made when absent */
    ask(path, "snapshot-cameras cal\n", buf, sizeof buf);
    snprintf(want, sizeof want, "OK snapshot-cameras %s/cal\n", snapdir);
    TAP_CHECK(strcmp(buf, want) == 0 && c.snapshot_cameras == 1, "snapshot-cameras DIR: the folder made: %s", buf);
    ask(path, "snapshot-cameras cal/\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, want) == 0 && c.snapshot_cameras == 2, "snapshot-cameras DIR/: an existing folder: %s", buf);
    ask(path, "snapshot-cameras ../cal\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "\"..\" is not allowed") && c.snapshot_cameras == 2,
              "snapshot-cameras ../cal: ERR: %s", buf);
    snprintf(cmd, sizeof cmd, "snapshot-cameras %s/cal\n", other);
    ask(path, cmd, buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "outside the snapshot folder") && c.snapshot_cameras == 2,
              "snapshot-cameras to a folder elsewhere: ERR: %s", buf);
    ask(path, "snapshot-cameras out/cal\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "outside the snapshot folder") && c.snapshot_cameras == 2,
              "snapshot-cameras through a symlinked folder: ERR: %s", buf);
    char afile[PATH_MAX + 16];
    snprintf(afile, sizeof afile, "%s/afile", snapdir);
    FILE *af = fopen(afile, "w");
    if (af)
        fclose(af);
    ask(path, "snapshot-cameras afile\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && strstr(buf, "not a folder") && c.snapshot_cameras == 2,
              "snapshot-cameras onto a file: ERR: %s", buf);
    ask(path, "snapshot-cameras .\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR ") == buf && c.snapshot_cameras == 2, "snapshot-cameras .: ERR: %s", buf);
    ask(path, "snapshot-cameras\n", buf, sizeof buf);
    TAP_CHECK(strstr(buf, "ERR usage: snapshot-cameras") == buf, "snapshot-cameras without a folder: usage");
    unlink(link);
    ask(path, "idr\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "OK idr\n") == 0 && c.idr == 1, "idr");
    c.fail_idr = 1;
    ask(path, "idr\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR encoder not running second line\n") == 0, "failing callback: one ERR line: %s", buf);
    ask(path, "reload\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "OK reload\n") == 0 && c.reload == 1, "reload");
    /* the answer waits for the outcome (it said OK before the file was
     * read, also when it was then rejected), and carries it */
    {
        c.reload_defer = 1;
        int fd = dial(path);
        char early[256] = "", late[1024] = "";
        send(fd, "reload\n", 7, MSG_NOSIGNAL);
        struct pollfd pw = {fd, POLLIN, 0};
        int got_early = poll(&pw, 1, 500) == 1;
        if (got_early)
            read_answer(fd, early, sizeof early);
        pthread_mutex_lock(&c.mu);
        unsigned long long tok = c.reload_token;
        pthread_mutex_unlock(&c.mu);
        pc_control_done(c.ctl, tok, -1, "reload: configuration rejected, keeping the running settings (1 error): "
                                        "x.conf:3: error: debayer.algo: unknown value \"edgy\"");
        read_answer(fd, late, sizeof late);
        TAP_CHECK(!got_early && c.reload == 2 &&
                      !strcmp(late, "ERR reload: configuration rejected, keeping the running settings (1 error): "
                                    "x.conf:3: error: debayer.algo: unknown value \"edgy\"\n"),
                  "reload: no answer before the outcome (%s), then the outcome: %s", early, late);
        send(fd, "reload\n", 7, MSG_NOSIGNAL);
        /* until the control thread has handed the reload over (its token
         * is that request's), not a guess of how long that takes */
        for (int k = 0; k < 3000; k++) {
            pthread_mutex_lock(&c.mu);
            int asked = c.reload;
            tok = c.reload_token;
            pthread_mutex_unlock(&c.mu);
            if (asked == 3)
                break;
            usleep(10000);
        }
        pc_control_done(c.ctl, tok, 0, "debayer.algo edge -> bilinear (live)");
        read_answer(fd, late, sizeof late);
        TAP_CHECK(!strcmp(late, "OK reload debayer.algo edge -> bilinear (live)\n"), "reload applied: %s", late);
        close(fd);
        c.reload_defer = 0;
        ask(path, "reload now\n", buf, sizeof buf);
        TAP_CHECK(!strcmp(buf, "ERR usage: reload\n") && c.reload == 3, "reload with words after it: usage (%s)", buf);
    }
    ask(path, "frobnicate now\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR unknown command \"frobnicate\"; try help\n") == 0, "unknown command: %s", buf);

    /* Several commands on one connection, CRLF tolerated, blank lines ignored. */
    int fd = dial(path);
    const char *many = "status\r\n\nidr\r\nquit\n";
    send(fd, many, strlen(many), MSG_NOSIGNAL);
    char all[4096];
    size_t off = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 3000) != 1)
            break;
        ssize_t n = recv(fd, all + off, sizeof all - off - 1, 0);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    all[off] = '\0';
    close(fd);
    c.fail_idr = 0;
    TAP_CHECK(strstr(all, "drop 0\nOK\n") && strstr(all, "ERR encoder not running") && strstr(all, "OK bye\n"),
              "pipelined commands answered in order, quit closes");

    /* An idle client does not block the others. */
    int idle = dial(path);
    send(idle, "sta", 3, MSG_NOSIGNAL);
    ask(path, "idr\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "OK idr\n") == 0, "an idle half-line client does not block another");
    close(idle);

    /* 1,000 idle clients: the longest-idle ones make room, status answers. */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 1100 && rl.rlim_max >= 1100) {
        rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    int nidle = rl.rlim_cur >= 1100 ? 1000 : (int)rl.rlim_cur - 100;
    static int idlefd[1000];
    int opened = 0;
    for (int i = 0; i < nidle; i++) {
        idlefd[i] = dial(path);
        opened += idlefd[i] >= 0;
    }
    ask(path, "status\n", buf, sizeof buf);
    TAP_CHECK(opened == nidle && strcmp(buf, "edge/auto | 50.0 fps | in 10 enc 10 drop 0\nOK\n") == 0,
              "%d of %d idle connections open, status still answered: %.40s", opened, nidle, buf);
    for (int i = 0; i < nidle; i++)
        if (idlefd[i] >= 0)
            close(idlefd[i]);

    /* 15 clients ask for 200 KiB answers, again and again, and never read. */
    c.big_metrics = 1;
    int hog[15];
    for (int i = 0; i < 15; i++) {
        hog[i] = dial(path);
        for (int j = 0; j < 20; j++)
            send(hog[i], "metrics\n", 8, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    ask(path, "status\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "edge/auto | 50.0 fps | in 10 enc 10 drop 0\nOK\n") == 0,
              "15 clients that never read their answers: status still answered: %.40s", buf);
    for (int i = 0; i < 15; i++)
        close(hog[i]);
    c.big_metrics = 0;

    /* Over-long line. */
    char longline[2100];
    memset(longline, 'x', sizeof longline - 2);
    longline[sizeof longline - 2] = '\n';
    longline[sizeof longline - 1] = '\0';
    ask(path, longline, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR line too long\n") == 0, "line too long: ERR");

    /* NUL bytes: a line that starts with one (it read as empty: no answer)
     * and one inside a command get ERR; the connection goes on */
    {
        int fd = dial(path), idr0 = c.idr;
        static const char nul_first[] = "\0status\n", nul_mid[] = "idr\0x\n";
        char b1[256] = "", b2[256] = "", b3[512] = "";
        int sent = send(fd, nul_first, sizeof nul_first - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof nul_first - 1);
        read_answer(fd, b1, sizeof b1);
        sent &= send(fd, nul_mid, sizeof nul_mid - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof nul_mid - 1);
        read_answer(fd, b2, sizeof b2);
        sent &= send(fd, "status\n", 7, MSG_NOSIGNAL) == 7;
        read_answer(fd, b3, sizeof b3);
        close(fd);
        TAP_CHECK(sent && strcmp(b1, "ERR the line holds a NUL byte; commands are text lines\n") == 0,
                  "a line starting with a NUL byte: ERR (%s)", b1);
        TAP_CHECK(strncmp(b2, "ERR ", 4) == 0 && strstr(b2, "NUL") && c.idr == idr0,
                  "a NUL inside a command: ERR, the command not run (%s)", b2);
        TAP_CHECK(strstr(b3, "fps") && strstr(b3, "\nOK\n"), "the same connection answers the next line");
        int hfd = dial(path);
        static const char req[] = "GET /metrics HTTP/1.0\r\nX-A: \0b\r\n\r\n";
        char hb[512] = "";
        size_t off = 0;
        if (send(hfd, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof req - 1))
            for (ssize_t r; off + 1 < sizeof hb && (r = recv(hfd, hb + off, sizeof hb - 1 - off, 0)) > 0;)
                off += (size_t)r;
        hb[off] = '\0';
        close(hfd);
        TAP_CHECK(strncmp(hb, "HTTP/1.0 400", 12) == 0, "an HTTP header with a NUL byte: 400 (%.20s)", hb);
    }

    /* HTTP on the same socket. */
    ask_all(path, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n", buf, sizeof buf);
    const char *body = strstr(buf, "\r\n\r\n");
    size_t clen = 0;
    const char *cl = strstr(buf, "Content-Length: ");
    if (cl)
        clen = strtoul(cl + 16, NULL, 10);
    TAP_CHECK(strncmp(buf, "HTTP/1.0 200 OK\r\n", 17) == 0 && strstr(buf, "text/plain; version=0.0.4") && body &&
                  strlen(body + 4) == clen && strstr(body, "panocap_fps 50\n"),
              "GET /metrics: 200, Prometheus content type, body of Content-Length bytes");
    ask_all(path, "GET /nope HTTP/1.0\r\n\r\n", buf, sizeof buf);
    TAP_CHECK(strncmp(buf, "HTTP/1.0 404", 12) == 0, "GET /nope: 404");
    ask_all(path, "GET /status HTTP/1.0\r\n\r\n", buf, sizeof buf);
    TAP_CHECK(strncmp(buf, "HTTP/1.0 200", 12) == 0 && strstr(buf, "50.0 fps"), "GET /status: the status line");

    if (access("/usr/bin/curl", X_OK) == 0) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "curl -s --max-time 5 --unix-socket '%s' http://localhost/metrics", path);
        FILE *p = popen(cmd, "r");
        size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
        buf[n] = '\0';
        int st2 = p ? pclose(p) : -1;
        TAP_CHECK(st2 == 0 && strstr(buf, "panocap_fps 50\n") && !strstr(buf, "HTTP/"),
                  "curl --unix-socket http://localhost/metrics");
    } else {
        tap_skip("curl not installed");
    }

    /* A second server on a live socket is refused. */
    pc_control *ctl2 = NULL;
    rc = pc_control_start(&ctl2, path, &ops, &quiet, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "another process is serving it"), "live socket: refused (%s)", err);
    pc_control_stop(ctl);
    TAP_CHECK(access(path, F_OK) != 0, "stop removes the socket file");

    /* A stale socket (no listener) is replaced. */
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    bind(sfd, (struct sockaddr *)&a, sizeof a);
    close(sfd);
    pc_control_ops none = {0};
    rc = pc_control_start(&ctl, path, &none, &quiet, err, sizeof err);
    TAP_CHECK(rc == 0, "stale socket replaced (%s)", rc ? err : "ok");
    ask(path, "status\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR not available\n") == 0, "no callbacks: ERR not available");
    ask(path, "algo edge\n", buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "ERR not available\n") == 0, "no algo callback: ERR not available");
    pc_control_stop(ctl);

    /* Control bytes a client sends are escaped in the answers that quote
     * them and in the lines the control thread logs (they reached the
     * terminal and the journal raw). */
    {
        kept_log kl = {.len = 0};
        pthread_mutex_init(&kl.mu, NULL);
        pc_logger keep = {.sink = keep_line, .user = &kl, .max_level = PC_LOG_DEBUG};
        rc = pc_control_start(&ctl, path, &ops, &keep, err, sizeof err);
        c.ctl = ctl;
        char a1[1024] = "", a2[1024] = "", a3[1024] = "";
        ask(path, "snapshot \x1b[2Jpwn\x07.png\n", a1, sizeof a1);
        ask(path, "\x1b]0;pwned\x07\n", a2, sizeof a2);
        ask(path, "algo \x1b[31medge\n", a3, sizeof a3);
        pc_control_stop(ctl);
        TAP_CHECK(rc == 0 && strncmp(a1, "OK snapshot ", 12) == 0 && strstr(a1, "/\\x1b[2Jpwn\\x07.png\n") &&
                      !has_raw_ctl(a1),
                  "snapshot NAME with control bytes: its OK line quotes the name escaped: %s", a1);
        TAP_CHECK(!strcmp(a2, "ERR unknown command \"\\x1b]0;pwned\\x07\"; try help\n"),
                  "an unknown command of control bytes: ERR quoting it escaped: %s", a2);
        TAP_CHECK(strstr(a3, "ERR unknown algorithm \"\\x1b[31medge\"") == a3 && !has_raw_ctl(a3),
                  "an unknown algorithm: ERR quoting it escaped: %s", a3);
        pthread_mutex_lock(&kl.mu);
        TAP_CHECK(strstr(kl.text, "control: snapshot to ") && strstr(kl.text, "\\x1b[2Jpwn\\x07.png requested") &&
                      !has_raw_ctl(kl.text),
                  "the control thread's log lines: the name escaped, no raw control byte");
        pthread_mutex_unlock(&kl.mu);
        pthread_mutex_destroy(&kl.mu);
    }

    /* Not a socket; too long a path. */
    FILE *f = fopen(path, "w");
    fclose(f);
    rc = pc_control_start(&ctl, path, &ops, &quiet, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "not a socket"), "a regular file is not replaced: %s", err);
    unlink(path);
    char lp[200];
    memset(lp, 'a', sizeof lp - 1);
    lp[0] = '/';
    lp[sizeof lp - 1] = '\0';
    rc = pc_control_start(&ctl, lp, &ops, &quiet, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "longer than"), "too long a path: %s", err);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no-such-folder/control.sock", dir);
    rc = pc_control_start(&ctl, missing, &ops, &quiet, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "bind") && strstr(err, "No such file"), "missing directory: %s", err);

    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
