/* http.h - the metrics HTTP server on TCP (daemon.metrics_listen), built on
 * libmicrohttpd: read-only, for Prometheus and health checks.
 *
 *   GET /metrics  Prometheus text exposition (200, or 503 when unavailable)
 *   GET /status   the status line
 *   GET /healthz  200 "ok" while frame sets flow, else 503 with the reason
 *   HEAD          the same without a body; any other method: 405 with
 *                 "Allow: GET, HEAD"; any other path: 404
 *
 * No control command is reachable over TCP (they stay on the UNIX control
 * socket). Bounded: 32 connections (8 per client address), 10 s idle
 * timeout, 32 KiB of request memory per connection, one internal thread.
 * Without libmicrohttpd at build time pc_http_start refuses with a message
 * saying so (PANOCAP_HAVE_HTTP 0), and the settings refuse the key. */
#ifndef PANOCAP_HTTP_H
#define PANOCAP_HTTP_H

#include <stddef.h>

#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_http_ops {
    void *user;
    /* Write the text into buf (NUL-terminated); return 0, or -1. Called on
     * the server's thread: quick, no waiting on the pipeline. */
    int (*status)(void *user, char *buf, size_t len);
    int (*metrics)(void *user, char *buf, size_t len);
    /* 1 when frame sets flow; else 0 with the reason in why. */
    int (*healthy)(void *user, char *why, size_t len);
} pc_http_ops;

typedef struct pc_http pc_http;

/* Listens on addr ("127.0.0.1:9464", "[::1]:9464"; see netaddr.h) and
 * serves in a thread of its own. Returns 0 or -1 with err. */
int pc_http_start(pc_http **out, const char *addr, const pc_http_ops *ops, const pc_logger *lg,
                  char *err, size_t errlen);
/* Stops the server, closes its connections. NULL is a no-op. */
void pc_http_stop(pc_http *h);

#ifdef __cplusplus
}
#endif
#endif
