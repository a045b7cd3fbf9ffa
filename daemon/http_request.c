/* http_request.c - a request as http_front.c peeks at it before
 * libmicrohttpd reads it (http_int.h): its head read and checked (the
 * request line, the header lines, Host, Content-Length and
 * Transfer-Encoding once each and never both, a body within
 * PC_HTTP_BODY_MAX, no encoded NUL in the path), a chunked body's framing,
 * and whether a Host header names this server (DNS rebinding); the client
 * addresses as keys. Plain functions of the bytes, no state. */
#include "http_int.h"

#include "netaddr.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ------------------------------------------------------------ addresses */

void http_addr_key(const struct sockaddr *sa, unsigned char key[16])
{
    memset(key, 0, 16);
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    } else if (sa && sa->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    }
}

const char *http_addr_text(const unsigned char key[16], char *buf, size_t n)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(key, mapped, 12))
        inet_ntop(AF_INET, key + 12, buf, (socklen_t)n);
    else
        inet_ntop(AF_INET6, key, buf, (socklen_t)n);
    return buf;
}

static int key_loopback(const unsigned char key[16])
{
    static const unsigned char one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(key, one, 16) || (!memcmp(key, mapped, 12) && key[12] == 127);
}

const char *http_shown(const char *s, size_t len, char *out, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 4 < n && i < 80; i++)
        out[o++] = (s[i] > 0x20 && s[i] < 0x7f) || s[i] == ' ' ? s[i] : '?';
    if (len > 80 && o + 4 < n)
        o += (size_t)snprintf(out + o, n - o, "...");
    out[o] = '\0';
    return out;
}

/* ------------------------------------------------------------ the request */

int http_req_refuse(http_req *r, unsigned code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    r->code = code;
    return HTTP_REQ_REFUSED;
}

/* The next line of b[*p..n): [*ls, *le) without its end (LF or CRLF; a
 * bare LF as libmicrohttpd takes it). 1: a line; 0: its end has not come;
 * -1: a byte no line of a head may hold (a control character, a CR not
 * before an LF: libmicrohttpd would end a line there, a proxy might not). */
static int next_line(const char *b, size_t n, size_t *p, size_t *ls, size_t *le)
{
    for (size_t i = *p; i < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        if (ch == '\n') {
            *ls = *p;
            *le = (i > *p && b[i - 1] == '\r') ? i - 1 : i;
            *p = i + 1;
            return 1;
        }
        if (ch == '\r') {
            if (i + 1 < n && b[i + 1] != '\n')
                return -1;
            continue;
        }
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return -1;
    }
    return 0;
}

static int tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static int name_is(const char *b, size_t len, const char *name)
{
    return strlen(name) == len && !strncasecmp(b, name, len);
}

