/* http_int.h - between http.c (the server: connections, rate limits, the
 * token, static files, /metrics) and http_api.c (the routes of the JSON
 * API under /api/). Nothing else includes it. */
#ifndef PANOCAP_HTTP_INT_H
#define PANOCAP_HTTP_INT_H

#include "http.h"

#include <stdint.h>

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

#endif
