/* http_front.c - the HTTP server's front door (http_int.h): its listening
 * socket, and everything a connection goes through before libmicrohttpd
 * serves it (http.h lists the limits):
 *
 *   - connections: PC_HTTP_CONN_MAX in all, PC_HTTP_CONN_PER_ADDR from one
 *     client address, counted from accept() until libmicrohttpd closes
 *     them. A connection over a limit makes room by closing the oldest
 *     connection of that address (in all: of the address holding most)
 *     that is still sending its request, with a 503; when every one of
 *     them is being answered, the new one gets the 503 (Retry-After: 1).
 *   - the request deadline: its line, its headers and its body must all
 *     be in within PC_HTTP_REQUEST_S of the accept, however slowly the
 *     bytes trickle: else 408 and closed. The kernel accepts a connection
 *     once its first bytes came (TCP_DEFER_ACCEPT), or, when none come,
 *     after the SYN-ACK retransmissions covering PC_HTTP_REQUEST_S (7 s
 *     on Linux); until then it holds no slot.
 *   - framing a proxy in front could read otherwise than libmicrohttpd
 *     does: two Content-Lengths, Content-Length beside Transfer-Encoding,
 *     a folded or malformed header line, a lone CR or a control byte: 400;
 *     a Transfer-Encoding other than chunked: 501; a head past
 *     PC_HTTP_HEAD_MAX or PC_HTTP_HEADER_LINES: 431; a body past PC_HTTP_BODY_MAX (Content-Length,
 *     past 2^64 too, or chunks as they come): 413 at once.
 *   - a path holding an encoded NUL (%00, which libmicrohttpd decodes and
 *     so cuts the path): 404.
 *   - in the web role, Host must name this server: 421 otherwise, so that
 *     a page whose name was rebound to this address reads nothing.
 *
 * One thread polls the listening socket and the connections whose
 * requests are still coming. It only peeks at a request (MSG_PEEK; the
 * socket's SO_RCVLOWAT wakes it when more than it saw has come), so once
 * the whole request is in the socket's buffer and passes, libmicrohttpd
 * reads it from the start. Every answer says Connection: close, so each
 * connection carries one request and comes through here. What this file
 * refuses it answers itself (a status line, a short reason: JSON under
 * /api/, else text) and closes gently: it stops writing, then reads and
 * drops what still comes for LINGER_NS or LINGER_BYTES, so that the client
 * reads the answer rather than a reset. The request's own checks are
 * http_request.c's. */
#include "http_int.h"

#include "clock.h"
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CLOSING_MAX 32                                            /* answered connections being drained */
#define ADDR_SLOTS (2 * PC_HTTP_CONN_MAX)                         /* client addresses with connections */
#define PEEK_MAX (PC_HTTP_HEAD_MAX + 4 * PC_HTTP_BODY_MAX + 1024) /* a head, a body and its chunks' framing */
#define LINGER_NS (2 * 1000000000LL)
#define LINGER_BYTES (1024 * 1024)
#define QUIET_NS (20 * 1000000LL) /* after a peek that found nothing new */
#define LOG_EVERY_NS (10 * 1000000000LL)
#define ACCEPT_BURST 64

typedef struct fconn {
    int fd;                /* -1: a free slot */
    unsigned char key[16]; /* the client address (IPv4 as ::ffff:a.b.c.d) */
    struct sockaddr_storage sa;
    socklen_t salen;
    int64_t deadline_ns;    /* reading: the request's deadline; closing: the end of the drain */
    int64_t quiet_until_ns; /* reading: not polled for input before this */
    size_t seen;            /* reading: bytes peeked so far */
    size_t drained;         /* closing: bytes read and dropped */
    uint64_t order;         /* admission order: the oldest goes first */
    int sent_continue;      /* "100 Continue" sent */
    int lowat;              /* SO_RCVLOWAT was raised */
} fconn;

typedef struct addr_count {
    unsigned char key[16];
    int pending; /* connections here, their requests still coming */
    int served;  /* libmicrohttpd's */
} addr_count;

enum { NOTE_LIMIT, NOTE_TIMEOUT, NOTE_REFUSED, NOTE_HOST, NOTE_KINDS };

