/* urlmask.c - output URLs with their secrets masked ("****") for logs,
 * status, metrics and the page: an RTMP stream key, a password in
 * user:password@, secret query values (passphrase=, key=, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "urlmask.h"

#define MASK "****"

static const char *const secret_params[] = {"passphrase", "password", "key", "token", "secret"};

static size_t scheme_len(const char *url)
{
    const char *p = strstr(url, "://");
    if (!p)
        return 0;
    for (const char *c = url; c < p; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '+' || *c == '-' || *c == '.'))
            return 0;
    return (size_t)(p - url);
}

int pc_url_is_rtmp(const char *url)
{
    size_t l = scheme_len(url);
    static const char *const s[] = {"rtmp", "rtmps", "rtmpt", "rtmpts"};
    for (size_t i = 0; l && i < sizeof s / sizeof s[0]; i++)
        if (strlen(s[i]) == l && !strncasecmp(url, s[i], l))
            return 1;
    return 0;
}

/* Appends at most len bytes of s (bounded by n). */
static void put(char *out, size_t n, size_t *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len && *o + 1 < n; i++)
        out[(*o)++] = s[i];
    if (n)
        out[*o < n ? *o : n - 1] = '\0';
}

/* Where the key starts in an RTMP URL (after "/app/"), or NULL. */
static const char *rtmp_key_at(const char *url)
{
    if (!pc_url_is_rtmp(url))
        return NULL;
    const char *auth = strstr(url, "://") + 3;
    const char *path = auth + strcspn(auth, "/?#");
    if (*path != '/')
        return NULL;
    const char *app_end = path + 1 + strcspn(path + 1, "/?#");
    if (app_end == path + 1 || *app_end == '\0' || *app_end == '#')
        return NULL;
    const char *key = app_end + 1;
    return *key ? key : NULL;
}

void pc_url_rtmp_key(const char *url, char *out, size_t n)
{
    const char *k = rtmp_key_at(url);
    snprintf(out, n, "%s", k ? k : "");
}

char *pc_url_mask(const char *url, char *out, size_t n)
{
    size_t o = 0;
    if (n)
        out[0] = '\0';
    size_t sl = scheme_len(url);
    if (!sl) {
        put(out, n, &o, url, strlen(url));
        return out;
    }
    const char *auth = url + sl + 3;
    const char *auth_end = auth + strcspn(auth, "/?#");
    put(out, n, &o, url, (size_t)(auth - url));
    /* user:password@host */
    const char *at = NULL;
    for (const char *c = auth; c < auth_end; c++)
        if (*c == '@')
            at = c;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon) {
        put(out, n, &o, auth, (size_t)(colon + 1 - auth));
        put(out, n, &o, MASK, strlen(MASK));
        put(out, n, &o, at, (size_t)(auth_end - at));
    } else {
        put(out, n, &o, auth, (size_t)(auth_end - auth));
    }
    const char *key = rtmp_key_at(url);
    if (key) {
        put(out, n, &o, auth_end, (size_t)(key - auth_end));
        put(out, n, &o, MASK, strlen(MASK));
        return out;
    }
    /* the query: secret values masked */
    const char *q = strchr(auth_end, '?');
    const char *frag = strchr(auth_end, '#');
    if (!q || (frag && frag < q)) {
        put(out, n, &o, auth_end, strlen(auth_end));
        return out;
    }
    put(out, n, &o, auth_end, (size_t)(q + 1 - auth_end));
    const char *p = q + 1;
    while (*p && *p != '#') {
        size_t len = strcspn(p, "&#");
        const char *eq = memchr(p, '=', len);
        int secret = 0;
        for (size_t i = 0; eq && i < sizeof secret_params / sizeof secret_params[0]; i++)
            secret |= strlen(secret_params[i]) == (size_t)(eq - p) &&
                       !strncasecmp(p, secret_params[i], (size_t)(eq - p));
        if (secret) {
            put(out, n, &o, p, (size_t)(eq + 1 - p));
            put(out, n, &o, MASK, strlen(MASK));
        } else {
            put(out, n, &o, p, len);
        }
        p += len;
        if (*p == '&') {
            put(out, n, &o, "&", 1);
            p++;
        }
    }
    put(out, n, &o, p, strlen(p));
    return out;
}

int pc_url_has_secret(const char *url)
{
    char m[2048];
    pc_url_mask(url, m, sizeof m);
    return strcmp(m, url) != 0;
}

/* Every copy of what in text replaced by with (bounded by n). */
static void replace_all(char *text, size_t n, const char *what, const char *with)
{
    size_t wl = strlen(what), rl = strlen(with);
    if (!wl || !strstr(text, what))
        return;
    char *buf = malloc(n);
    if (!buf)
        return;
    size_t o = 0;
    const char *p = text, *hit;
    while ((hit = strstr(p, what))) {
        put(buf, n, &o, p, (size_t)(hit - p));
        put(buf, n, &o, with, rl);
        p = hit + wl;
    }
    put(buf, n, &o, p, strlen(p));
    memcpy(text, buf, o + 1 < n ? o + 1 : n);
    text[n - 1] = '\0';
    free(buf);
}

void pc_url_redact(char *text, size_t n, const char *url)
{
    if (!n || !url || !url[0] || !pc_url_has_secret(url))
        return;
    char m[2048];
    pc_url_mask(url, m, sizeof m);
    replace_all(text, n, url, m);
    const char *k = rtmp_key_at(url);
    if (k && strlen(k) >= 6)
        replace_all(text, n, k, MASK);
}
