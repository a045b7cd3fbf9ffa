/* http.c - the HTTP server (see http.h) on libmicrohttpd: per-address
 * rate limits, the control token, the request body, the page's embedded
 * files and the metrics paths. The listening socket, the connections'
 * limits and what a request must be before it gets here are
 * http_front.c's (it hands libmicrohttpd each connection whose request
 * has come whole and passed); the JSON API's routes are in http_api.c. */
#include "http_int.h"

#include "netaddr.h"
#include "panocap_config.h"
#include "web_assets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ answers */

void http_answer_init(http_answer *a)
{
    memset(a, 0, sizeof *a);
    a->fd = -1;
}

void http_answer_free(http_answer *a)
{
    free(a->body);
    if (a->fd >= 0)
        close(a->fd);
    http_answer_init(a);
}

void http_answer_error(http_answer *a, unsigned code, const char *fmt, ...)
{
    char msg[600], buf[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pc_json j;
    pc_json_init(&j, buf, sizeof buf);
    pc_json_object(&j, NULL);
    pc_json_str(&j, "error", msg);
    pc_json_object_end(&j);
    free(a->body);
    a->body = strdup(buf);
    a->len = a->body ? strlen(a->body) : 0;
    a->code = code;
    a->type = HTTP_JSON;
}

void http_answer_json(http_answer *a, unsigned code, const pc_json *j)
{
    if (pc_json_done(j)) {
        http_answer_error(a, 500, "the answer did not fit its buffer");
        return;
    }
    free(a->body);
    a->body = strdup(j->buf);
    a->len = a->body ? strlen(a->body) : 0;
    a->code = a->body ? code : 500;
    a->type = HTTP_JSON;
}

#if PANOCAP_HAVE_HTTP
#include <microhttpd.h>

#define TEXT_MAX (256 * 1024)
#define RATE_SLOTS 64

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

/* A client address's token buckets (under pc_http.rate_lock). */
typedef struct rate_slot {
    int used;
    unsigned char addr[16];
    double all, post;  /* tokens left */
    int64_t last_ns;   /* last refill */
} rate_slot;

struct pc_http {
    struct MHD_Daemon *mhd;
    http_front *front;
    pc_http_ops ops;
    const pc_logger *lg;
    int web;
    char token[257];   /* "" = control over HTTP off (constant after start) */
    char token_why[400]; /* why it is off */
    pthread_mutex_t rate_lock; /* the connections' threads share the buckets */
    rate_slot rate[RATE_SLOTS];
};

/* One request's state, from its first call to its completion. */
typedef struct request {
    int api;           /* a route of the API */
    http_route route;
    http_answer early; /* an answer decided before the body came */
    int have_early;
    char body[PC_HTTP_BODY_MAX + 1];
    size_t len;
    int too_big;
} request;

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    pc_http *h = cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    pc_log(h->lg, PC_LOG_DEBUG, "http: %s", line);
}

static MHD_RESULT queue(struct MHD_Connection *c, http_answer *a)
{
    struct MHD_Response *r;
    if (a->fd >= 0) {
        r = MHD_create_response_from_fd64(a->fd_size, a->fd);
        if (r)
            a->fd = -1; /* the response closes it */
    } else {
        r = MHD_create_response_from_buffer(a->len, a->body ? a->body : (char *)"",
                                            a->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (r)
            a->body = NULL;
    }
    if (!r) {
        http_answer_free(a);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->type ? a->type : "text/plain; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (a->etag) {
        /* the page's files: revalidated every time (304 while unchanged),
         * so a new panocap's page replaces the old one without a forced
         * reload; nothing but its own files, never in a frame */
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, a->etag);
        MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
        MHD_add_response_header(r, "X-Frame-Options", "DENY");
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: "
                                "data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action "
                                "'none'");
    } else {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    }
    /* one request a connection: each comes through http_front.c's checks */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (a->allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, a->allow);
    char v[160];
    if (a->retry_after > 0) {
        snprintf(v, sizeof v, "%d", a->retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    if (a->filename[0]) {
        snprintf(v, sizeof v, "attachment; filename=\"%s\"", a->filename);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, v);
    }
    if (a->seq) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)a->seq);
        MHD_add_response_header(r, "X-Panocap-Picture", v);
    }
    MHD_RESULT ret = MHD_queue_response(c, a->code, r);
    MHD_destroy_response(r);
    http_answer_free(a);
    return ret;
}