struct http_front {
    http_front_config cfg;
    char key[64], listen[160];
    http_host_rule hosts[PC_HTTP_MAX_ALLOWED_HOSTS];
    int nhosts;
    int lfd;
    int wake[2]; /* a byte on wake[1] ends the thread */
    pthread_t thread;
    int running;
    uint64_t next_order;
    int64_t accept_quiet_until_ns; /* out of file descriptors: accept later */
    pthread_mutex_t lock;          /* the counts (libmicrohttpd's threads change `served`) */
    addr_count addrs[ADDR_SLOTS];
    int total;                    /* pending + served, every address */
    fconn conn[PC_HTTP_CONN_MAX]; /* the thread's: requests coming */
    fconn closing[CLOSING_MAX];   /* the thread's: answered, draining */
    int64_t note_last_ns[NOTE_KINDS];
    unsigned note_skipped[NOTE_KINDS];
    char buf[PEEK_MAX]; /* the thread's */
};

/* ------------------------------------------------------------ addresses */

/* Under f->lock. make: a free slot when the address has none. */
static addr_count *addr_find(http_front *f, const unsigned char key[16], int make)
{
    addr_count *free_slot = NULL;
    for (int i = 0; i < ADDR_SLOTS; i++) {
        addr_count *a = &f->addrs[i];
        if (a->pending + a->served > 0 && !memcmp(a->key, key, 16))
            return a;
        if (!free_slot && a->pending + a->served == 0)
            free_slot = a;
    }
    if (make && free_slot) {
        memcpy(free_slot->key, key, 16);
        free_slot->pending = free_slot->served = 0;
        return free_slot;
    }
    return NULL;
}

void http_front_started(http_front *f, const struct sockaddr *sa)
{
    unsigned char key[16];
    http_addr_key(sa, key);
    pthread_mutex_lock(&f->lock);
    addr_count *a = addr_find(f, key, 1);
    if (a) {
        a->served++;
        f->total++;
    }
    pthread_mutex_unlock(&f->lock);
}

void http_front_closed(http_front *f, const struct sockaddr *sa)
{
    unsigned char key[16];
    http_addr_key(sa, key);
    pthread_mutex_lock(&f->lock);
    addr_count *a = addr_find(f, key, 0);
    if (a && a->served > 0) {
        a->served--;
        f->total--;
    }
    pthread_mutex_unlock(&f->lock);
}

/* ------------------------------------------------------------ messages */

/* The log, at most once per LOG_EVERY_NS and kind (an attack must not
 * flood it); the ones left out are counted in the next. */
static void note(http_front *f, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(http_front *f, int kind, const char *fmt, ...)
{
    int64_t now = pc_now_ns();
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (f->note_last_ns[kind] && now - f->note_last_ns[kind] < LOG_EVERY_NS) {
        f->note_skipped[kind]++;
        pc_log(f->cfg.lg, PC_LOG_DEBUG, "http: %s", msg);
        return;
    }
    if (f->note_skipped[kind])
        pc_log(f->cfg.lg, PC_LOG_INFO, "http: %s (and %u more like it in the last %.0f s)", msg, f->note_skipped[kind],
               (now - f->note_last_ns[kind]) / 1e9);
    else
        pc_log(f->cfg.lg, PC_LOG_INFO, "http: %s", msg);
    f->note_last_ns[kind] = now;
    f->note_skipped[kind] = 0;
}

static const char *reason_phrase(unsigned code)
{
    switch (code) {
    case 100: return "Continue";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 421: return "Misdirected Request";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    }
    return "Error";
}

/* ------------------------------------------------------------ connections */

static void set_lowat(int fd, int bytes)
{
    /* best effort: without it the thread peeks again every QUIET_NS */
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes);
}

/* A connection of the reading list is done with here: counted out. */
static void pending_release(http_front *f, fconn *c)
{
    pthread_mutex_lock(&f->lock);
    addr_count *a = addr_find(f, c->key, 0);
    if (a && a->pending > 0) {
        a->pending--;
        f->total--;
    }
    pthread_mutex_unlock(&f->lock);
    c->fd = -1;
}

/* Answered: stop writing, drain what still comes for a while. fd is
 * closed at once when no drain slot is free. */
static void start_closing(http_front *f, int fd)
{
    shutdown(fd, SHUT_WR);
    set_lowat(fd, 1);
    for (int i = 0; i < CLOSING_MAX; i++)
        if (f->closing[i].fd < 0) {
            f->closing[i] = (fconn){.fd = fd, .deadline_ns = pc_now_ns() + LINGER_NS};
            return;
        }
    close(fd);
}

/* Writes a whole answer of its own on fd (json: {"error": msg}, else the
 * text), Connection: close; head: no body. The socket's buffer is empty
 * (nothing was written before but a "100 Continue"), so it fits. */
