/* http.c - the metrics HTTP server (see http.h) on libmicrohttpd. */
#include "http.h"

#include "netaddr.h"
#include "panocap_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if PANOCAP_HAVE_HTTP
#include <microhttpd.h>

#define TEXT_MAX (256 * 1024)

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

struct pc_http {
    struct MHD_Daemon *mhd;
    pc_http_ops ops;
    const pc_logger *lg;
};

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    pc_http *h = cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    pc_log(h->lg, PC_LOG_DEBUG, "http: %s", line);
}

static MHD_RESULT reply(struct MHD_Connection *c, unsigned code, char *body, const char *ctype,
                        const char *allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    MHD_RESULT ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static char *text_of(const char *s)
{
    return strdup(s);
}

static MHD_RESULT handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload, size_t *upload_size, void **state)
{
    pc_http *h = cls;
    static const char *const plain = "text/plain; charset=utf-8";
    (void)version;
    (void)upload;
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0, head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (!get && !head) {
        /* answered at once: a request body is never read */
        char *b = text_of("method not allowed: this server is read-only (GET, HEAD)\n");
        return b ? reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, b, plain, "GET, HEAD") : MHD_NO;
    }
    if (*upload_size) { /* a GET with a body: ignore it */
        *upload_size = 0;
        return MHD_YES;
    }
    (void)state;
    char *buf = malloc(TEXT_MAX);
    if (!buf)
        return MHD_NO;
    buf[0] = '\0';
    unsigned code = MHD_HTTP_OK;
    const char *ctype = plain;
    if (strcmp(url, "/metrics") == 0) {
        ctype = "text/plain; version=0.0.4; charset=utf-8";
        if (!h->ops.metrics || h->ops.metrics(h->ops.user, buf, TEXT_MAX) != 0) {
            snprintf(buf, TEXT_MAX, "metrics not available\n");
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
            ctype = plain;
        }
    } else if (strcmp(url, "/status") == 0) {
        if (!h->ops.status || h->ops.status(h->ops.user, buf, TEXT_MAX - 1) != 0) {
            snprintf(buf, TEXT_MAX, "status not available\n");
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
        } else if (!buf[0] || buf[strlen(buf) - 1] != '\n') {
            strcat(buf, "\n");
        }
    } else if (strcmp(url, "/healthz") == 0) {
        char why[256] = "not available";
        if (h->ops.healthy && h->ops.healthy(h->ops.user, why, sizeof why)) {
            snprintf(buf, TEXT_MAX, "ok\n");
        } else {
            snprintf(buf, TEXT_MAX, "unhealthy: %s\n", why);
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
        }
    } else {
        snprintf(buf, TEXT_MAX, "not found: try /metrics, /status or /healthz\n");
        code = MHD_HTTP_NOT_FOUND;
    }
    buf[TEXT_MAX - 1] = '\0';
    return reply(c, code, buf, ctype, NULL);
}

int pc_http_start(pc_http **out, const char *addr, const pc_http_ops *ops, const pc_logger *lg,
                  char *err, size_t errlen)
{
    *out = NULL;
    struct sockaddr_storage ss;
    socklen_t sl;
    char why[256];
    if (pc_parse_listen(addr, &ss, &sl, why, sizeof why) != 0) {
        snprintf(err, errlen, "metrics_listen %s", why);
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
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    uint16_t port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    h->mhd = MHD_start_daemon(flags, port, NULL, NULL, handle, h,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)8,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
                              MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                              MHD_OPTION_END);
    if (!h->mhd) {
        snprintf(err, errlen, "metrics_listen %s: cannot listen (address in use, not on this host, or a "
                 "port below 1024 without the privilege)", addr);
        free(h);
        return -1;
    }
    pc_log(lg, PC_LOG_INFO, "metrics: http://%s/metrics (and /status, /healthz)", addr);
    *out = h;
    return 0;
}

void pc_http_stop(pc_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->mhd);
    free(h);
}

#else /* no libmicrohttpd */

struct pc_http {
    int unused;
};

int pc_http_start(pc_http **out, const char *addr, const pc_http_ops *ops, const pc_logger *lg,
                  char *err, size_t errlen)
{
    (void)ops;
    (void)lg;
    *out = NULL;
    snprintf(err, errlen, "metrics_listen \"%s\": this panocap was built without libmicrohttpd "
             "(install libmicrohttpd-dev and rebuild; meson option -Dhttp=enabled)", addr ? addr : "");
    return -1;
}

void pc_http_stop(pc_http *h) { (void)h; }

#endif