/* A plain-text answer (the metrics paths and the server's own refusals
 * outside /api/). */
static void text_answer(http_answer *a, unsigned code, const char *text)
{
    free(a->body);
    a->body = strdup(text);
    a->len = a->body ? strlen(a->body) : 0;
    a->code = code;
    a->type = "text/plain; charset=utf-8";
}

/* ---------------------------------------------------------- rate limits */

/* 1 when the client at c may make one more request (post: also a POST). */
static int rate_ok(pc_http *h, struct MHD_Connection *c, int post)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    unsigned char key[16] = {0};
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET6)
            memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        else if (sa->sa_family == AF_INET)
            memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    }
    int64_t now = mono_ns();
    pthread_mutex_lock(&h->rate_lock);
    rate_slot *s = NULL, *oldest = &h->rate[0];
    for (int i = 0; i < RATE_SLOTS && !s; i++) {
        if (h->rate[i].used && memcmp(h->rate[i].addr, key, 16) == 0)
            s = &h->rate[i];
        else if (!h->rate[i].used || (oldest->used && h->rate[i].last_ns < oldest->last_ns))
            oldest = &h->rate[i];
    }
    if (!s) { /* a new address takes the slot left alone the longest */
        s = oldest;
        *s = (rate_slot){.used = 1, .all = PC_HTTP_RATE_BURST, .post = PC_HTTP_POST_BURST, .last_ns = now};
        memcpy(s->addr, key, 16);
    }
    double dt = (now - s->last_ns) / 1e9;
    s->last_ns = now;
    s->all += dt * PC_HTTP_RATE_PER_S;
    if (s->all > PC_HTTP_RATE_BURST)
        s->all = PC_HTTP_RATE_BURST;
    s->post += dt * PC_HTTP_POST_PER_S;
    if (s->post > PC_HTTP_POST_BURST)
        s->post = PC_HTTP_POST_BURST;
    int ok = s->all >= 1 && (!post || s->post >= 1);
    if (ok) {
        s->all -= 1;
        if (post)
            s->post -= 1;
    }
    pthread_mutex_unlock(&h->rate_lock);
    return ok;
}

/* ------------------------------------------------------------ the token */

/* Constant time for tokens of the same length. */
static int token_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = (unsigned char)(la != lb);
    for (size_t i = 0; i < la; i++)
        d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return d == 0;
}

