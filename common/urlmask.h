/* urlmask.h - output URLs as they may be shown: the secrets in them (an
 * RTMP stream key, a password in user:password@, an SRT passphrase in the
 * query) replaced by "****", for logs, status, metrics and the page. */
#ifndef PC_URLMASK_H
#define PC_URLMASK_H

#include <stddef.h>

/* The URL with its secrets masked (a plain path or "null": unchanged):
 *   rtmp://host:1935/app/KEY?x  ->  rtmp://host:1935/app/ followed by ****
 *   srt://h:9000?passphrase=P   ->  srt://h:9000?passphrase=****
 *   udp://user:pw@h:5000        ->  udp://user:****@h:5000
 * Returns out. */
char *pc_url_mask(const char *url, char *out, size_t n);

/* 1 when url has something pc_url_mask hides. */
int pc_url_has_secret(const char *url);

/* In text (a message of at most n bytes), every copy of url replaced by its
 * masked form, and every copy of its RTMP stream key (when 6 characters or
 * longer: shorter ones would hit ordinary words) by "****". */
void pc_url_redact(char *text, size_t n, const char *url);

/* The RTMP stream key of url (the path after the application), or "" when
 * url is not rtmp/rtmps/rtmpt/rtmpts or has none. */
void pc_url_rtmp_key(const char *url, char *out, size_t n);

/* 1 for rtmp://, rtmps://, rtmpt://, rtmpts:// (any case). */
int pc_url_is_rtmp(const char *url);

#endif
