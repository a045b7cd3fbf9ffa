/* settings_reload.c - what a reload changes: the diff between two settings
 * (each change live or needing a restart), applying the live ones, and the
 * one-line description logged on SIGHUP. */
#include "settings_keys.h"

#include <string.h>

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
    snprintf(c->before, sizeof c->before, "%s", before);
    snprintf(c->after, sizeof c->after, "%s", after);
    c->live = live;
}

static void outputs_text(const pc_settings *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->output_count && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", s->outputs[i].url);
}

int pc_settings_diff(const pc_settings *a, const pc_settings *b, pc_settings_delta *d)
{
    char va[256], vb[256], key[96];
    memset(d, 0, sizeof *d);
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP) {
            const void *ba = (const char *)a + S->off, *bb = (const char *)b + S->off;
            for (int i = 0; i < S->nkeys; i++) {
                const pc_key *k = &S->keys[i];
                if (field_equal(k, ba, bb))
                    continue;
                pc_key_format_(k, ba, va, sizeof va, 0);
                pc_key_format_(k, bb, vb, sizeof vb, 0);
                snprintf(key, sizeof key, "%s.%s", S->name, k->name);
                diff_add(d, key, va, vb, k->live != 0, k->live);
            }
        } else if (S->kind == PC_SEC_CAMERAS) {
            int n = a->capture.cameras < b->capture.cameras ? a->capture.cameras : b->capture.cameras;
            for (int c = 0; c < n; c++)
                for (int i = 0; i < S->nkeys; i++) {
                    const pc_key *k = &S->keys[i];
                    if (field_equal(k, &a->cameras[c], &b->cameras[c]))
                        continue;
                    pc_key_format_(k, &a->cameras[c], va, sizeof va, 0);
                    pc_key_format_(k, &b->cameras[c], vb, sizeof vb, 0);
                    snprintf(key, sizeof key, "cameras[%d].%s", c, k->name);
                    diff_add(d, key, va, vb, k->live != 0, k->live);
                }
        } else {
            int same = a->output_count == b->output_count;
            for (int o = 0; same && o < a->output_count; o++)
                for (int i = 0; i < S->nkeys; i++)
                    same &= field_equal(&S->keys[i], &a->outputs[o], &b->outputs[o]);
            if (!same) {
                outputs_text(a, va, sizeof va);
                outputs_text(b, vb, sizeof vb);
                diff_add(d, "outputs", va, vb, 1, PC_LIVE_OUTPUTS);
            }
        }
    }
    return d->changes;
}

void pc_settings_apply_live(pc_settings *cur, const pc_settings *next)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP) {
            for (int i = 0; i < S->nkeys; i++)
                if (S->keys[i].live)
                    memcpy(pc_key_field_(&S->keys[i], (char *)cur + S->off),
                           pc_key_cfield_(&S->keys[i], (const char *)next + S->off), pc_key_field_size_(&S->keys[i]));
        } else if (S->kind == PC_SEC_CAMERAS) {
            /* live camera keys (colour) of the cameras both have */
            int n = cur->capture.cameras < next->capture.cameras ? cur->capture.cameras : next->capture.cameras;
            for (int c = 0; c < n; c++)
                for (int i = 0; i < S->nkeys; i++)
                    if (S->keys[i].live)
                        memcpy(pc_key_field_(&S->keys[i], &cur->cameras[c]),
                               pc_key_cfield_(&S->keys[i], &next->cameras[c]), pc_key_field_size_(&S->keys[i]));
        } else if (S->kind == PC_SEC_OUTPUTS) {
            cur->output_count = next->output_count;
            memcpy(cur->outputs, next->outputs, sizeof cur->outputs);
        }
    }
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
