/* http.h - the daemon's HTTP server on TCP, built on libmicrohttpd, in one
 * of two roles:
 *
 *   metrics (daemon.metrics_listen): read-only, for Prometheus and health
 *   checks:
 *     GET /metrics  Prometheus text exposition (200, or 503 when unavailable)
 *     GET /status   the status line
 *     GET /healthz  200 "ok" while frame sets flow, else 503 with the reason
 *     HEAD          the same without a body; any other method: 405 with
 *                   "Allow: GET, HEAD"; any other path: 404
 *
 *   web (daemon.http_listen): the same three, plus the operator's page (its
 *   HTML, CSS, JS and icon embedded at build time: web_assets.c) at / and
 *   the JSON API under /api/ (http_api.c, README "Web page and JSON API"):
 *     GET  /api/status, /api/algos, /api/picture.jpg, /api/picture/map,
 *          /api/cameras/N/picture.jpg, /api/views/NAME/picture.jpg,
 *          /api/snapshots/NAME.png
 *     POST /api/algo, /api/wb, /api/idr, /api/snapshot, /api/views/NAME
 *   Reading is open to whoever reaches the listener. Every POST needs the
 *   token of daemon.http_token_file in the header X-Panocap-Token (a
 *   cross-site form cannot send a header; a cross-site script would need a
 *   CORS preflight, which is refused); without a token file, POSTs answer
 *   403 "control over HTTP is off". Bodies are JSON objects of at most
 *   4 KiB (413 past it, 415 without Content-Type: application/json).
 *
 * Bounded in both roles (http_front.c, before libmicrohttpd sees a
 * connection): 32 connections, 8 per client address; a request (its line,
 * headers and body) must be in within 5 s of its first bytes (else 408 and
 * the connection closed); over a limit the oldest connection of that
 * address still sending its request is closed (503) to make room, or, when
 * none is, the new one is answered 503 with Retry-After; one request a
 * connection (Connection: close); heads of at most 8 KiB and 100 header lines (431); bodies of
 * at most 4 KiB, with Content-Length or chunked, refused (413) as soon as
 * they pass it; two Content-Lengths, one beside Transfer-Encoding, a
 * folded header line: 400; a path holding an encoded NUL: 404. In the web
 * role a request must name this server in Host (its addresses, the
 * machine's, localhost, its host name, daemon.http_allowed_hosts; an
 * HTTP/1.0 request may leave Host out), else 421: a page whose name was
 * rebound to this address (DNS rebinding) reads nothing. Answers being
 * sent: 10 s without progress closes them. A thread per connection (the
 * callbacks below may run on several at once); the web role also
 * limits each client address to 50 requests a second (bursts of 100) and 5
 * POSTs a second (bursts of 20): past that, 429 with Retry-After. Behind a
 * reverse proxy every client shares the proxy's address and these limits;
 * every URL the page uses is relative, so it works under any prefix.
 * Without libmicrohttpd at build time pc_http_start refuses with a message
 * saying so (PANOCAP_HAVE_HTTP 0), and the settings refuse the keys. */
#ifndef PANOCAP_HTTP_H
#define PANOCAP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "debayer.h"
#include "json.h"
#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes and limits shared with the tests and the README. */
#define PC_HTTP_BODY_MAX 4096        /* bytes of a POST body */
#define PC_HTTP_TOKEN_HEADER "X-Panocap-Token"
#define PC_HTTP_RATE_PER_S 50        /* requests per client address ... */
#define PC_HTTP_RATE_BURST 100
#define PC_HTTP_POST_PER_S 5         /* ... and POSTs */
#define PC_HTTP_POST_BURST 20
#define PC_HTTP_CONN_MAX 32          /* connections in all ... */
#define PC_HTTP_CONN_PER_ADDR 8      /* ... and from one client address */
#define PC_HTTP_REQUEST_S 5          /* a request's line, headers and body all in within this */
#define PC_HTTP_HEAD_MAX 8192        /* bytes of a request's line and headers ... */
#define PC_HTTP_HEADER_LINES 100     /* ... and its header lines */
#define PC_HTTP_MAX_ALLOWED_HOSTS 8  /* daemon.http_allowed_hosts entries */

/* The callbacks: quick, no waiting on the pipeline (set a flag or post a
 * request). Return 0, or -1 with err (the answer's reason). NULL: that
 * part is not served (503 / 404). */
