/* settings_reload.c - what a reload changes: the diff between two settings
 * (each change live or needing a restart), applying the live ones, and the
 * one-line description logged on SIGHUP.
 *
 * Live beyond the key table's flags: the outputs as a whole; panorama.rig
 * between two rigs (a new path, or the same path rewritten: its digest),
 * not from or to none; a virtual camera's live keys while the list of
 * views (count and names) stays, since each view is an encoder. */
#include "settings_keys.h"
#include "urlmask.h"

#include <string.h>

static int field_equal(const pc_key *k, const void *a, const void *b);

/* Two lists of groups with the same entries (lines and bookkeeping aside). */
static int list_equal(const pc_list_desc *L, const void *a, const void *b)
{
    int n = *(const int *)a;
    if (n != *(const int *)b)
        return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < L->nkeys; j++)
            if (!field_equal(&L->keys[j], pc_list_centry_(L, a, i), pc_list_centry_(L, b, i)))
                return 0;
    return 1;
}

static int field_equal(const pc_key *k, const void *a, const void *b)
{
    const void *pa = pc_key_cfield_(k, a), *pb = pc_key_cfield_(k, b);
    switch (k->type) {
    case PC_KT_STRING: return strcmp(pa, pb) == 0;
    case PC_KT_DOUBLE: return *(const double *)pa == *(const double *)pb;
    case PC_KT_LIST: {
        const pc_name_list *la = pa, *lb = pb;
        if (la->count != lb->count)
            return 0;
        for (int i = 0; i < la->count; i++)
            if (strcmp(la->item[i], lb->item[i]) != 0)
                return 0;
        return 1;
    }
    case PC_KT_GROUPS: return list_equal(k->list, pa, pb);
    default: return memcmp(pa, pb, pc_key_field_size_(k)) == 0;
    }
}

static void diff_add(pc_settings_delta *d, const char *key, const char *before, const char *after, int live,
                     unsigned bit)
{
    d->changes++;
    if (live)
        d->live |= bit;
    else
        d->restart++;
    if (d->count >= PC_DIFF_MAX)
        return;
    pc_settings_change *c = &d->item[d->count++];
    snprintf(c->key, sizeof c->key, "%s", key);
    snprintf(c->before, sizeof c->before, "%.*s", (int)sizeof c->before - 1, before); /* long lists: shortened */
    snprintf(c->after, sizeof c->after, "%.*s", (int)sizeof c->after - 1, after);
    c->live = live;
}

static void outputs_text(const pc_settings *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->output_count && o < len; i++)
    {
        char shown[PC_URL_LEN]; /* a reload's message never shows a stream key */
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "",
                              pc_url_mask(s->outputs[i].url, shown, sizeof shown));
    }
}

/* How a changed key applies: its table flag, except the rig (live between
 * two rigs only: adding or removing one changes what the outputs carry). */
static unsigned key_live(const pc_key *k, const void *ba, const void *bb)
{
    if (k->live == PC_LIVE_RIG && (!*(const char *)pc_key_cfield_(k, ba) || !*(const char *)pc_key_cfield_(k, bb)))
        return 0;
    return k->live;
}

/* The views' list: their names, in order ("main 1920x1080, wide 1280x720"). */
static void vcams_text(const pc_settings *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->vcam_count && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", s->vcams[i].name);
    if (!s->vcam_count)
        snprintf(buf, len, "none");
}

/* The same views, by count and names in order: their live keys can apply. */
static int same_vcams(const pc_settings *a, const pc_settings *b)
{
    if (a->vcam_count != b->vcam_count)
        return 0;
    for (int i = 0; i < a->vcam_count; i++)
        if (strcmp(a->vcams[i].name, b->vcams[i].name) != 0)
            return 0;
    return 1;
}

/* The changed keys of one group or entry, named prefix.key. */
static void diff_keys(pc_settings_delta *d, const char *prefix, const pc_key *keys, int n, const void *ba,
                      const void *bb)
{
    char va[256], vb[256], key[96];
    for (int i = 0; i < n; i++) {
        const pc_key *k = &keys[i];
        if (field_equal(k, ba, bb))
            continue;
        pc_key_format_(k, ba, va, sizeof va, 0);
        pc_key_format_(k, bb, vb, sizeof vb, 0);
        snprintf(key, sizeof key, "%s.%s", prefix, k->name);
        unsigned live = key_live(k, ba, bb);
        diff_add(d, key, va, vb, live != 0, live);
    }
}