/* 0 when c may change state; else the refusal in a. */
static int check_control(pc_http *h, struct MHD_Connection *c, http_answer *a)
{
    if (!h->token[0]) {
        http_answer_error(a, 403, "control over HTTP is off: %s", h->token_why);
        return -1;
    }
    const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, PC_HTTP_TOKEN_HEADER);
    if (!t || !t[0]) {
        http_answer_error(a, 403, "this request changes the daemon's state: send the token of "
                          "daemon.http_token_file in the header " PC_HTTP_TOKEN_HEADER);
        return -1;
    }
    if (!token_equal(t, h->token)) {
        http_answer_error(a, 403, "wrong token in " PC_HTTP_TOKEN_HEADER " (it is in the file of "
                          "daemon.http_token_file)");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ requests */

static void metrics_paths(pc_http *h, const char *url, http_answer *a)
{
    char *buf = malloc(TEXT_MAX);
    if (!buf) {
        text_answer(a, 500, "out of memory\n");
        return;
    }
    buf[0] = '\0';
    unsigned code = MHD_HTTP_OK;
    const char *ctype = "text/plain; charset=utf-8";
    if (strcmp(url, "/metrics") == 0) {
        ctype = "text/plain; version=0.0.4; charset=utf-8";
        if (!h->ops.metrics || h->ops.metrics(h->ops.user, buf, TEXT_MAX) != 0) {
            snprintf(buf, TEXT_MAX, "metrics not available\n");
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
            ctype = "text/plain; charset=utf-8";
        }
    } else if (strcmp(url, "/status") == 0) {
        if (!h->ops.status || h->ops.status(h->ops.user, buf, TEXT_MAX - 1) != 0) {
            snprintf(buf, TEXT_MAX, "status not available\n");
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
        } else if (!buf[0] || buf[strlen(buf) - 1] != '\n') {
            strcat(buf, "\n");
        }
    } else { /* /healthz */
        char why[256] = "not available";
        if (h->ops.healthy && h->ops.healthy(h->ops.user, why, sizeof why)) {
            snprintf(buf, TEXT_MAX, "ok\n");
        } else {
            snprintf(buf, TEXT_MAX, "unhealthy: %s\n", why);
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
        }
    }
    buf[TEXT_MAX - 1] = '\0';
    a->body = buf;
    a->len = strlen(buf);
    a->code = code;
    a->type = ctype;
}

/* GET/HEAD outside /api/: the metrics paths, and the page's files (web). */
static void plain_get(pc_http *h, struct MHD_Connection *c, const char *url, http_answer *a)
{
    if (!strcmp(url, "/metrics") || !strcmp(url, "/status") || !strcmp(url, "/healthz")) {
        metrics_paths(h, url, a);
        return;
    }
    const pc_web_asset *as = h->web ? pc_web_asset_find(url) : NULL;
    if (!as) {
        text_answer(a, 404, h->web ? "not found: the page is at /, the API under /api/ (GET /api/status), "
                                     "and /metrics, /status, /healthz\n"
                                   : "not found: try /metrics, /status or /healthz\n");
        return;
    }
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    a->type = as->type;
    a->etag = as->etag;
    if (inm && strcmp(inm, as->etag) == 0) {
        a->code = 304;
        return;
    }
    a->body = malloc(as->size ? as->size : 1);
    if (!a->body) {
        text_answer(a, 500, "out of memory\n");
        return;
    }
    memcpy(a->body, as->data, as->size);
    a->len = as->size;
    a->code = 200;
}

/* First call of a POST route: what can be refused before the body. */
static int post_checks(pc_http *h, struct MHD_Connection *c, http_answer *a)
{
    if (check_control(h, c, a))
        return -1;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > PC_HTTP_BODY_MAX) {
        http_answer_error(a, 413, "the body has %s bytes; at most %d are accepted", cl, PC_HTTP_BODY_MAX);
        return -1;
    }
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    int has_body = (cl && strtoull(cl, NULL, 10) > 0) ||
                   MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (has_body && (!ct || strncasecmp(ct, "application/json", 16) != 0 ||
                     (ct[16] && ct[16] != ';' && ct[16] != ' '))) {
        http_answer_error(a, 415, "the body must be JSON, sent with Content-Type: application/json (got %s)",
                          ct ? ct : "none");
        return -1;
    }
    return 0;
}

