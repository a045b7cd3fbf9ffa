/* http_int.h - between http.c (the server: libmicrohttpd, rate limits,
 * the token, static files, /metrics), http_front.c (the listening socket
 * and what a connection goes through before libmicrohttpd serves it:
 * limits, the request deadline, framing, Host) and http_api.c (the routes
 * of the JSON API under /api/). Nothing else includes it. */
#ifndef PANOCAP_HTTP_INT_H
#define PANOCAP_HTTP_INT_H

#include "http.h"

#include <stdint.h>
#include <sys/socket.h>

typedef enum http_route_id {
    API_STATUS = 0,     /* GET  /api/status */
    API_ALGOS,          /* GET  /api/algos */
    API_PICTURE,        /* GET  /api/picture.jpg, /api/cameras/N/picture.jpg */
    API_SNAPSHOT_FILE,  /* GET  /api/snapshots/NAME.png */
    API_ALGO,           /* POST /api/algo */
    API_WB,             /* POST /api/wb */
    API_IDR,            /* POST /api/idr */
    API_SNAPSHOT,       /* POST /api/snapshot */
    API_PICTURE_MAP,    /* GET  /api/picture/map */
    API_VIEW,           /* POST /api/views/NAME */
    API_VIEW_PICTURE,   /* GET  /api/views/NAME/picture.jpg */
} http_route_id;

typedef struct http_route {
    http_route_id id;
    int post;           /* 1: a state-changing request (token, body) */
    int camera;         /* API_PICTURE: -1 = the live picture, else the camera */
    char name[96];      /* API_SNAPSHOT_FILE: the file name; API_VIEW, API_VIEW_PICTURE: the view's */
} http_route;

/* What to send. body is malloc'd and owned by the answer (or NULL). */
typedef struct http_answer {
    unsigned code;
    const char *type;        /* Content-Type */
    char *body;
    size_t len;
    int fd;                  /* >= 0: send this file (fd_size bytes) instead of body */
    uint64_t fd_size;
    const char *allow;       /* Allow: (405) */
    int retry_after;         /* > 0: Retry-After: N */
    char filename[96];       /* "": none; else Content-Disposition: attachment */
    uint64_t seq;            /* > 0: X-Panocap-Picture: N */
    const char *etag;        /* one of the page's own files: its ETag (and
                              * the headers a page gets: http.c) */
} http_answer;

#define HTTP_JSON "application/json; charset=utf-8"

void http_answer_init(http_answer *a);
void http_answer_free(http_answer *a);
/* A JSON answer {"error": "..."} with code. */
void http_answer_error(http_answer *a, unsigned code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The text of a pc_json (must be done) as the answer's body. */
void http_answer_json(http_answer *a, unsigned code, const pc_json *j);

/* url under /api/ and the method: 0 and the route; 404 (no such path:
 * why says which paths there are) or 405 (*allow: the methods it takes). */
unsigned http_api_route(const char *url, const char *method, http_route *r, const char **allow, char *why,
                        size_t n);
/* Runs a route (after the server checked rate, token and body size). */
void http_api_run(const pc_http_ops *ops, const http_route *r, const char *body, size_t len, const pc_logger *lg,
                  http_answer *a);

/* ---------------------------------------------------- http_request.c */

/* A client address as a key: IPv6, IPv4 as ::ffff:a.b.c.d; as text. */
void http_addr_key(const struct sockaddr *sa, unsigned char key[16]);
const char *http_addr_text(const unsigned char key[16], char *buf, size_t n);
/* Up to 80 bytes of s as printable ASCII (the rest as '?'), for messages
 * quoting a request. */
const char *http_shown(const char *s, size_t len, char *out, size_t n);

enum { HTTP_REQ_MORE, HTTP_REQ_DONE, HTTP_REQ_REFUSED };

/* A request's head, pointing into the bytes it was read from. */
typedef struct http_req {
    size_t head_len;             /* the head with its empty line; 0 while it is incomplete */
    int http11, head, api;       /* HTTP/1.1 (or 1.x); a HEAD request; the path is under /api/ */
    const char *target;
    size_t target_len;
    const char *host, *cl, *te;  /* header values (spaces around them cut) */
    size_t host_len, cl_len, te_len;
    int hosts, cls, tes, expect_continue;
    unsigned code;               /* HTTP_REQ_REFUSED: the answer ... */
    char why[400];               /* ... and its reason */
} http_req;

/* The head of the request in b[0..n) read and checked: HTTP_REQ_MORE (not
 * all of it yet), HTTP_REQ_DONE (r holds it) or HTTP_REQ_REFUSED (r->code,
 * r->why). */
int http_req_head(const char *b, size_t n, http_req *r);
/* The chunked body at b[0..n) (after the head): HTTP_REQ_DONE (its
 * trailers and their empty line in too), HTTP_REQ_MORE or HTTP_REQ_REFUSED
 * (413 as soon as the sizes announced pass PC_HTTP_BODY_MAX; 400). */
int http_req_chunked(const char *b, size_t n, http_req *r);
/* Sets r's refusal: HTTP_REQ_REFUSED. */
int http_req_refuse(http_req *r, unsigned code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An entry of daemon.http_allowed_hosts, ready to compare. */
typedef struct http_host_rule {
    char name[128];          /* lower case, no trailing dot; "*": any; ".example.org" (suffix) */
    int is_addr;             /* 1: an address, in addr */
    unsigned char addr[16];
    int suffix;
} http_host_rule;

/* 0, or -1 with err (netaddr.h's pc_host_pattern_ok). */
int http_host_rule_make(http_host_rule *r, const char *text, char *err, size_t n);
/* 1 when the Host value v (its port, if any, not compared: a tunnel or a
 * proxy changes it) names this server: an address of this machine
 * (loopback, the one connection fd came to, its interfaces'), localhost
 * and *.localhost, the machine's host name (its first label, that
 * .local), or one of rules. */
int http_host_ok(const http_host_rule *rules, int nrules, int fd, const char *v, size_t len);

/* ------------------------------------------------------ http_front.c */

typedef struct http_front http_front;

typedef struct http_front_config {
    const struct sockaddr *addr; /* where to listen */
    socklen_t addrlen;
    const char *key, *listen;    /* the setting and its text, for messages */
    int web;                     /* 1: Host must name this server (DNS rebinding) */
    const char *const *allowed_hosts; /* daemon.http_allowed_hosts (copied) */
    int n_allowed_hosts;
    /* A connection whose whole request is in its socket's buffer and
     * passed: libmicrohttpd's from now on (MHD_add_connection), which
     * closes it when it cannot take it. 0 when taken. */
    int (*hand_over)(void *user, int fd, const struct sockaddr *sa, socklen_t len);
    void *user;
    const pc_logger *lg;
} http_front_config;

/* Binds and listens (no thread yet): 0, or -1 with err. */
int http_front_open(http_front **out, const http_front_config *cfg, char *err, size_t n);
/* Starts the thread that accepts and reads: 0, or -1 with err. */
int http_front_run(http_front *f, char *err, size_t n);
/* Ends the thread, closes the listening socket and the connections not
 * handed over yet. */
void http_front_stop(http_front *f);
/* After libmicrohttpd stopped (its connections counted out). NULL: no-op. */
void http_front_free(http_front *f);
/* libmicrohttpd took / closed a connection of client address sa (its
 * notify-connection callback, on its threads): the per-address counts. */
void http_front_started(http_front *f, const struct sockaddr *sa);
void http_front_closed(http_front *f, const struct sockaddr *sa);

#endif