int pc_settings_diff(const pc_settings *a, const pc_settings *b, pc_settings_delta *d)
{
    char va[256], vb[PC_PATH_LEN + 32], key[96];
    memset(d, 0, sizeof *d);
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP) {
            diff_keys(d, S->name, S->keys, S->nkeys, (const char *)a + S->off, (const char *)b + S->off);
            /* the same .pto, rewritten (recalibrated): swapped like another one */
            if (strcmp(S->name, "panorama") == 0 && a->panorama.rig[0] &&
                strcmp(a->panorama.rig, b->panorama.rig) == 0 && a->panorama.rig_digest != b->panorama.rig_digest) {
                snprintf(vb, sizeof vb, "%s (file rewritten)", b->panorama.rig);
                diff_add(d, "panorama.rig", a->panorama.rig, vb, 1, PC_LIVE_RIG);
            }
        } else if (S->kind == PC_SEC_CAMERAS) {
            int n = a->capture.cameras < b->capture.cameras ? a->capture.cameras : b->capture.cameras;
            for (int c = 0; c < n; c++) {
                snprintf(key, sizeof key, "cameras[%d]", c);
                diff_keys(d, key, S->keys, S->nkeys, &a->cameras[c], &b->cameras[c]);
            }
        } else if (S->kind == PC_SEC_OUTPUTS) {
            if (!list_equal(S->list, (const char *)a + S->off, (const char *)b + S->off)) {
                outputs_text(a, va, sizeof va);
                outputs_text(b, vb, sizeof vb);
                diff_add(d, "outputs", va, vb, 1, PC_LIVE_OUTPUTS);
            }
        } else if (!same_vcams(a, b)) { /* virtual_cameras: views added, removed, renamed or reordered */
            vcams_text(a, va, sizeof va);
            vcams_text(b, vb, sizeof vb);
            diff_add(d, "virtual_cameras", va, vb, 0, 0);
        } else {
            for (int v = 0; v < a->vcam_count; v++) {
                snprintf(key, sizeof key, "virtual_cameras[%d]", v);
                diff_keys(d, key, S->keys, S->nkeys, &a->vcams[v], &b->vcams[v]);
            }
        }
    }
    return d->changes;
}

static void copy_live_keys(const pc_key *keys, int n, void *cur, const void *next)
{
    for (int i = 0; i < n; i++)
        if (keys[i].live)
            memcpy(pc_key_field_(&keys[i], cur), pc_key_cfield_(&keys[i], next), pc_key_field_size_(&keys[i]));
}

void pc_settings_apply_live(pc_settings *cur, const pc_settings *next)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP) {
            void *bc = (char *)cur + S->off;
            const void *bn = (const char *)next + S->off;
            for (int i = 0; i < S->nkeys; i++)
                if (key_live(&S->keys[i], bc, bn))
                    memcpy(pc_key_field_(&S->keys[i], bc), pc_key_cfield_(&S->keys[i], bn),
                           pc_key_field_size_(&S->keys[i]));
        } else if (S->kind == PC_SEC_CAMERAS) {
            /* live camera keys (colour) of the cameras both have */
            int n = cur->capture.cameras < next->capture.cameras ? cur->capture.cameras : next->capture.cameras;
            for (int c = 0; c < n; c++)
                copy_live_keys(S->keys, S->nkeys, &cur->cameras[c], &next->cameras[c]);
        } else if (S->kind == PC_SEC_OUTPUTS) {
            cur->output_count = next->output_count;
            memcpy(cur->outputs, next->outputs, sizeof cur->outputs);
        } else if (same_vcams(cur, next)) {
            for (int v = 0; v < cur->vcam_count; v++)
                copy_live_keys(S->keys, S->nkeys, &cur->vcams[v], &next->vcams[v]);
        }
    }
    /* the digest goes with the rig it describes */
    if (strcmp(cur->panorama.rig, next->panorama.rig) == 0)
        cur->panorama.rig_digest = next->panorama.rig_digest;
}

void pc_settings_diff_describe(const pc_settings_delta *d, char *buf, size_t len)
{
    size_t o = 0;
    if (!len)
        return;
    buf[0] = '\0';
    if (d->changes == 0) {
        snprintf(buf, len, "no changes");
        return;
    }
    for (int i = 0; i < d->count && o < len; i++) {
        const pc_settings_change *c = &d->item[i];
        o += (size_t)snprintf(buf + o, len - o, "%s%s %s -> %s (%s)", i ? "; " : "", c->key,
                              c->before[0] ? c->before : "\"\"", c->after[0] ? c->after : "\"\"",
                              c->live ? "live" : "needs restart");
    }
    if (d->changes > d->count && o < len)
        snprintf(buf + o, len - o, "; and %d more", d->changes - d->count);
}