static void write_answer(int fd, unsigned code, int json, int head, int retry_after, const char *msg)
{
    char body[1200], out[2048], date[64];
    if (json) {
        pc_json j;
        pc_json_init(&j, body, sizeof body);
        pc_json_object(&j, NULL);
        pc_json_str(&j, "error", msg);
        pc_json_object_end(&j);
        if (pc_json_done(&j))
            snprintf(body, sizeof body, "{\"error\": \"refused\"}");
    } else {
        snprintf(body, sizeof body, "%s\n", msg);
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    char ra[40] = "";
    if (retry_after > 0)
        snprintf(ra, sizeof ra, "Retry-After: %d\r\n", retry_after);
    size_t blen = strlen(body);
    int n = snprintf(out, sizeof out,
                     "HTTP/1.1 %u %s\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n%sConnection: close\r\n\r\n%s",
                     code, reason_phrase(code), date, json ? HTTP_JSON : "text/plain; charset=utf-8", blen, ra,
                     head ? "" : body);
    if (n > 0)
        (void)send(fd, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Answers a connection of the reading list and moves it to the drain. */
static void refuse(http_front *f, fconn *c, unsigned code, int json, int head, int retry_after, const char *msg)
{
    int fd = c->fd;
    write_answer(fd, code, json, head, retry_after, msg);
    pending_release(f, c);
    start_closing(f, fd);
}

/* ------------------------------------------------------------ the request */

/* ------------------------------------------------------------ reading */

/* A look at what has come on a connection of the reading list: hand it
 * over, refuse it, or wait for more (ended: the client will send no more). */
static void examine(http_front *f, fconn *c, int64_t now, int ended)
{
    ssize_t n = recv(c->fd, f->buf, sizeof f->buf, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) { /* closed (or broken) before its request was in */
        int fd = c->fd;
        pending_release(f, c);
        close(fd);
        return;
    }
    http_req r;
    int st = http_req_head(f->buf, (size_t)n, &r);
    if (st == HTTP_REQ_DONE && f->cfg.web && r.hosts && !http_host_ok(f->hosts, f->nhosts, c->fd, r.host, r.host_len)) {
        char txt[100], who[64];
        http_shown(r.host, r.host_len, txt, sizeof txt);
        note(f, NOTE_HOST, "refused a request for Host \"%s\" from %s (not a name of this server)", txt,
             http_addr_text(c->key, who, sizeof who));
        http_req_refuse(&r, 421,
                        "Host \"%s\" is not a name of this server: it answers to its own addresses, localhost and "
                        "the machine's name (DNS rebinding is refused); a reverse proxy's name goes in "
                        "daemon.http_allowed_hosts",
                        txt);
        st = HTTP_REQ_REFUSED;
    }
    if (st == HTTP_REQ_DONE && r.tes)
        st = http_req_chunked(f->buf + r.head_len, (size_t)n - r.head_len, &r);
    else if (st == HTTP_REQ_DONE && r.cls && (size_t)n - r.head_len < strtoull(r.cl, NULL, 10))
        st = HTTP_REQ_MORE;
    if (st == HTTP_REQ_MORE && (size_t)n >= sizeof f->buf)
        st = http_req_refuse(&r, 413, "the body is longer than %d bytes (with its chunks' framing)", PC_HTTP_BODY_MAX);

    if (st == HTTP_REQ_REFUSED) {
        if (r.code != 421) {
            char who[64];
            note(f, NOTE_REFUSED, "%u to %s: %s", r.code, http_addr_text(c->key, who, sizeof who), r.why);
        }
        refuse(f, c, r.code, r.api && f->cfg.web, r.head, 0, r.why);
        return;
    }
    if (st == HTTP_REQ_MORE && ended) { /* half a request, and the client stopped sending */
        int fd = c->fd;
        pending_release(f, c);
        close(fd);
        return;
    }
    if (st == HTTP_REQ_MORE) {
        if (r.head_len && r.http11 && r.expect_continue && !c->sent_continue) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            (void)send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            c->sent_continue = 1;
        }
        if ((size_t)n == c->seen) /* nothing new: SO_RCVLOWAT did not hold */
            c->quiet_until_ns = now + QUIET_NS;
        c->seen = (size_t)n;
        set_lowat(c->fd, (int)n + 1);
        c->lowat = 1;
        return;
    }
    /* the whole request is in and passed: libmicrohttpd's from here */
    int fd = c->fd;
    struct sockaddr_storage sa = c->sa;
    socklen_t salen = c->salen;
    if (c->lowat)
        set_lowat(fd, 1);
    pending_release(f, c);
    if (f->cfg.hand_over(f->cfg.user, fd, (struct sockaddr *)&sa, salen)) {
        char who[64];
        unsigned char key[16];
        http_addr_key((struct sockaddr *)&sa, key);
        note(f, NOTE_LIMIT, "libmicrohttpd could not take a connection from %s", http_addr_text(key, who, sizeof who));
    }
}

/* c's request did not come in time: 408, closed. */
static void expire(http_front *f, fconn *c)
{
    char who[64], msg[200];
    note(f, NOTE_TIMEOUT, "closed a connection from %s: its request was not in within %d s (%zu bytes came)",
         http_addr_text(c->key, who, sizeof who), PC_HTTP_REQUEST_S, c->seen);
    snprintf(msg, sizeof msg,
             "the request did not come within %d s of the connection (its line, headers and "
             "body); send it at once",
             PC_HTTP_REQUEST_S);
    refuse(f, c, 408, 0, 0, 0, msg);
}

/* Makes room for a new connection from key: the oldest connection still
 * sending its request of that address (per address) or of the address
 * holding most connections (in all) is closed with a 503. 0: room made or
 * none needed; -1: none to close (the new one must go). */
static int make_room(http_front *f, const unsigned char key[16])
{
    pthread_mutex_lock(&f->lock);
    addr_count *a = addr_find(f, key, 0);
    int per_addr = a && a->pending + a->served >= PC_HTTP_CONN_PER_ADDR, all = f->total >= PC_HTTP_CONN_MAX;
    unsigned char victim_key[16];
    int have = 0;
    if (per_addr) {
        memcpy(victim_key, key, 16);
        have = a->pending > 0;
    } else if (all) {
        addr_count *most = NULL;
        for (int i = 0; i < ADDR_SLOTS; i++) {
            addr_count *x = &f->addrs[i];
            if (x->pending > 0 && (!most || x->pending + x->served > most->pending + most->served))
                most = x;
        }
        if (most) {
            memcpy(victim_key, most->key, 16);
            have = 1;
        }
    }
    pthread_mutex_unlock(&f->lock);
    if (!per_addr && !all)
        return 0;
    if (!have)
        return -1;
    fconn *old = NULL;
    for (int i = 0; i < PC_HTTP_CONN_MAX; i++) {
        fconn *c = &f->conn[i];
        if (c->fd >= 0 && !memcmp(c->key, victim_key, 16) && (!old || c->order < old->order))
            old = c;
    }
    if (!old)
        return -1;
    char who[64], msg[300];
    double age = (pc_now_ns() - (old->deadline_ns - (int64_t)PC_HTTP_REQUEST_S * 1000000000)) / 1e9;
    if (per_addr)
        note(f, NOTE_LIMIT,
             "%d connections from %s: closed its oldest one still sending its request (%zu bytes in "
             "%.1f s) to make room",
             PC_HTTP_CONN_PER_ADDR, http_addr_text(old->key, who, sizeof who), old->seen, age);
    else
        note(f, NOTE_LIMIT,
             "%d connections in all: closed the oldest one still sending its request of %s, the "
             "address holding most (%zu bytes in %.1f s)",
             PC_HTTP_CONN_MAX, http_addr_text(old->key, who, sizeof who), old->seen, age);
    snprintf(msg, sizeof msg,
             "busy: too many connections (at most %d from one address, %d in all): this one, "
             "the oldest still sending its request, is closed to make room; send requests at once",
             PC_HTTP_CONN_PER_ADDR, PC_HTTP_CONN_MAX);
    refuse(f, old, 503, 0, 0, 1, msg);
    return 0;
}

static void accept_some(http_front *f, int64_t now)
{
    for (int k = 0; k < ACCEPT_BURST; k++) {
        struct sockaddr_storage sa;
        socklen_t salen = sizeof sa;
        int fd = accept4(f->lfd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                note(f, NOTE_LIMIT, "cannot accept a connection: %s", strerror(errno));
                f->accept_quiet_until_ns = now + 100 * 1000000LL;
            }
            return;
        }
        unsigned char key[16];
        http_addr_key((struct sockaddr *)&sa, key);
        if (make_room(f, key)) {
            char who[64], msg[300];
            note(f, NOTE_LIMIT,
                 "refused a connection from %s: %d connections from it, %d in all, every one being "
                 "answered",
                 http_addr_text(key, who, sizeof who), PC_HTTP_CONN_PER_ADDR, PC_HTTP_CONN_MAX);
            snprintf(msg, sizeof msg,
                     "busy: too many connections (at most %d from one address, %d in all), all "
                     "being answered; try again in a second",
                     PC_HTTP_CONN_PER_ADDR, PC_HTTP_CONN_MAX);
            write_answer(fd, 503, 0, 0, 1, msg);
            start_closing(f, fd);
            continue;
        }
        fconn *c = NULL;
        for (int i = 0; i < PC_HTTP_CONN_MAX && !c; i++)
            if (f->conn[i].fd < 0)
                c = &f->conn[i];
        pthread_mutex_lock(&f->lock);
        addr_count *a = c ? addr_find(f, key, 1) : NULL;
        if (a) {
            a->pending++;
            f->total++;
        }
        pthread_mutex_unlock(&f->lock);
        if (!a) { /* cannot happen: the counts bound both tables */
            write_answer(fd, 503, 0, 0, 1, "busy: no room for another connection; try again in a second");
            start_closing(f, fd);
            continue;
        }
        *c = (fconn){.fd = fd,
                     .sa = sa,
                     .salen = salen,
                     .order = ++f->next_order,
                     .deadline_ns = now + (int64_t)PC_HTTP_REQUEST_S * 1000000000};
        memcpy(c->key, key, 16);
        examine(f, c, now, 0); /* the request has often come with the connection */
    }
}

/* An answered connection: reads and drops what comes; closed at its end,
 * past LINGER_BYTES or at its deadline. */
static void drain(http_front *f, fconn *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, f->buf, sizeof f->buf, MSG_DONTWAIT);
        if (n > 0 && (c->drained += (size_t)n) < LINGER_BYTES)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        close(c->fd);
        c->fd = -1;
        return;
    }
}

