/* control.c - the control socket server (see control.h): one thread, poll()
 * over the listening socket, a stop eventfd, an eventfd for asynchronous
 * answers and up to 64 clients. Reads and writes never block: an answer
 * that does not fit the socket waits in the client's own buffer (its input
 * waits too), a client that does not read it in time is dropped, an idle
 * one is closed, and when every slot is taken the longest-idle client
 * makes room for the new one. */
#include "control.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 64
#define BACKLOG 128
#define ACCEPT_BURST 256          /* connections taken per wake-up */
#define IN_MAX 1024
#define TEXT_MAX (256 * 1024)
#define OUT_MAX (TEXT_MAX + 4096)
#define PEND_MAX (1024 * 1024)    /* unread answers kept per client */
#define WRITE_TIMEOUT_MS 2000     /* a client must take its answer within this */
#define IDLE_TIMEOUT_MS 60000
#define ASYNC_TIMEOUT_MS 15000    /* snapshot, snapshot-cameras, reload answers */

typedef struct client {
    int fd;       /* -1 = free */
    char in[IN_MAX];
    size_t inlen;
    int lines;    /* lines received on this connection */
    int http;     /* 1: an HTTP request, reading headers */
    char http_method[8];
    char http_path[256];
    unsigned long long serial; /* connection number: async answers find it */
    int64_t last_ms;           /* last input or answer */
    char *pend;                /* answer bytes the socket did not take yet */
    size_t plen, poff;
    int64_t pend_ms;           /* when pend started to wait */
    int close_after;           /* close once pend is sent */
    int eof;                   /* the client shut down its side */
    int dead;                  /* drop at the end of this round */
    int waiting;               /* an asynchronous command is running */
    const char *wait_cmd;      /* its name, for the OK line */
    int64_t wait_ms;
    int discard;               /* dropping the rest of an over-long line */
} client;

typedef struct done_msg {
    unsigned long long token;
    int rc;
    char msg[512];
} done_msg;

