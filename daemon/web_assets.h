/* web_assets.h - the operator page's files (daemon/web/: HTML, CSS, JS,
 * icon), embedded into the binary at build time by daemon/web/embed.py as
 * the generated web_assets.c: nothing is read from disk or fetched at run
 * time. */
#ifndef PANOCAP_WEB_ASSETS_H
#define PANOCAP_WEB_ASSETS_H

#include <stddef.h>

typedef struct pc_web_asset {
    const char *path;          /* URL path: "/", "/panocap.js" ... */
    const char *type;          /* Content-Type */
    const unsigned char *data;
    size_t size;
    const char *etag;          /* "\"<hash>\"" of the content */
} pc_web_asset;

/* The asset served at path, or NULL. */
const pc_web_asset *pc_web_asset_find(const char *path);

#endif