typedef struct pc_http_ops {
    void *user;
    /* both roles: text into buf (NUL-terminated) */
    int (*status)(void *user, char *buf, size_t len);
    int (*metrics)(void *user, char *buf, size_t len);
    /* 1 when frame sets flow; else 0 with the reason in why. */
    int (*healthy)(void *user, char *why, size_t len);

    /* web role */
    /* GET /api/status: one JSON object into j (http_api.c adds nothing). */
    int (*api_status)(void *user, pc_json *j);
    /* The latest JPEG of the live picture (camera -1) or of camera k's
     * thumbnail: a malloc'd copy in *data (the caller frees it), its
     * sequence number; waits up to 2 s for the first one. -1 with why
     * when there is none, -2 when there is no such camera. */
    int (*picture)(void *user, int camera, uint8_t **data, size_t *len, uint64_t *seq, char *why, size_t n);
    /* The same for virtual camera `name`'s live picture (-2: no such view). */
    int (*view_picture)(void *user, const char *name, uint8_t **data, size_t *len, uint64_t *seq, char *why,
                        size_t n);
    /* algo/variant already checked against the algorithm table */
    int (*set_algo)(void *user, pc_algo_id algo, pc_variant variant, char *err, size_t n);
    /* freeze 1: fix automatic white balance at its gains; 0: automatic
     * again where the configuration says "auto". Gains as config lines in
     * text. */
    int (*wb)(void *user, int freeze, char *text, size_t len, char *err, size_t n);
    int (*idr)(void *user, char *err, size_t n);
    /* Starts a snapshot of the next frame set (what the stream shows:
     * view NULL, the main picture; else that virtual camera's) into a new
     * file of the snapshot folder; its name (no folder) into name. -1
     * with err; *code the HTTP status (409 busy, 404 no such view). */
    int (*snapshot)(void *user, const char *view, char *name, size_t namelen, int *code, char *err, size_t n);
    /* A snapshot the web asked for, by name: 0 written (its path into
     * path), 1 still being written, -1 failed or unknown (reason in err;
     * *unknown = 1 when the name is none of them). */
    int (*snapshot_file)(void *user, const char *name, char *path, size_t pathlen, int *unknown, char *err,
                         size_t n);
    /* POST /api/views/NAME: command, the virtual camera command after its
     * name (daemon/vcams.h's grammar) that http_api.c built from the body.
     * 0 with the answer object written into j; else the HTTP status (400:
     * refused, 404: no such view) with err. */
    int (*view_command)(void *user, const char *name, const char *command, pc_json *j, char *err, size_t n);
    /* GET /api/picture/map: the directions of the live picture's points
     * (the page turns clicks into pan and tilt with it). 0 with j, else
     * the HTTP status with err. */
    int (*picture_map)(void *user, pc_json *j, char *err, size_t n);
} pc_http_ops;

typedef struct pc_http_config {
    const char *listen;     /* "127.0.0.1:9464", "[::1]:8080" (netaddr.h) */
    const char *key;        /* the setting it comes from, for messages: "metrics_listen" */
    int web;                /* 1: the page and the API too */
    const char *token_file; /* web: daemon.http_token_file; NULL/"" = no control over HTTP */
    /* web: Host names served besides this machine's own (a reverse proxy's
     * public name; netaddr.h's pc_host_pattern_ok), at most
     * PC_HTTP_MAX_ALLOWED_HOSTS */
    const char *const *allowed_hosts;
    int n_allowed_hosts;
} pc_http_config;

typedef struct pc_http pc_http;

/* Listens and serves in a thread of its own. A token file that cannot be
 * read or made turns control over HTTP off with a warning; the server
 * still serves. Returns 0 or -1 with err (cannot listen). */
int pc_http_start(pc_http **out, const pc_http_config *cfg, const pc_http_ops *ops, const pc_logger *lg,
                  char *err, size_t errlen);
/* 1 when state-changing requests are accepted (a token is in force). */
int pc_http_control_enabled(const pc_http *h);
/* Stops the server, closes its connections. NULL is a no-op. */
void pc_http_stop(pc_http *h);

/* The token file (http_token.c): reads the token in path, or, when there
 * is no such file, makes one (mode 0600, 32 random bytes as 64 hex digits)
 * and sets *created. A token file must be a regular file readable by its
 * owner only, holding 16..256 printable characters (white space around
 * them ignored). Returns 0 or -1 with err naming the file and the
 * problem. */
int pc_http_token_load(const char *path, char *token, size_t len, int *created, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