struct pc_control {
    int lfd, wakefd, donefd;
    pthread_t thread;
    int started;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    pc_control_ops ops;
    char *snapshot_dir;
    const pc_logger *lg;
    client cl[MAX_CLIENTS];
    unsigned long long next_serial;
    char *text; /* callback output */
    char *out;  /* response being built */
    size_t outlen;
    pthread_mutex_t done_lock; /* guards done[] (any thread -> control thread) */
    done_msg done[MAX_CLIENTS];
    int ndone;
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void out_reset(pc_control *c) { c->outlen = 0; c->out[0] = '\0'; }

static void outf(pc_control *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(pc_control *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->out + c->outlen, OUT_MAX - c->outlen, fmt, ap);
    va_end(ap);
    if (n > 0)
        c->outlen += (size_t)n < OUT_MAX - c->outlen ? (size_t)n : OUT_MAX - c->outlen - 1;
}

/* Appends text, making sure it ends with a newline. */
static void out_text(pc_control *c, const char *t)
{
    size_t n = strlen(t);
    outf(c, "%s%s", t, (n && t[n - 1] != '\n') ? "\n" : "");
}

/* Best effort, never blocks: for a last word to a client being closed. */
static void say_and_forget(int fd, const char *msg)
{
    ssize_t w = send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
}

/* Sends what the socket takes now; the rest waits in k->pend (the client's
 * input is not read meanwhile). Too much unread: the client is dropped. */
static void client_send(client *k, const char *buf, size_t len)
{
    size_t off = 0;
    while (!k->plen && off < len) {
        ssize_t w = send(k->fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno == EINTR)
            continue;
        else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        else {
            k->dead = 1;
            return;
        }
    }
    size_t rest = len - off, have = k->plen - k->poff;
    if (!rest)
        return;
    if (have + rest > PEND_MAX) {
        k->dead = 1;
        return;
    }
    if (k->poff) {
        memmove(k->pend, k->pend + k->poff, have);
        k->poff = 0;
        k->plen = have;
    }
    char *np = realloc(k->pend, k->plen + rest);
    if (!np) {
        k->dead = 1;
        return;
    }
    k->pend = np;
    memcpy(k->pend + k->plen, buf + off, rest);
    k->plen += rest;
    if (!k->pend_ms)
        k->pend_ms = now_ms();
}

static void drop_client(client *k)
{
    if (k->fd >= 0)
        close(k->fd);
    free(k->pend);
    memset(k, 0, sizeof *k);
    k->fd = -1;
}

static const char help_text[] =
    "status                 the status line (fps, drops, p99 latency per stage)\n"
    "metrics                Prometheus metrics\n"
    "algos                  the algorithm table\n"
    "algo NAME [VARIANT]    switch the demosaicing algorithm live (VARIANT: auto, 2px, 4px)\n"
    "snapshot NAME.png [VIEW]  a PNG of what the stream shows (the panorama; VIEW: a virtual camera's)\n"
    "                       into the snapshot folder\n"
    "snapshot-cameras DIR   one PNG per camera (DIR/cam0.png ...) in a folder of the snapshot folder\n"
    "idr                    force an IDR frame\n"
    "reload                 re-read the configuration file (as SIGHUP); answered with the outcome\n"
    "wb [freeze]            white-balance gains as config lines; freeze fixes automatic ones\n"
    "vcam                   the virtual cameras, one status line each\n"
    "vcam NAME [VERB ...]   a virtual camera: goto PAN TILT [HFOV], move DPAN DTILT [DHFOV], zoom HFOV,\n"
    "                       preset PNAME (each [speed DEG/S | time S]), save PNAME, follow on|off, stop\n"
    "help                   this list\n"
    "quit                   close the connection\n"
    "HTTP: GET /metrics, GET /status (curl --unix-socket SOCKET http://localhost/metrics)\n";

static void err_line(pc_control *c, const char *msg)
{
    /* One line, whatever the callback wrote; control bytes from the input
     * it may quote escaped (\x1b) */
    char one[512], esc[1024];
    size_t i = 0;
    for (; msg[i] && i + 1 < sizeof one; i++)
        one[i] = (msg[i] == '\n' || msg[i] == '\r') ? ' ' : msg[i];
    one[i] = '\0';
    pc_escape_ctl(esc, sizeof esc, one, i);
    outf(c, "ERR %s\n", esc[0] ? esc : "failed");
}

static void cmd_algo(pc_control *c, char *args)
{
    char *save = NULL;
    char *name = strtok_r(args, " \t", &save);
    char *var = strtok_r(NULL, " \t", &save);
    char *extra = strtok_r(NULL, " \t", &save);
    char names[256], err[512];
    if (!name || extra) {
        err_line(c, "usage: algo NAME [VARIANT]");
        return;
    }
    const pc_algo_desc *d = pc_algo_find(name);
    if (!d) {
        pc_algo_names(names, sizeof names);
        snprintf(err, sizeof err, "unknown algorithm \"%.64s\"; available: %s", name, names);
        err_line(c, err);
        return;
    }
    int v = var ? pc_variant_from_name(var) : PC_VARIANT_AUTO;
    if (v < 0) {
        snprintf(err, sizeof err, "unknown variant \"%.32s\"; allowed: auto, 2px, 4px", var);
        err_line(c, err);
        return;
    }
    if (v != PC_VARIANT_AUTO && !(d->variants & (unsigned)v)) {
        snprintf(err, sizeof err, "algorithm %s has no %s variant", d->name, var);
        err_line(c, err);
        return;
    }
    if (!c->ops.set_algo) {
        err_line(c, "not available");
        return;
    }
    err[0] = '\0';
    if (c->ops.set_algo(c->ops.user, d->id, (pc_variant)v, err, sizeof err) != 0) {
        err_line(c, err);
        return;
    }
    pc_log(c->lg, PC_LOG_NOTICE, "control: algorithm %s/%s requested", d->name, pc_variant_name((pc_variant)v));
    outf(c, "OK algo %s %s\n", d->name, pc_variant_name((pc_variant)v));
}

typedef int (*simple_cb)(void *user, char *err, size_t errlen);

static void cmd_simple(pc_control *c, simple_cb cb, const char *what)
{
    char err[512] = "";
    if (!cb) {
        err_line(c, "not available");
        return;
    }
    if (cb(c->ops.user, err, sizeof err) != 0) {
        err_line(c, err);
        return;
    }
    pc_log(c->lg, PC_LOG_INFO, "control: %s requested", what);
    outf(c, "OK %s\n", what);
}

typedef int (*text_cb)(void *user, char *buf, size_t len);

static int get_text(pc_control *c, text_cb cb)
{
    c->text[0] = '\0';
    if (!cb)
        return -1;
    int rc = cb(c->ops.user, c->text, TEXT_MAX);
    c->text[TEXT_MAX - 1] = '\0';
    return rc;
}

/* The file a "snapshot ARG" writes (folder 0), or the folder a
 * "snapshot-cameras ARG" writes into (folder 1): ARG relative to the
 * snapshot folder or absolute inside it, no ".." anywhere, a file name
 * ending in .png, its parent resolved (symlinks followed) and still inside
 * the snapshot folder, and no existing non-file (or symlink) at a file's
 * name; a folder is made when absent and must be a folder (no symlink). */
static int snapshot_path(const char *dir, const char *arg, int folder, char *out, size_t n, char *err,
                         size_t errlen)
{
    char rdir[PATH_MAX], cand[PATH_MAX], rpar[PATH_MAX];
    if (!dir || !dir[0]) {
        snprintf(err, errlen, "snapshots are off (daemon.snapshot_dir is empty)");
        return -1;
    }
    if (!realpath(dir, rdir)) {
        snprintf(err, errlen, "the snapshot folder %s: %s", dir, strerror(errno));
        return -1;
    }
    for (const char *p = arg; (p = strstr(p, "..")); p += 2)
        if ((p == arg || p[-1] == '/') && (p[2] == '\0' || p[2] == '/')) {
            snprintf(err, errlen, "snapshot path \"%.200s\": \"..\" is not allowed", arg);
            return -1;
        }
    if (snprintf(cand, sizeof cand, "%s%s%s", arg[0] == '/' ? "" : rdir, arg[0] == '/' ? "" : "/", arg) >=
        (int)sizeof cand) {
        snprintf(err, errlen, "snapshot path too long");
        return -1;
    }
    size_t cl = strlen(cand);
    while (folder && cl > 1 && cand[cl - 1] == '/')
        cand[--cl] = '\0';
    char *slash = strrchr(cand, '/');
    const char *name = slash + 1;
    size_t nl = strlen(name);
    if (folder && (nl == 0 || strcmp(name, ".") == 0)) {
        snprintf(err, errlen, "snapshot-cameras \"%.200s\": name a folder inside the snapshot folder", arg);
        return -1;
    }
    if (!folder && (nl < 5 || strcasecmp(name + nl - 4, ".png") != 0)) {
        snprintf(err, errlen, "snapshot \"%.200s\": the name must end in .png", arg);
        return -1;
    }
    *slash = '\0';
    if (!realpath(cand[0] ? cand : "/", rpar)) {
        snprintf(err, errlen, "snapshot folder %.200s: %s", cand, strerror(errno));
        return -1;
    }
    size_t dl = strlen(rdir);
    if (!(strncmp(rpar, rdir, dl) == 0 && (rpar[dl] == '\0' || rpar[dl] == '/' || dl == 1))) {
        snprintf(err, errlen, "snapshot \"%.200s\" is outside the snapshot folder %.200s", arg, rdir);
        return -1;
    }
    if (snprintf(out, n, "%s/%s", rpar, name) >= (int)n) {
        snprintf(err, errlen, "snapshot path too long");
        return -1;
    }
    struct stat st;
    if (!folder && lstat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "snapshot %.200s exists and is not a regular file", out);
        return -1;
    }
    if (folder && lstat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "snapshot-cameras %.200s exists and is not a folder", out);
        return -1;
    }
    if (folder && mkdir(out, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "snapshot-cameras %.200s: cannot make the folder: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}

/* "snapshot NAME.png VIEW": the view, cut off args (NULL: none). A name
 * may hold spaces ("pano shot.png"): the last word is a view only when
 * what comes before it ends in .png and the word itself does not. */
static const char *snapshot_view(char *args)
{
    char *sp = strrchr(args, ' '), *tab = strrchr(args, '\t');
    if (tab && (!sp || tab > sp))
        sp = tab;
    if (!sp || !sp[1])
        return NULL;
    size_t wl = strlen(sp + 1);
    if (wl >= 4 && strcasecmp(sp + 1 + wl - 4, ".png") == 0)
        return NULL;
    char *end = sp;
    while (end > args && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end - args < 5 || strncasecmp(end - 4, ".png", 4) != 0)
        return NULL;
    *end = '\0';
    return sp + 1;
}

/* Returns 1 when the connection must be closed. line: len bytes, NUL
 * added after them. */
static int handle_line(pc_control *c, client *k, char *line, size_t len)
{
    /* A NUL byte would end the text early (a line starting with one read
     * as empty and got no answer): commands are text, so the line is
     * answered with ERR, and an HTTP request line or header with one is
     * not HTTP either. */
    if (memchr(line, '\0', len)) {
        static const char msg[] = "ERR the line holds a NUL byte; commands are text lines\n";
        static const char bad[] = "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                  "Content-Length: 31\r\nConnection: close\r\n\r\na NUL byte in the request head\n";
        if (k->http) {
            client_send(k, bad, sizeof bad - 1);
            return 1;
        }
        client_send(k, msg, sizeof msg - 1);
        return 0;
    }
    size_t n = len;
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
        line[--n] = '\0';

    if (k->http) {
        if (n == 0) { /* end of the request headers */
            out_reset(c);
            int head = strcmp(k->http_method, "HEAD") == 0;
            int rc = -1;
            const char *ctype = "text/plain; charset=utf-8";
            if (strcmp(k->http_path, "/metrics") == 0) {
                rc = get_text(c, c->ops.metrics);
                ctype = "text/plain; version=0.0.4; charset=utf-8";
            } else if (strcmp(k->http_path, "/status") == 0 || strcmp(k->http_path, "/") == 0) {
                rc = get_text(c, c->ops.status);
            } else {
                snprintf(c->text, TEXT_MAX, "not found: %s (try /metrics or /status)\n", k->http_path);
                rc = 1;
            }
            if (rc < 0)
                snprintf(c->text, TEXT_MAX, "not available\n");
            size_t tl = strlen(c->text);
            int add_nl = tl && c->text[tl - 1] != '\n';
            const char *st = rc == 0 ? "200 OK" : rc > 0 ? "404 Not Found" : "503 Service Unavailable";
            outf(c, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", st,
                 ctype, tl + (size_t)add_nl);
            if (!head)
                outf(c, "%s%s", c->text, add_nl ? "\n" : "");
            client_send(k, c->out, c->outlen);
            return 1;
        }
        return 0; /* a header line: ignored */
    }

    k->lines++;
    if (k->lines == 1 && (strncmp(line, "GET ", 4) == 0 || strncmp(line, "HEAD ", 5) == 0)) {
        char method[8] = "", path[256] = "";
        if (sscanf(line, "%7s %255s", method, path) == 2) {
            k->http = 1;
            snprintf(k->http_method, sizeof k->http_method, "%s", method);
            char *q = strchr(path, '?');
            if (q)
                *q = '\0';
            snprintf(k->http_path, sizeof k->http_path, "%s", path);
            return 0;
        }
    }

    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return 0;
    char *args = p;
    while (*args && *args != ' ' && *args != '\t')
        args++;
    if (*args)
        *args++ = '\0';
    while (*args == ' ' || *args == '\t')
        args++;
    const char *cmd = p;

    out_reset(c);
    int close_after = 0;
    if (strcasecmp(cmd, "help") == 0) {
        outf(c, "%sOK\n", help_text);
    } else if (strcasecmp(cmd, "status") == 0 || strcasecmp(cmd, "metrics") == 0) {
        int is_status = strcasecmp(cmd, "status") == 0;
        if (get_text(c, is_status ? c->ops.status : c->ops.metrics) != 0)
            err_line(c, c->text[0] ? c->text : "not available");
        else {
            out_text(c, c->text);
            outf(c, "OK\n");
        }
    } else if (strcasecmp(cmd, "algos") == 0) {
        for (int i = 0; i < pc_algo_count(); i++) {
            const pc_algo_desc *d = pc_algo_get((pc_algo_id)i);
            outf(c, "%-18s %d pass%s  %s\n", d->name, d->passes, d->passes > 1 ? "es" : "  ", d->title);
        }
        outf(c, "OK\n");
    } else if (strcasecmp(cmd, "algo") == 0) {
        cmd_algo(c, args);
    } else if (strcasecmp(cmd, "snapshot") == 0 || strcasecmp(cmd, "snapshot-cameras") == 0) {
        int cams = strcasecmp(cmd, "snapshot-cameras") == 0;
        char err[512] = "", full[PATH_MAX];
        const char *view = cams ? NULL : snapshot_view(args);
        if (!*args)
            err_line(c, cams ? "usage: snapshot-cameras DIR (a folder of the snapshot folder)"
                             : "usage: snapshot NAME.png [VIEW] (written into the snapshot folder)");
        else if (cams ? !c->ops.snapshot_cameras : !c->ops.snapshot)
            err_line(c, "not available");
        else if (snapshot_path(c->snapshot_dir, args, cams, full, sizeof full, err, sizeof err) != 0 ||
                 (cams ? c->ops.snapshot_cameras(c->ops.user, full, k->serial, err, sizeof err)
                       : c->ops.snapshot(c->ops.user, full, view, k->serial, err, sizeof err)) != 0)
            err_line(c, err);
        else {
            pc_log(c->lg, PC_LOG_INFO, "control: %s to %s%s%s requested", cams ? "snapshot-cameras" : "snapshot", full,
                   view ? " of the view " : "", view ? view : "");
            k->waiting = 1; /* answered by pc_control_done */
            k->wait_cmd = cams ? "snapshot-cameras" : "snapshot";
            k->wait_ms = now_ms();
        }
    } else if (strcasecmp(cmd, "idr") == 0) {
        cmd_simple(c, c->ops.idr, "idr");
    } else if (strcasecmp(cmd, "reload") == 0) {
        /* answered once the file is read and applied or refused (it
         * answered OK before, also for a file then rejected) */
        char err[512] = "";
        if (*args)
            err_line(c, "usage: reload");
        else if (!c->ops.reload)
            err_line(c, "not available");
        else if (c->ops.reload(c->ops.user, k->serial, err, sizeof err) != 0)
            err_line(c, err);
        else {
            pc_log(c->lg, PC_LOG_INFO, "control: reload requested");
            k->waiting = 1; /* answered by pc_control_done */
            k->wait_cmd = "reload";
            k->wait_ms = now_ms();
        }
    } else if (strcasecmp(cmd, "wb") == 0) {
        int freeze = strcasecmp(args, "freeze") == 0;
        if (*args && !freeze)
            err_line(c, "usage: wb [freeze]");
        else if (get_text(c, freeze ? c->ops.wb_freeze : c->ops.wb) != 0)
            err_line(c, c->text[0] ? c->text : "not available");
        else {
            out_text(c, c->text);
            outf(c, freeze ? "OK frozen\n" : "OK\n");
        }
    } else if (strcasecmp(cmd, "vcam") == 0) {
        if (!c->ops.vcam) {
            err_line(c, "not available");
        } else {
            c->text[0] = '\0';
            c->ops.vcam(c->ops.user, args, c->text, TEXT_MAX);
            c->text[TEXT_MAX - 1] = '\0';
            /* the answer's last line is its OK or ERR: one line each */
            const char *last = strrchr(c->text, '\n');
            last = last ? last + 1 : c->text;
            if (strncmp(last, "OK", 2) && strncmp(last, "ERR ", 4))
                err_line(c, c->text[0] ? c->text : "no answer");
            else if (!strncmp(last, "ERR ", 4))
                err_line(c, last + 4);
            else
                out_text(c, c->text);
        }
    } else if (strcasecmp(cmd, "quit") == 0 || strcasecmp(cmd, "exit") == 0) {
        outf(c, "OK bye\n");
        close_after = 1;
    } else {
        char err[160];
        snprintf(err, sizeof err, "unknown command \"%.64s\"; try help", cmd);
        err_line(c, err);
    }
    if (c->outlen)
        client_send(k, c->out, c->outlen);
    return close_after;
}

/* Answers the complete lines in k's buffer, in order, until one leaves an
 * answer waiting (unsent bytes or an asynchronous command). */
static void process_lines(pc_control *c, client *k)
{
    if (k->discard) { /* the tail of an over-long line, up to its newline */
        char *end = memchr(k->in, '\n', k->inlen);
        if (!end) {
            k->inlen = 0;
            return;
        }
        k->inlen -= (size_t)(end + 1 - k->in);
        memmove(k->in, end + 1, k->inlen);
        k->discard = 0;
    }
    char *start = k->in, *nl;
    while (!k->dead && !k->waiting && !k->plen &&
           (nl = memchr(start, '\n', k->inlen - (size_t)(start - k->in)))) {
        *nl = '\0';
        if (handle_line(c, k, start, (size_t)(nl - start))) {
            if (k->plen)
                k->close_after = 1;
            else
                k->dead = 1;
            start = nl + 1;
            break;
        }
        start = nl + 1;
    }
    size_t rest = k->inlen - (size_t)(start - k->in);
    memmove(k->in, start, rest);
    k->inlen = rest;
    if (k->inlen == sizeof k->in && !k->waiting && !k->plen) {
        /* Answer, then drop the line's rest as it comes and keep serving
         * the client. (Closing at once lost the answer: a Unix socket
         * closed with unread input resets its peer, whose read of the
         * ERR line then fails.) */
        static const char msg[] = "ERR line too long\n";
        k->inlen = 0;
        k->discard = 1;
        client_send(k, msg, sizeof msg - 1);
    }
}

static void on_readable(pc_control *c, client *k)
{
    while (!k->dead && k->inlen < sizeof k->in) {
        ssize_t r = recv(k->fd, k->in + k->inlen, sizeof k->in - k->inlen, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (r <= 0) {
            k->eof = 1; /* answer what came, then close */
            break;
        }
        k->inlen += (size_t)r;
        k->last_ms = now_ms();
        process_lines(c, k);
        if (k->waiting || k->plen)
            break;
    }
    process_lines(c, k);
}

static void on_writable(pc_control *c, client *k)
{
    while (k->poff < k->plen) {
        ssize_t w = send(k->fd, k->pend + k->poff, k->plen - k->poff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            k->poff += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        k->dead = 1;
        return;
    }
    free(k->pend);
    k->pend = NULL;
    k->plen = k->poff = 0;
    k->pend_ms = 0;
    k->last_ms = now_ms();
    if (k->close_after)
        k->dead = 1;
    else
        process_lines(c, k);
}

/* Takes the asynchronous answers posted by pc_control_done. */
static void deliver_done(pc_control *c)
{
    uint64_t v;
    if (read(c->donefd, &v, sizeof v) < 0 && errno != EAGAIN)
        pc_log(c->lg, PC_LOG_WARNING, "control: eventfd read: %s", strerror(errno));
    done_msg got[MAX_CLIENTS];
    pthread_mutex_lock(&c->done_lock);
    int n = c->ndone;
    memcpy(got, c->done, (size_t)n * sizeof *got);
    c->ndone = 0;
    pthread_mutex_unlock(&c->done_lock);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < MAX_CLIENTS; j++) {
            client *k = &c->cl[j];
            if (k->fd < 0 || !k->waiting || k->serial != got[i].token)
                continue;
            out_reset(c);
            if (got[i].rc == 0) {
                char esc[sizeof got[i].msg * 2];
                pc_escape_ctl(esc, sizeof esc, got[i].msg, strlen(got[i].msg));
                outf(c, "OK %s%s%s\n", k->wait_cmd, esc[0] ? " " : "", esc);
            }
            else
                err_line(c, got[i].msg);
            k->waiting = 0;
            k->last_ms = now_ms();
            client_send(k, c->out, c->outlen);
            process_lines(c, k);
        }
}

/* A new connection: a free slot, else the slot of the longest-idle client
 * that is not waiting for an answer. */
static void take_connection(pc_control *c, int fd, int64_t now)
{
    int slot = -1, oldest = -1;
    for (int i = 0; i < MAX_CLIENTS && slot < 0; i++) {
        client *k = &c->cl[i];
        if (k->fd < 0)
            slot = i;
        else if (!k->waiting && (oldest < 0 || k->last_ms < c->cl[oldest].last_ms))
            oldest = i;
    }
    if (slot < 0 && oldest >= 0) {
        say_and_forget(c->cl[oldest].fd, "ERR closed: too many connections (this one was idle the longest)\n");
        drop_client(&c->cl[oldest]);
        slot = oldest;
    }
    if (slot < 0) {
        say_and_forget(fd, "ERR too many connections\n");
        close(fd);
        return;
    }
    client *k = &c->cl[slot];
    memset(k, 0, sizeof *k);
    k->fd = fd;
    k->serial = ++c->next_serial;
    k->last_ms = now;
}

/* Drops the clients past their deadlines; returns the ms to the next one. */
static int expire(pc_control *c, int64_t now)
{
    int64_t next = INT64_MAX;
    for (int i = 0; i < MAX_CLIENTS; i++) {
        client *k = &c->cl[i];
        if (k->fd < 0)
            continue;
        if (k->waiting && now - k->wait_ms >= ASYNC_TIMEOUT_MS) {
            k->waiting = 0;
            out_reset(c);
            err_line(c, "no answer within 15 s (the daemon logs the outcome)");
            client_send(k, c->out, c->outlen);
            process_lines(c, k);
        }
        if (k->plen && now - k->pend_ms >= WRITE_TIMEOUT_MS) {
            pc_log(c->lg, PC_LOG_DEBUG, "control: a client did not read its answer in %d ms; dropped",
                   WRITE_TIMEOUT_MS);
            k->dead = 1;
        } else if (!k->plen && !k->waiting && now - k->last_ms >= IDLE_TIMEOUT_MS) {
            say_and_forget(k->fd, "ERR closed: idle for 60 s\n");
            k->dead = 1;
        } else if (!k->plen && !k->waiting && k->eof) {
            k->dead = 1; /* its input is answered and it sends no more */
        }
        if (k->dead) {
            drop_client(k);
            continue;
        }
        int64_t due = k->waiting ? k->wait_ms + ASYNC_TIMEOUT_MS
                      : k->plen  ? k->pend_ms + WRITE_TIMEOUT_MS
                                 : k->last_ms + IDLE_TIMEOUT_MS;
        if (due < next)
            next = due;
    }
    if (next == INT64_MAX)
        return -1;
    return next - now < 0 ? 0 : next - now > INT_MAX ? INT_MAX : (int)(next - now) + 1;
}

static void *control_thread(void *arg)
{
    pc_control *c = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the main loop */
    struct pollfd pf[3 + MAX_CLIENTS];
    int map[3 + MAX_CLIENTS];
    for (;;) {
        int timeout = expire(c, now_ms());
        int n = 0;
        pf[n++] = (struct pollfd){c->wakefd, POLLIN, 0};
        pf[n++] = (struct pollfd){c->lfd, POLLIN, 0};
        pf[n++] = (struct pollfd){c->donefd, POLLIN, 0};
        for (int i = 0; i < MAX_CLIENTS; i++) {
            client *k = &c->cl[i];
            if (k->fd < 0)
                continue;
            /* unsent answer: wait to write; async command: wait for it
             * (hang-ups still show); else read */
            short ev = k->plen ? POLLOUT : (k->waiting || k->eof) ? 0 : POLLIN;
            map[n] = i;
            pf[n++] = (struct pollfd){k->fd, ev, 0};
        }
        int r = poll(pf, (nfds_t)n, timeout);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            pc_log(c->lg, PC_LOG_ERR, "control: poll: %s", strerror(errno));
            break;
        }
        if (pf[0].revents)
            break;
        int64_t now = now_ms();
        if (pf[1].revents & POLLIN)
            for (int i = 0; i < ACCEPT_BURST; i++) {
                int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    break;
                take_connection(c, fd, now);
            }
        if (pf[2].revents & POLLIN)
            deliver_done(c);
        for (int i = 3; i < n; i++) {
            client *k = &c->cl[map[i]];
            if (k->fd != pf[i].fd)
                continue; /* replaced by a new connection in this round */
            if (pf[i].revents & POLLOUT)
                on_writable(c, k);
            else if (pf[i].revents & POLLIN)
                on_readable(c, k);
            else if (pf[i].revents & (POLLHUP | POLLERR)) {
                if (k->waiting && !(pf[i].revents & POLLERR))
                    k->eof = 1; /* keep the slot until the answer comes */
                else
                    k->dead = 1;
            }
            if (k->dead)
                drop_client(k);
        }
    }
    return NULL;
}

void pc_control_done(pc_control *c, unsigned long long token, int rc, const char *msg)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->done_lock);
    if (c->ndone < MAX_CLIENTS) {
        done_msg *d = &c->done[c->ndone++];
        d->token = token;
        d->rc = rc;
        snprintf(d->msg, sizeof d->msg, "%s", msg ? msg : "");
    }
    pthread_mutex_unlock(&c->done_lock);
    uint64_t one = 1;
    if (write(c->donefd, &one, sizeof one) < 0)
        pc_log(c->lg, PC_LOG_WARNING, "control: eventfd write: %s", strerror(errno));
}