int http_req_head(const char *b, size_t n, http_req *r)
{
    memset(r, 0, sizeof *r);
    size_t p = 0, ls = 0, le = 0;
    int k;
    /* empty lines before the request line are allowed (RFC 9112 2.2) */
    while ((k = next_line(b, n, &p, &ls, &le)) == 1 && le == ls)
        ;
    if (k < 0)
        return http_req_refuse(r, 400, "bad request: a control character or a lone CR in the request line");
    if (k == 0)
        return n >= PC_HTTP_HEAD_MAX
                   ? http_req_refuse(r, 431, "the request line is longer than %d bytes", PC_HTTP_HEAD_MAX)
                   : HTTP_REQ_MORE;
    /* METHOD SP TARGET SP HTTP/1.x */
    const char *line = b + ls, *end = b + le;
    const char *sp1 = memchr(line, ' ', (size_t)(end - line));
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;
    char txt[100];
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 || memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1)))
        return http_req_refuse(r, 400, "bad request: \"%s\" is not an HTTP request line (METHOD /path HTTP/1.1)",
                               http_shown(line, (size_t)(end - line), txt, sizeof txt));
    for (const char *m = line; m < sp1; m++)
        if (!tchar((unsigned char)*m))
            return http_req_refuse(r, 400, "bad request: the method \"%s\" is not a token",
                                   http_shown(line, (size_t)(sp1 - line), txt, sizeof txt));
    size_t vlen = (size_t)(end - sp2 - 1);
    const char *ver = sp2 + 1;
    if (vlen != 8 || strncmp(ver, "HTTP/", 5) || ver[5] < '0' || ver[5] > '9' || ver[6] != '.' || ver[7] < '0' ||
        ver[7] > '9')
        return http_req_refuse(r, 400, "bad request: \"%s\" is not an HTTP version",
                               http_shown(ver, vlen, txt, sizeof txt));
    if (ver[5] != '1')
        return http_req_refuse(r, 505, "HTTP/%c.%c is not supported; this server speaks HTTP/1.1", ver[5], ver[7]);
    r->http11 = ver[7] != '0';
    r->head = name_is(line, (size_t)(sp1 - line), "HEAD");
    r->target = sp1 + 1;
    r->target_len = (size_t)(sp2 - sp1 - 1);
    r->api = r->target_len >= 5 && !strncmp(r->target, "/api/", 5);

    for (int lines = 0;;) {
        k = next_line(b, n, &p, &ls, &le);
        if (k < 0)
            return http_req_refuse(r, 400, "bad request: a control character or a lone CR in a header");
        if (k == 0 || p > PC_HTTP_HEAD_MAX)
            return (k == 0 && n < PC_HTTP_HEAD_MAX) ? HTTP_REQ_MORE
                                                    : http_req_refuse(r, 431,
                                                                      "the request's headers are longer than "
                                                                      "%d bytes",
                                                                      PC_HTTP_HEAD_MAX);
        if (le == ls)
            break;
        if (++lines > PC_HTTP_HEADER_LINES)
            return http_req_refuse(r, 431, "the request has more than %d header lines", PC_HTTP_HEADER_LINES);
        line = b + ls;
        size_t len = le - ls;
        if (line[0] == ' ' || line[0] == '\t')
            return http_req_refuse(r, 400, "bad request: a folded header line (one that starts with white space)");
        const char *colon = memchr(line, ':', len);
        if (!colon || colon == line)
            return http_req_refuse(r, 400, "bad request: the header line \"%s\" has no name and colon",
                                   http_shown(line, len, txt, sizeof txt));
        for (const char *m = line; m < colon; m++)
            if (!tchar((unsigned char)*m))
                return http_req_refuse(r, 400,
                                       "bad request: the header name \"%s\" holds '%c' (white space before "
                                       "the colon, or not a token)",
                                       http_shown(line, (size_t)(colon - line), txt, sizeof txt),
                                       *m == '\t' ? ' ' : *m);
        const char *v = colon + 1, *ve = line + len;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t nl = (size_t)(colon - line);
        if (name_is(line, nl, "Host")) {
            r->hosts++;
            r->host = v;
            r->host_len = (size_t)(ve - v);
        } else if (name_is(line, nl, "Content-Length")) {
            r->cls++;
            r->cl = v;
            r->cl_len = (size_t)(ve - v);
        } else if (name_is(line, nl, "Transfer-Encoding")) {
            r->tes++;
            r->te = v;
            r->te_len = (size_t)(ve - v);
        } else if (name_is(line, nl, "Expect")) {
            r->expect_continue = name_is(v, (size_t)(ve - v), "100-continue");
        }
    }
    r->head_len = p;

    if (r->hosts > 1)
        return http_req_refuse(r, 400, "bad request: %d Host headers; a request has one", r->hosts);
    if (r->http11 && !r->hosts)
        return http_req_refuse(r, 400, "bad request: an HTTP/1.1 request needs a Host header");
    if (r->cls > 1)
        return http_req_refuse(r, 400,
                               "bad request: %d Content-Length headers; a request has at most one (a proxy in "
                               "front might take another one than this server)",
                               r->cls);
    if (r->cls && r->tes)
        return http_req_refuse(r, 400, "bad request: both Content-Length and Transfer-Encoding; send one of them");
    if (r->tes && (r->tes > 1 || !name_is(r->te, r->te_len, "chunked")))
        return http_req_refuse(r, 501, "Transfer-Encoding \"%s\" is not supported; only chunked is",
                               http_shown(r->te, r->te_len, txt, sizeof txt));
    if (r->cls) {
        uint64_t v = 0;
        int over = 0;
        if (!r->cl_len)
            return http_req_refuse(r, 400, "bad request: an empty Content-Length");
        for (size_t i = 0; i < r->cl_len; i++) {
            if (r->cl[i] < '0' || r->cl[i] > '9')
                return http_req_refuse(r, 400, "bad request: Content-Length \"%s\" is not a number",
                                       http_shown(r->cl, r->cl_len, txt, sizeof txt));
            if (v > (UINT64_MAX - 9) / 10)
                over = 1;
            else
                v = v * 10 + (uint64_t)(r->cl[i] - '0');
        }
        if (over || v > PC_HTTP_BODY_MAX)
            return http_req_refuse(r, 413, "the body has %s bytes; at most %d are accepted",
                                   http_shown(r->cl, r->cl_len, txt, sizeof txt), PC_HTTP_BODY_MAX);
    }
    /* the path (before any query), as sent: an encoded NUL would cut it
     * once decoded */
    size_t plen = 0;
    while (plen < r->target_len && r->target[plen] != '?' && r->target[plen] != '#')
        plen++;
    for (size_t i = 0; i + 2 < plen; i++)
        if (r->target[i] == '%' && r->target[i + 1] == '0' && r->target[i + 2] == '0')
            return http_req_refuse(r, 404, "not found: the path holds an encoded NUL (%%00): %s",
                                   http_shown(r->target, plen, txt, sizeof txt));
    return HTTP_REQ_DONE;
}

