/* netaddr.c - listen address parsing and host name patterns (see netaddr.h). */
#include "netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

int pc_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err, size_t n)
{
    char host[64];
    const char *port;
    memset(ss, 0, sizeof *ss);
    if (!text || !text[0]) {
        snprintf(err, n, "empty address (write HOST:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)");
        return -1;
    }
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host) {
            snprintf(err, n, "\"%s\": an IPv6 address is written [ADDRESS]:PORT, e.g. [::1]:9464", text);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(close - text - 1), text + 1);
        port = close + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (!colon || colon == text) {
            snprintf(err, n, "\"%s\": no %s (write HOST:PORT, e.g. 127.0.0.1:9464)", text,
                     colon ? "host" : "port");
            return -1;
        }
        if (memchr(text, ':', (size_t)(colon - text))) {
            snprintf(err, n, "\"%s\": an IPv6 address needs brackets, e.g. [::1]:9464", text);
            return -1;
        }
        if ((size_t)(colon - text) >= sizeof host) {
            snprintf(err, n, "\"%s\": host too long", text);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - text), text);
        port = colon + 1;
    }
    long p = 0;
    const char *d = port;
    for (; *d >= '0' && *d <= '9' && p <= 65535; d++)
        p = p * 10 + (*d - '0');
    if (d == port || *d || p < 1 || p > 65535) {
        snprintf(err, n, "\"%s\": port \"%s\" is not a number in 1..65535", text, port);
        return -1;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)p);
        *len = sizeof *a4;
        return 0;
    }
    if (text[0] == '[' && inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)p);
        *len = sizeof *a6;
        return 0;
    }
    snprintf(err, n, "\"%s\": \"%s\" is not a numeric IPv4 address or a bracketed IPv6 one "
             "(host names are not resolved)", text, host);
    return -1;
}

int pc_host_pattern_ok(const char *text, char *err, size_t n)
{
    unsigned char a[16];
    char v6[64];
    size_t len = text ? strlen(text) : 0;
    if (!len) {
        snprintf(err, n, "an empty name");
        return -1;
    }
    if (!strcmp(text, "*"))
        return 0;
    if (inet_pton(AF_INET, text, a) == 1 || inet_pton(AF_INET6, text, a) == 1)
        return 0;
    if (text[0] == '[' && text[len - 1] == ']' && len - 2 < sizeof v6) {
        snprintf(v6, sizeof v6, "%.*s", (int)(len - 2), text + 1);
        if (inet_pton(AF_INET6, v6, a) == 1)
            return 0;
    }
    const char *name = strncmp(text, "*.", 2) == 0 ? text + 2 : text;
    if (strchr(text, ':') || strchr(text, '/')) {
        snprintf(err, n, "\"%s\" is not a host name or an address: give the name alone, without a scheme or a "
                 "port (e.g. panocap.example.org)", text);
        return -1;
    }
    size_t label = 0;
    for (const char *c = name;; c++) {
        if (*c == '.' || !*c) {
            if (!label && (*c || c == name)) {
                snprintf(err, n, "\"%s\": an empty label (two dots in a row, or a dot at the start)", text);
                return -1;
            }
            if (!*c)
                break;
            label = 0;
            continue;
        }
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
              *c == '_')) {
            snprintf(err, n, "\"%s\": '%c' is not allowed in a host name (letters, digits, '-', '_' and dots; "
                     "\"*.\" at the start for every name under a domain)", text, *c);
            return -1;
        }
        label++;
    }
    return 0;
}
