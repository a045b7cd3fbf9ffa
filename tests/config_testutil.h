/* config_testutil.h - shared helpers of the configuration tests
 * (test_config.c, test_config_numbers.c, test_config_rig.c): files written
 * into the test's temp dir, and finding a diagnostic by the text it
 * prints. Header-only, static; config_tmpdir is the binary's one temp dir
 * (config_tmpdir_make, config_tmpdir_remove). */
#ifndef PANOCAP_CONFIG_TESTUTIL_H
#define PANOCAP_CONFIG_TESTUTIL_H

#include "settings.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char config_tmpdir[64];

static inline int config_tmpdir_make(const char *prefix)
{
    snprintf(config_tmpdir, sizeof config_tmpdir, "/tmp/%s-XXXXXX", prefix);
    if (!mkdtemp(config_tmpdir)) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

static inline void config_tmpdir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", config_tmpdir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", config_tmpdir);
}

/* Writes text to a new file in the temp dir; returns its path (8 static
 * slots, reused in turn). */
static inline const char *write_conf(const char *name, const char *text)
{
    static char paths[8][160];
    static int slot;
    char *p = paths[slot++ % 8];
    snprintf(p, 160, "%s/%s", config_tmpdir, name);
    FILE *f = fopen(p, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    fclose(f);
    return p;
}

/* The first diag item whose formatted text contains every needle given. */
static inline const pc_diag_item *find_item(const pc_diag *d, const char *a, const char *b, const char *c)
{
    char line[1024];
    for (int i = 0; i < d->count; i++) {
        pc_diag_format(&d->item[i], line, sizeof line);
        if ((!a || strstr(line, a)) && (!b || strstr(line, b)) && (!c || strstr(line, c)))
            return &d->item[i];
    }
    return NULL;
}

static inline void dump(const pc_diag *d)
{
    char line[1024];
    for (int i = 0; i < d->count; i++) {
        pc_diag_format(&d->item[i], line, sizeof line);
        tap_diag("  %s", line);
    }
}

#endif