static MHD_RESULT handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload, size_t *upload_size, void **state)
{
    pc_http *h = cls;
    (void)version;
    request *rq = *state;
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0, head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    http_answer a;
    http_answer_init(&a);

    if (!rq) { /* first call: the headers are in */
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *state = rq;
        http_answer_init(&rq->early);
        int api = h->web && strncmp(url, "/api/", 5) == 0;
        if (!api && !get && !head) {
            /* answered at once: a request body is never read */
            text_answer(&rq->early, 405, h->web ? "method not allowed: only the API under /api/ takes POST\n"
                                                : "method not allowed: this server is read-only (GET, HEAD)\n");
            rq->early.allow = "GET, HEAD";
            rq->have_early = 1;
        } else if (h->web && !rate_ok(h, c, 0)) {
            http_answer_error(&rq->early, 429, "too many requests from this address (more than %d a second); "
                              "slow down", PC_HTTP_RATE_PER_S);
            rq->early.retry_after = 1;
            rq->have_early = 1;
        } else if (api) {
            char why[300];
            const char *allow = NULL;
            unsigned code = http_api_route(url, method, &rq->route, &allow, why, sizeof why);
            rq->api = 1;
            if (code) {
                http_answer_error(&rq->early, code, "%s", why);
                rq->early.allow = allow;
                rq->have_early = 1;
            } else if (rq->route.post && !rate_ok(h, c, 1)) {
                http_answer_error(&rq->early, 429, "too many control requests from this address (more than %d "
                                  "a second); slow down", PC_HTTP_POST_PER_S);
                rq->early.retry_after = 1;
                rq->have_early = 1;
            } else if (rq->route.post && post_checks(h, c, &rq->early)) {
                rq->have_early = 1;
            }
        }
        if (rq->have_early) {
            /* refused on its headers: answered now (a body is not read;
             * libmicrohttpd closes the connection after the answer) */
            a = rq->early;
            http_answer_init(&rq->early);
            rq->have_early = 0;
            return queue(c, &a);
        }
        if (rq->api && rq->route.post)
            return MHD_YES; /* its body comes next */
        /* GET, HEAD: answered on this call, below */
    }

    if (*upload_size) { /* body bytes: kept for a POST route, else ignored */
        if (rq->api && rq->route.post) {
            if (rq->len + *upload_size > PC_HTTP_BODY_MAX)
                rq->too_big = 1;
            else {
                memcpy(rq->body + rq->len, upload, *upload_size);
                rq->len += *upload_size;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }

    if (rq->api) {
        if (rq->too_big)
            http_answer_error(&a, 413, "the body is longer than %d bytes", PC_HTTP_BODY_MAX);
        else
            http_api_run(&h->ops, &rq->route, rq->body, rq->len, h->lg, &a);
        return queue(c, &a);
    }
    plain_get(h, c, url, &a);
    return queue(c, &a);
}

/* libmicrohttpd took or closed a connection: http_front.c counts them per
 * client address. */
static void connection_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    pc_http *h = cls;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = h; /* counted: its close is counted out */
        http_front_started(h->front, sa);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        *socket_context = NULL;
        http_front_closed(h->front, sa);
    }
}

static int hand_over(void *user, int fd, const struct sockaddr *sa, socklen_t len)
{
    pc_http *h = user;
    return MHD_add_connection(h->mhd, fd, sa, len) == MHD_YES ? 0 : -1;
}

static void completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    request *rq = *state;
    if (rq) {
        http_answer_free(&rq->early);
        free(rq);
        *state = NULL;
    }
}

