/* netaddr.h - "host:port" listen addresses (numeric IPv4, or [IPv6] in
 * brackets), parsed and checked in one place: the settings validate
 * daemon.metrics_listen with it and the HTTP server binds what it gives;
 * and the names the web page may be asked for under
 * (daemon.http_allowed_hosts), checked by the settings and matched by the
 * HTTP server. */
#ifndef PANOCAP_NETADDR_H
#define PANOCAP_NETADDR_H

#include <stddef.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "127.0.0.1:9464", "0.0.0.0:9464", "[::1]:9464", "[::]:9464". Port
 * 1..65535 in digits; no host names (a listen address must not depend on
 * DNS at start). Returns 0, or -1 with the reason in err. */
int pc_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err, size_t n);

/* One entry of daemon.http_allowed_hosts: a host name ("panocap.example.org":
 * letters, digits, '-' and '_' in dot-separated labels), "*.example.org"
 * (any name ending in .example.org), "*" (any Host at all), or an address
 * (192.0.2.7, 2001:db8::7 or [2001:db8::7]); no port, no scheme. Returns 0,
 * or -1 with the reason in err. */
int pc_host_pattern_ok(const char *text, char *err, size_t n);

#ifdef __cplusplus
}
#endif
#endif