/* Refuses a path in use by a live server; removes a stale socket. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : (snprintf(err, errlen, "control socket %s: %s", path, strerror(errno)), -1);
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "control socket %s: exists and is not a socket; not touching it", path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "control socket: socket(): %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    close(fd);
    if (rc == 0) {
        snprintf(err, errlen, "control socket %s: another process is serving it (another panocap running?)", path);
        return -1;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        snprintf(err, errlen, "control socket %s: cannot remove the stale socket: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int pc_control_start(pc_control **out, const char *path, const pc_control_ops *ops, const pc_logger *lg,
                     char *err, size_t errlen)
{
    *out = NULL;
    if (!path || !path[0] || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        snprintf(err, errlen, "control socket path \"%s\": empty or longer than %zu characters", path ? path : "",
                 sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
        return -1;
    }
    pc_control *c = calloc(1, sizeof *c);
    if (!c || !(c->text = malloc(TEXT_MAX)) || !(c->out = malloc(OUT_MAX))) {
        snprintf(err, errlen, "control: out of memory");
        if (c) {
            free(c->text);
            free(c);
        }
        return -1;
    }
    c->lfd = c->wakefd = c->donefd = -1;
    pthread_mutex_init(&c->done_lock, NULL);
    for (int i = 0; i < MAX_CLIENTS; i++)
        c->cl[i].fd = -1;
    if (ops)
        c->ops = *ops;
    if (ops && ops->snapshot_dir && ops->snapshot_dir[0] && !(c->snapshot_dir = strdup(ops->snapshot_dir))) {
        snprintf(err, errlen, "control: out of memory");
        goto fail;
    }
    c->lg = lg;
    snprintf(c->path, sizeof c->path, "%s", path);

    if (clear_stale(path, err, errlen) != 0)
        goto fail;
    c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->lfd < 0) {
        snprintf(err, errlen, "control socket: socket(): %s", strerror(errno));
        goto fail;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (bind(c->lfd, (struct sockaddr *)&a, sizeof a) != 0) {
        snprintf(err, errlen, "control socket %s: bind: %s", path, strerror(errno));
        goto fail;
    }
    if (chmod(path, 0660) != 0)
        pc_log(lg, PC_LOG_WARNING, "control socket %s: chmod 0660: %s", path, strerror(errno));
    if (listen(c->lfd, BACKLOG) != 0) {
        snprintf(err, errlen, "control socket %s: listen: %s", path, strerror(errno));
        unlink(path);
        goto fail;
    }
    c->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    c->donefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->wakefd < 0 || c->donefd < 0) {
        snprintf(err, errlen, "control: eventfd: %s", strerror(errno));
        unlink(path);
        goto fail;
    }
    int rc = pthread_create(&c->thread, NULL, control_thread, c);
    if (rc != 0) {
        snprintf(err, errlen, "control: pthread_create: %s", strerror(rc));
        unlink(path);
        goto fail;
    }
    c->started = 1;
    *out = c;
    return 0;
fail:
    if (c->lfd >= 0)
        close(c->lfd);
    if (c->wakefd >= 0)
        close(c->wakefd);
    if (c->donefd >= 0)
        close(c->donefd);
    pthread_mutex_destroy(&c->done_lock);
    free(c->snapshot_dir);
    free(c->text);
    free(c->out);
    free(c);
    return -1;
}

void pc_control_stop(pc_control *c)
{
    if (!c)
        return;
    if (c->started) {
        uint64_t one = 1;
        if (write(c->wakefd, &one, sizeof one) < 0)
            pc_log(c->lg, PC_LOG_WARNING, "control: wake-up: %s", strerror(errno));
        pthread_join(c->thread, NULL);
    }
    for (int i = 0; i < MAX_CLIENTS; i++)
        drop_client(&c->cl[i]);
    close(c->lfd);
    close(c->wakefd);
    close(c->donefd);
    unlink(c->path);
    pthread_mutex_destroy(&c->done_lock);
    free(c->snapshot_dir);
    free(c->text);
    free(c->out);
    free(c);
}
