/* control.c - the control socket server (see control.h): one thread, poll()
 * over the listening socket, a wake-up eventfd and up to 16 clients;
 * non-blocking reads, writes bounded by a 2 s deadline so that a stuck
 * client cannot hold the thread. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
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

#define MAX_CLIENTS 16
#define IN_MAX 1024
#define TEXT_MAX (256 * 1024)
#define OUT_MAX (TEXT_MAX + 4096)
#define WRITE_TIMEOUT_MS 2000

typedef struct client {
    int fd;       /* -1 = free */
    char in[IN_MAX];
    size_t inlen;
    int lines;    /* lines received on this connection */
    int http;     /* 1: an HTTP request, reading headers */
    char http_method[8];
    char http_path[256];
} client;

struct pc_control {
    int lfd, wakefd;
    pthread_t thread;
    int started;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    pc_control_ops ops;
    const pc_logger *lg;
    client cl[MAX_CLIENTS];
    char *text; /* callback output */
    char *out;  /* response being built */
    size_t outlen;
};

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

static int write_all(int fd, const char *buf, size_t len)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (len) {
        ssize_t w = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            buf += w;
            len -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (el >= WRITE_TIMEOUT_MS)
            return -1;
        struct pollfd p = {fd, POLLOUT, 0};
        poll(&p, 1, (int)(WRITE_TIMEOUT_MS - el));
    }
    return 0;
}

static void drop_client(client *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
    k->inlen = 0;
}

static const char help_text[] =
    "status                 the status line (fps, drops, p99 latency per stage)\n"
    "metrics                Prometheus metrics\n"
    "algos                  the algorithm table\n"
    "algo NAME [VARIANT]    switch the demosaicing algorithm live (VARIANT: auto, 2px, 4px)\n"
    "snapshot PATH          write a PNG of the current panorama to an absolute PATH\n"
    "idr                    force an IDR frame\n"
    "reload                 re-read the configuration file (as SIGHUP)\n"
    "wb [freeze]            white-balance gains as config lines; freeze fixes automatic ones\n"
    "help                   this list\n"
    "quit                   close the connection\n"
    "HTTP: GET /metrics, GET /status (curl --unix-socket SOCKET http://localhost/metrics)\n";

static void err_line(pc_control *c, const char *msg)
{
    /* One line, whatever the callback wrote. */
    char one[512];
    size_t i = 0;
    for (; msg[i] && i + 1 < sizeof one; i++)
        one[i] = (msg[i] == '\n' || msg[i] == '\r') ? ' ' : msg[i];
    one[i] = '\0';
    outf(c, "ERR %s\n", one[0] ? one : "failed");
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

/* Returns 1 when the connection must be closed. */
static int handle_line(pc_control *c, client *k, char *line)
{
    size_t n = strlen(line);
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
            write_all(k->fd, c->out, c->outlen);
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
    } else if (strcasecmp(cmd, "snapshot") == 0) {
        char err[512] = "";
        if (!*args)
            err_line(c, "usage: snapshot PATH");
        else if (args[0] != '/')
            err_line(c, "snapshot needs an absolute path (the daemon's working directory is not yours)");
        else if (!c->ops.snapshot)
            err_line(c, "not available");
        else if (c->ops.snapshot(c->ops.user, args, err, sizeof err) != 0)
            err_line(c, err);
        else {
            pc_log(c->lg, PC_LOG_INFO, "control: snapshot to %s requested", args);
            outf(c, "OK snapshot %s\n", args);
        }
    } else if (strcasecmp(cmd, "idr") == 0) {
        cmd_simple(c, c->ops.idr, "idr");
    } else if (strcasecmp(cmd, "reload") == 0) {
        cmd_simple(c, c->ops.reload, "reload");
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
    } else if (strcasecmp(cmd, "quit") == 0 || strcasecmp(cmd, "exit") == 0) {
        outf(c, "OK bye\n");
        close_after = 1;
    } else {
        char err[160];
        snprintf(err, sizeof err, "unknown command \"%.64s\"; try help", cmd);
        err_line(c, err);
    }
    if (write_all(k->fd, c->out, c->outlen) != 0)
        return 1;
    return close_after;
}

static void on_readable(pc_control *c, client *k)
{
    for (;;) {
        ssize_t r = recv(k->fd, k->in + k->inlen, sizeof k->in - k->inlen, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (r <= 0) {
            drop_client(k);
            return;
        }
        k->inlen += (size_t)r;
        char *start = k->in, *nl;
        while ((nl = memchr(start, '\n', k->inlen - (size_t)(start - k->in)))) {
            *nl = '\0';
            if (handle_line(c, k, start)) {
                drop_client(k);
                return;
            }
            start = nl + 1;
        }
        size_t rest = k->inlen - (size_t)(start - k->in);
        memmove(k->in, start, rest);
        k->inlen = rest;
        if (k->inlen == sizeof k->in) {
            static const char msg[] = "ERR line too long\n";
            write_all(k->fd, msg, sizeof msg - 1);
            drop_client(k);
            return;
        }
    }
}

static void *control_thread(void *arg)
{
    pc_control *c = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the main loop */
    struct pollfd pf[2 + MAX_CLIENTS];
    int map[2 + MAX_CLIENTS];
    for (;;) {
        int n = 0;
        pf[n++] = (struct pollfd){c->wakefd, POLLIN, 0};
        pf[n++] = (struct pollfd){c->lfd, POLLIN, 0};
        for (int i = 0; i < MAX_CLIENTS; i++)
            if (c->cl[i].fd >= 0) {
                map[n] = i;
                pf[n++] = (struct pollfd){c->cl[i].fd, POLLIN, 0};
            }
        int r = poll(pf, (nfds_t)n, -1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            pc_log(c->lg, PC_LOG_ERR, "control: poll: %s", strerror(errno));
            break;
        }
        if (pf[0].revents)
            break;
        if (pf[1].revents & POLLIN) {
            int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0) {
                int slot = -1;
                for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
                    if (c->cl[i].fd < 0)
                        slot = i;
                if (slot < 0) {
                    static const char msg[] = "ERR too many connections\n";
                    write_all(fd, msg, sizeof msg - 1);
                    close(fd);
                } else {
                    memset(&c->cl[slot], 0, sizeof c->cl[slot]);
                    c->cl[slot].fd = fd;
                }
            }
        }
        for (int i = 2; i < n; i++)
            if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
                on_readable(c, &c->cl[map[i]]);
    }
    return NULL;
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
    c->lfd = c->wakefd = -1;
    for (int i = 0; i < MAX_CLIENTS; i++)
        c->cl[i].fd = -1;
    if (ops)
        c->ops = *ops;
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
    if (listen(c->lfd, 8) != 0) {
        snprintf(err, errlen, "control socket %s: listen: %s", path, strerror(errno));
        unlink(path);
        goto fail;
    }
    c->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->wakefd < 0) {
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
    unlink(c->path);
    free(c->text);
    free(c->out);
    free(c);
}
