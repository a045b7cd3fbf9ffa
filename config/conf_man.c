/* conf_man.c - the key table (settings_keys.h) written as the reference
 * part of panocap.conf(5) and as the key list of the bash completion, so
 * both stay what the parser accepts. */
#include "conf_man.h"

#include <string.h>

#include "roff.h"
#include "settings_keys.h"

static const char *type_name(const pc_key *k)
{
    return k->type == PC_KT_ENUM ? "name" : k->type == PC_KT_LIST ? "list" : k->type == PC_KT_GROUPS ? "list of groups" :
           k->type == PC_KT_STRING ? "string" : k->type == PC_KT_BOOL ? "bool" : k->type == PC_KT_DOUBLE ? "number" :
           "integer";
}

static void man_key(FILE *f, const pc_key *k)
{
    char allowed[256];
    int quoted = k->type == PC_KT_STRING || k->type == PC_KT_ENUM;
    fputs(".TP\n.B ", f);
    pc_roff_text(f, k->name);
    fputs("\n(", f);
    pc_roff_text(f, type_name(k));
    fputs(", default ", f);
    if (quoted)
        fputs("\"", f);
    pc_roff_text(f, k->type == PC_KT_GROUPS ? "none" : k->def);
    if (quoted)
        fputs("\"", f);
    fputs(k->live ? "; live on reload)\n" : ")\n", f);
    pc_roff_text(f, k->help);
    fputs(".\n", f);
    if (k->type != PC_KT_STRING) {
        pc_key_allowed_(k, allowed, sizeof allowed);
        fputs("Allowed: ", f);
        pc_roff_text(f, allowed);
        fputs(".\n", f);
    }
    if (k->type == PC_KT_GROUPS && k->list->keys == pc_output_keys_) {
        fputs("Each entry: a URL string, or a group of the keys of an entry of\n.BR outputs .\n", f);
    } else if (k->type == PC_KT_GROUPS) {
        fputs("Each entry is a group of:\n.RS\n", f);
        for (int i = 0; i < k->list->nkeys; i++)
            man_key(f, &k->list->keys[i]);
        fputs(".RE\n", f);
    }
}

void pc_settings_write_man(FILE *f)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        fprintf(f, ".SS \"%s = %s\"\n", S->name, S->kind == PC_SEC_GROUP ? "{ ... }" : "( ... )");
        pc_roff_text(f, S->help);
        fputs(".\n", f);
        if (S->kind == PC_SEC_OUTPUTS)
            fputs("A list of groups (or plain URL strings); the whole list changes live on reload.\n", f);
        if (S->kind == PC_SEC_LIST)
            fputs("A list of groups; the keys marked live change on reload while the list of views (their count "
                  "and names) stays the same.\n", f);
        for (int i = 0; i < S->nkeys; i++)
            man_key(f, &S->keys[i]);
        if (strcmp(S->name, "capture") == 0) {
            fputs(".PP\nEvery key of a camera entry except", f);
            for (int i = 0, first = 1; i < pc_ncamera_keys_; i++)
                if (pc_camera_keys_[i].flags & PC_KF_CAMERA_ONLY) {
                    fprintf(f, "%s\n.B ", first ? "" : ",");
                    pc_roff_text(f, pc_camera_keys_[i].name);
                    first = 0;
                }
            fputs("\nmay also be written here, as the default of every camera.\n", f);
        }
    }
}

void pc_settings_write_set_keys(FILE *f)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        char prefix[64];
        snprintf(prefix, sizeof prefix, S->kind == PC_SEC_GROUP ? "%s" : "%s[0]", S->name);
        for (int i = 0; i < S->nkeys; i++) /* lists of groups other than URLs exist in files only */
            if (S->keys[i].type != PC_KT_GROUPS || S->keys[i].list->strings)
                fprintf(f, "%s.%s\n", prefix, S->keys[i].name);
        if (strcmp(S->name, "capture") == 0)
            for (int i = 0; i < pc_ncamera_keys_; i++)
                if (!(pc_camera_keys_[i].flags & PC_KF_CAMERA_ONLY))
                    fprintf(f, "capture.%s\n", pc_camera_keys_[i].name);
    }
}

void pc_settings_write_key_values(FILE *f, const char *key)
{
    char sec[64];
    const char *dot = strchr(key, '.');
    if (!dot || (size_t)(dot - key) >= sizeof sec)
        return;
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - key), key);
    const pc_section *S = pc_section_find_(sec);
    if (!S)
        return;
    const pc_key *k = pc_key_find_(S->keys, S->nkeys, dot + 1);
    if (!k && strcmp(sec, "capture") == 0)
        k = pc_key_find_(pc_camera_keys_, pc_ncamera_keys_, dot + 1);
    if (k && k->type == PC_KT_ENUM && k->en)
        for (int i = 0; i < k->en->count(); i++)
            fprintf(f, "%s\n", k->en->name(i));
    else if (k && k->type == PC_KT_BOOL)
        fputs("true\nfalse\n", f);
}