static void *front_main(void *arg)
{
    http_front *f = arg;
    struct pollfd pf[2 + PC_HTTP_CONN_MAX + CLOSING_MAX];
    fconn *who[2 + PC_HTTP_CONN_MAX + CLOSING_MAX];
    char closing[2 + PC_HTTP_CONN_MAX + CLOSING_MAX];
    for (;;) {
        int64_t now = pc_now_ns(), next = now + 1000000000;
        int n = 0;
        pf[n++] = (struct pollfd){.fd = f->wake[0], .events = POLLIN};
        pf[n] = (struct pollfd){.fd = f->lfd, .events = now >= f->accept_quiet_until_ns ? POLLIN : 0};
        who[n++] = NULL;
        if (f->accept_quiet_until_ns > now && f->accept_quiet_until_ns < next)
            next = f->accept_quiet_until_ns;
        for (int i = 0; i < PC_HTTP_CONN_MAX; i++) {
            fconn *c = &f->conn[i];
            if (c->fd < 0)
                continue;
            int quiet = c->quiet_until_ns > now;
            pf[n] = (struct pollfd){.fd = c->fd, .events = quiet ? POLLRDHUP : POLLIN | POLLRDHUP};
            closing[n] = 0;
            who[n++] = c;
            if (c->deadline_ns < next)
                next = c->deadline_ns;
            if (quiet && c->quiet_until_ns < next)
                next = c->quiet_until_ns;
        }
        for (int i = 0; i < CLOSING_MAX; i++) {
            fconn *c = &f->closing[i];
            if (c->fd < 0)
                continue;
            pf[n] = (struct pollfd){.fd = c->fd, .events = POLLIN};
            closing[n] = 1;
            who[n++] = c;
            if (c->deadline_ns < next)
                next = c->deadline_ns;
        }
        int ms = next > now ? (int)((next - now) / 1000000) + 1 : 0;
        if (poll(pf, (nfds_t)n, ms) < 0 && errno != EINTR) {
            pc_log(f->cfg.lg, PC_LOG_ERR, "http: poll: %s", strerror(errno));
            sleep(1);
            continue;
        }
        if (pf[0].revents)
            break;
        now = pc_now_ns();
        for (int i = 2; i < n; i++) {
            fconn *c = who[i];
            if (c->fd < 0 || c->fd != pf[i].fd)
                continue;
            if (closing[i]) {
                if (pf[i].revents)
                    drain(f, c);
                if (c->fd >= 0 && now >= c->deadline_ns) {
                    close(c->fd);
                    c->fd = -1;
                }
                continue;
            }
            if (pf[i].revents || (c->quiet_until_ns && now >= c->quiet_until_ns)) {
                c->quiet_until_ns = 0;
                examine(f, c, now, pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR));
            }
            if (c->fd >= 0 && now >= c->deadline_ns)
                expire(f, c);
        }
        if (pf[1].revents)
            accept_some(f, now);
    }
    return NULL;
}