int http_req_chunked(const char *b, size_t n, http_req *r)
{
    size_t p = 0, ls, le, total = 0;
    for (;;) {
        /* chunk-size [; extensions] CRLF; the digits checked as they come */
        size_t start = p, size = 0, i;
        int k = next_line(b, n, &p, &ls, &le);
        if (k < 0)
            return http_req_refuse(r, 400, "bad request: a control character in a chunk's size line");
        size_t end = k == 1 ? le : n;
        for (i = start; i < end && isxdigit((unsigned char)b[i]); i++) {
            size = size * 16 + (size_t)(b[i] <= '9' ? b[i] - '0' : (b[i] | 0x20) - 'a' + 10);
            if (total + size > PC_HTTP_BODY_MAX)
                return http_req_refuse(r, 413, "the body is longer than %d bytes", PC_HTTP_BODY_MAX);
        }
        if (k == 0)
            return HTTP_REQ_MORE;
        if (i == start || (i < le && b[i] != ';'))
            return http_req_refuse(r, 400, "bad request: a chunk's size line is not a hexadecimal number");
        total += size;
        if (size == 0) { /* the last chunk: a few trailer lines, then an empty one */
            for (int lines = 0;; lines++) {
                k = next_line(b, n, &p, &ls, &le);
                if (k < 0)
                    return http_req_refuse(r, 400, "bad request: a control character in a trailer");
                if (k == 0)
                    return HTTP_REQ_MORE;
                if (le == ls)
                    return HTTP_REQ_DONE;
                if (b[ls] == ' ' || b[ls] == '\t' || !memchr(b + ls, ':', le - ls))
                    return http_req_refuse(r, 400, "bad request: a malformed trailer line");
                if (lines >= 10)
                    return http_req_refuse(r, 431, "the body has more than 10 trailer lines");
            }
        }
        /* the data, then CRLF (or LF) */
        if (n - p < size + 1)
            return HTTP_REQ_MORE;
        p += size;
        if (b[p] == '\n') {
            p++;
        } else if (b[p] == '\r') {
            if (n - p < 2)
                return HTTP_REQ_MORE;
            if (b[p + 1] != '\n')
                return http_req_refuse(r, 400, "bad request: a chunk not followed by CRLF");
            p += 2;
        } else {
            return http_req_refuse(r, 400, "bad request: a chunk longer than its size says");
        }
    }
}

/* ------------------------------------------------------------ Host */

/* 1 when key is this machine's: loopback, the address the connection came
 * to, or one of its interfaces' addresses. */