int pc_http_start(pc_http **out, const pc_http_config *cfg, const pc_http_ops *ops, const pc_logger *lg,
                  char *err, size_t errlen)
{
    *out = NULL;
    const char *key = cfg->key ? cfg->key : "listen";
    struct sockaddr_storage ss;
    socklen_t sl;
    char why[256];
    if (pc_parse_listen(cfg->listen, &ss, &sl, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s %s", key, why);
        return -1;
    }
    pc_http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "http: out of memory");
        return -1;
    }
    if (ops)
        h->ops = *ops;
    h->lg = lg;
    h->web = cfg->web;
    pthread_mutex_init(&h->rate_lock, NULL);
    if (!cfg->web) {
        snprintf(h->token_why, sizeof h->token_why, "this listener is read-only");
    } else if (!cfg->token_file || !cfg->token_file[0]) {
        snprintf(h->token_why, sizeof h->token_why, "no daemon.http_token_file is configured");
    } else {
        int created = 0;
        char e[600];
        if (pc_http_token_load(cfg->token_file, h->token, sizeof h->token, &created, e, sizeof e)) {
            h->token[0] = '\0';
            snprintf(h->token_why, sizeof h->token_why, "daemon.http_token_file %.300s", e);
            pc_log(lg, PC_LOG_WARNING, "http: control over HTTP off: %s", e);
        } else if (created) {
            /* the one time it is shown: from now on it is only in the file */
            pc_log(lg, PC_LOG_NOTICE, "http: new control token in %s (mode 0600): %s -- send it in the "
                   PC_HTTP_TOKEN_HEADER " header (the page asks for it once)", cfg->token_file, h->token);
        } else {
            pc_log(lg, PC_LOG_INFO, "http: control token from %s", cfg->token_file);
        }
    }
    http_front_config fc = {.addr = (struct sockaddr *)&ss, .addrlen = sl, .key = key, .listen = cfg->listen,
                            .web = cfg->web, .allowed_hosts = cfg->allowed_hosts,
                            .n_allowed_hosts = cfg->web ? cfg->n_allowed_hosts : 0, .hand_over = hand_over,
                            .user = h, .lg = lg};
    if (http_front_open(&h->front, &fc, err, errlen)) {
        pthread_mutex_destroy(&h->rate_lock);
        free(h);
        return -1;
    }
    /* a thread per connection: a request may wait (the first live
     * picture) without holding up the others. No listening socket of its
     * own: http_front.c hands it the connections. Its limits are a
     * backstop above the front's. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
                     MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
    h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)(2 * PC_HTTP_CONN_MAX),
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
                              MHD_OPTION_THREAD_STACK_SIZE, (size_t)512 * 1024,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, h,
                              MHD_OPTION_NOTIFY_CONNECTION, connection_notify, h,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                              MHD_OPTION_END);
    if (!h->mhd || http_front_run(h->front, err, errlen)) {
        if (!h->mhd)
            snprintf(err, errlen, "%s %s: libmicrohttpd would not start", key, cfg->listen);
        http_front_stop(h->front);
        if (h->mhd)
            MHD_stop_daemon(h->mhd);
        http_front_free(h->front);
        pthread_mutex_destroy(&h->rate_lock);
        free(h);
        return -1;
    }
    if (cfg->web)
        pc_log(lg, PC_LOG_NOTICE, "web page: http://%s/ (JSON API under /api/, also /metrics, /status, "
               "/healthz); control over HTTP %s", cfg->listen, h->token[0] ? "on (token)" : "off");
    else
        pc_log(lg, PC_LOG_INFO, "metrics: http://%s/metrics (and /status, /healthz)", cfg->listen);
    *out = h;
    return 0;
}

int pc_http_control_enabled(const pc_http *h) { return h && h->token[0]; }

void pc_http_stop(pc_http *h)
{
    if (!h)
        return;
    http_front_stop(h->front); /* no new connections */
    MHD_stop_daemon(h->mhd);
    http_front_free(h->front);
    pthread_mutex_destroy(&h->rate_lock);
    free(h);
}

#else /* no libmicrohttpd */

struct pc_http {
    int unused;
};

int pc_http_start(pc_http **out, const pc_http_config *cfg, const pc_http_ops *ops, const pc_logger *lg,
                  char *err, size_t errlen)
{
    (void)ops;
    (void)lg;
    *out = NULL;
    snprintf(err, errlen, "%s \"%s\": this panocap was built without libmicrohttpd "
             "(install libmicrohttpd-dev and rebuild; meson option -Dhttp=enabled)", cfg->key ? cfg->key : "listen",
             cfg->listen ? cfg->listen : "");
    return -1;
}

int pc_http_control_enabled(const pc_http *h) { (void)h; return 0; }
void pc_http_stop(pc_http *h) { (void)h; }

#endif