/* ------------------------------------------------------------ start, stop */

int http_front_open(http_front **out, const http_front_config *cfg, char *err, size_t n)
{
    *out = NULL;
    http_front *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, n, "http: out of memory");
        return -1;
    }
    f->cfg = *cfg;
    snprintf(f->key, sizeof f->key, "%s", cfg->key ? cfg->key : "listen");
    snprintf(f->listen, sizeof f->listen, "%s", cfg->listen ? cfg->listen : "");
    f->cfg.key = f->key;
    f->cfg.listen = f->listen;
    for (int i = 0; i < cfg->n_allowed_hosts && f->nhosts < PC_HTTP_MAX_ALLOWED_HOSTS; i++) {
        char why[200];
        if (http_host_rule_make(&f->hosts[f->nhosts], cfg->allowed_hosts[i], why, sizeof why))
            pc_log(cfg->lg, PC_LOG_WARNING, "http: an allowed host is ignored: %s", why);
        else
            f->nhosts++;
    }
    for (int i = 0; i < PC_HTTP_CONN_MAX; i++)
        f->conn[i].fd = -1;
    for (int i = 0; i < CLOSING_MAX; i++)
        f->closing[i].fd = -1;
    f->wake[0] = f->wake[1] = -1;
    pthread_mutex_init(&f->lock, NULL);
    const int one = 1;
    f->lfd = socket(cfg->addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int e = errno;
    if (f->lfd >= 0) {
        setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (cfg->addr->sa_family == AF_INET6) /* [::] is IPv6 only, as libmicrohttpd did */
            setsockopt(f->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        /* a connection is accepted once its first bytes are in (so its
         * request is usually whole at accept); one that sends nothing for
         * the request's time is accepted then, and times out */
        const int defer = PC_HTTP_REQUEST_S;
        setsockopt(f->lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
        if (bind(f->lfd, cfg->addr, cfg->addrlen) != 0 || listen(f->lfd, 128) != 0)
            e = errno;
        else
            e = 0;
    }
    if (f->lfd < 0 || e) {
        snprintf(err, n, "%s %s: cannot listen: %s%s", f->key, f->listen, strerror(e),
                 e == EADDRINUSE      ? " (another program has the port)"
                 : e == EACCES        ? " (a port below 1024 needs the privilege)"
                 : e == EADDRNOTAVAIL ? " (the address is not one of this host's)"
                                      : "");
        http_front_free(f);
        return -1;
    }
    if (pipe2(f->wake, O_CLOEXEC) != 0) {
        snprintf(err, n, "http: pipe: %s", strerror(errno));
        http_front_free(f);
        return -1;
    }
    *out = f;
    return 0;
}

int http_front_run(http_front *f, char *err, size_t n)
{
    int e = pthread_create(&f->thread, NULL, front_main, f);
    if (e) {
        snprintf(err, n, "http: cannot start its thread: %s", strerror(e));
        return -1;
    }
    f->running = 1;
    return 0;
}

void http_front_stop(http_front *f)
{
    if (!f)
        return;
    if (f->running) {
        char b = 1;
        if (write(f->wake[1], &b, 1) != 1)
            pc_log(f->cfg.lg, PC_LOG_ERR, "http: cannot wake its thread: %s", strerror(errno));
        pthread_join(f->thread, NULL);
        f->running = 0;
    }
    if (f->lfd >= 0)
        close(f->lfd);
    f->lfd = -1;
    for (int i = 0; i < PC_HTTP_CONN_MAX; i++)
        if (f->conn[i].fd >= 0) {
            close(f->conn[i].fd);
            pending_release(f, &f->conn[i]);
        }
    for (int i = 0; i < CLOSING_MAX; i++)
        if (f->closing[i].fd >= 0) {
            close(f->closing[i].fd);
            f->closing[i].fd = -1;
        }
}

void http_front_free(http_front *f)
{
    if (!f)
        return;
    http_front_stop(f);
    for (int i = 0; i < 2; i++)
        if (f->wake[i] >= 0)
            close(f->wake[i]);
    pthread_mutex_destroy(&f->lock);
    free(f);
}