static int addr_is_local(int fd, const unsigned char key[16])
{
    if (key_loopback(key))
        return 1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    unsigned char k[16];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        http_addr_key((struct sockaddr *)&ss, k);
        if (!memcmp(k, key, 16))
            return 1;
    }
    struct ifaddrs *ifs = NULL;
    int found = 0;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
                continue;
            http_addr_key(i->ifa_addr, k);
            found = !memcmp(k, key, 16);
        }
        freeifaddrs(ifs);
    }
    return found;
}

/* text as an address key: 1 (an IPv4 address, or an IPv6 one, bracketed
 * or not), else 0. */
static int text_addr(const char *text, unsigned char key[16])
{
    char v6[64];
    struct in_addr a4;
    size_t len = strlen(text);
    if (inet_pton(AF_INET, text, &a4) == 1) {
        memset(key, 0, 16);
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &a4, 4);
        return 1;
    }
    if (text[0] == '[' && len >= 2 && text[len - 1] == ']' && len - 2 < sizeof v6) {
        snprintf(v6, sizeof v6, "%.*s", (int)(len - 2), text + 1);
        text = v6;
    }
    return inet_pton(AF_INET6, text, key) == 1;
}

static void lower_name(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            s[i] = (char)(s[i] - 'A' + 'a');
    if (n && s[n - 1] == '.')
        s[n - 1] = '\0';
}

int http_host_rule_make(http_host_rule *r, const char *text, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    if (!text || pc_host_pattern_ok(text, err, n))
        return -1;
    r->is_addr = text_addr(text, r->addr);
    r->suffix = !strncmp(text, "*.", 2);
    snprintf(r->name, sizeof r->name, "%s", r->suffix ? text + 1 : text);
    if (!r->is_addr)
        lower_name(r->name);
    return 0;
}

int http_host_ok(const http_host_rule *rules, int nrules, int fd, const char *v, size_t len)
{
    char h[256];
    unsigned char key[16];
    if (!len || len >= sizeof h)
        return 0;
    memcpy(h, v, len);
    h[len] = '\0';
    char *name = h, *port = NULL;
    if (h[0] == '[') {
        char *e = strchr(h, ']');
        if (!e || (e[1] && e[1] != ':'))
            return 0;
        port = e[1] ? e + 2 : NULL;
        *e = '\0';
        name = h + 1;
        char *zone = strchr(name, '%');
        if (zone)
            *zone = '\0';
        if (inet_pton(AF_INET6, name, key) != 1)
            return 0;
    } else {
        char *c = strchr(h, ':');
        if (c) {
            *c = '\0';
            port = c + 1;
        }
        if (!name[0])
            return 0;
    }
    /* the port is not compared: an SSH tunnel or a proxy changes it */
    for (const char *d = port; d && *d; d++)
        if (*d < '0' || *d > '9')
            return 0;
    int is_addr = h[0] == '[' || text_addr(name, key);
    if (is_addr && addr_is_local(fd, key))
        return 1;
    if (!is_addr) {
        lower_name(name);
        size_t ln = strlen(name);
        if (!ln)
            return 0;
        if (!strcmp(name, "localhost") || (ln > 10 && !strcmp(name + ln - 10, ".localhost")))
            return 1;
        /* the machine's name, its first label, and that under .local (mDNS) */
        char me[256];
        if (gethostname(me, sizeof me - 8) == 0) {
            me[sizeof me - 9] = '\0';
            lower_name(me);
            size_t first = strcspn(me, ".");
            if (me[0] && (!strcmp(name, me) || (strlen(name) == first && !strncmp(name, me, first)) ||
                          (!strncmp(name, me, first) && !strcmp(name + first, ".local"))))
                return 1;
        }
    }
    size_t nl = strlen(name);
    for (int i = 0; i < nrules; i++) {
        const http_host_rule *a = &rules[i];
        size_t al = strlen(a->name);
        if (!strcmp(a->name, "*"))
            return 1;
        if (a->is_addr ? is_addr && !memcmp(a->addr, key, 16)
                       : !is_addr && (a->suffix ? nl > al && !strcmp(name + nl - al, a->name) : !strcmp(a->name, name)))
            return 1;
    }
    return 0;
}
