/* settings_write.c - writing the effective configuration as a config file
 * (--dump-config) and the reference of every key (--help-config). */
#include "settings_keys.h"

#include <string.h>

/* --- writing and documentation ----------------------------------------- */

static void write_list(FILE *f, const pc_list_desc *L, const void *list, const char *indent);

static void write_keys(FILE *f, const pc_key *keys, int n, const void *base, const char *indent,
                       int skip_camera_only, int comments)
{
    char v[PC_URL_LEN + 64];
    for (int i = 0; i < n; i++) {
        const pc_key *k = &keys[i];
        if (skip_camera_only && (k->flags & PC_KF_CAMERA_ONLY))
            continue;
        if (k->type == PC_KT_GROUPS) {
            if (comments)
                fprintf(f, "%s# %s\n", indent, k->help);
            fprintf(f, "%s%s = ", indent, k->name);
            write_list(f, k->list, pc_key_cfield_(k, base), indent);
            fputs(";\n", f);
            continue;
        }
        pc_key_format_(k, base, v, sizeof v, 1);
        if (comments)
            fprintf(f, "%s%s = %s;%*s# %s\n", indent, k->name, v,
                    (int)(strlen(k->name) + strlen(v) < 36 ? 36 - strlen(k->name) - strlen(v) : 1), "",
                    k->help);
        else
            fprintf(f, "%s%s = %s;\n", indent, k->name, v);
    }
}

/* "( )", or "(\n  {\n    key = value;\n  },\n  ...\n)" at indent. */
static void write_list(FILE *f, const pc_list_desc *L, const void *list, const char *indent)
{
    int n = *(const int *)list;
    if (!n) {
        fputs("( )", f);
        return;
    }
    char in1[64], in2[64];
    snprintf(in1, sizeof in1, "%s  ", indent);
    snprintf(in2, sizeof in2, "%s    ", indent);
    fputs("(\n", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s{\n", in1);
        write_keys(f, L->keys, L->nkeys, pc_list_centry_(L, list, i), in2, 0, 0);
        fprintf(f, "%s}%s\n", in1, i + 1 < n ? "," : "");
    }
    fprintf(f, "%s)", indent);
}

int pc_settings_write(const pc_settings *s, FILE *f)
{
    fprintf(f, "# panocap configuration: every setting with its effective value\n"
               "# (panocap --dump-config; panocap --help-config explains each key).\n\n");
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        fprintf(f, "# %s\n", S->help);
        if (S->kind == PC_SEC_GROUP) {
            fprintf(f, "%s = {\n", S->name);
            write_keys(f, S->keys, S->nkeys, (const char *)s + S->off, "  ", 0, 1);
            if (strcmp(S->name, "capture") == 0) {
                fprintf(f, "  # defaults of every camera\n");
                write_keys(f, pc_camera_keys_, pc_ncamera_keys_, &s->capture.camera, "  ", 1, 1);
            }
            fprintf(f, "};\n\n");
        } else if (S->kind == PC_SEC_CAMERAS) {
            fprintf(f, "cameras = (\n");
            for (int c = 0; c < s->capture.cameras; c++) {
                fprintf(f, "  {\n");
                write_keys(f, S->keys, S->nkeys, &s->cameras[c], "    ", 0, 0);
                fprintf(f, "  }%s\n", c + 1 < s->capture.cameras ? "," : "");
            }
            fprintf(f, ");\n\n");
        } else {
            fprintf(f, "%s = ", S->name);
            write_list(f, S->list, (const char *)s + S->off, "");
            fprintf(f, ";\n\n");
        }
    }
    return ferror(f) ? -1 : 0;
}

static void print_key_ref(FILE *f, const char *indent, const pc_key *k)
{
    char allowed[256];
    pc_key_allowed_(k, allowed, sizeof allowed);
    const char *t = k->type == PC_KT_ENUM ? "name" : k->type == PC_KT_LIST ? "list" :
                    k->type == PC_KT_GROUPS ? "list of groups" : k->type == PC_KT_STRING ? "string" :
                    k->type == PC_KT_BOOL ? "bool" : k->type == PC_KT_DOUBLE ? "number" : "integer";
    int quoted = k->type == PC_KT_STRING || k->type == PC_KT_ENUM;
    fprintf(f, "%s%s (%s, default %s%s%s)%s\n%s    %s\n", indent, k->name, t, quoted ? "\"" : "",
            k->type == PC_KT_GROUPS ? "none" : k->def, quoted ? "\"" : "", k->live ? " [live on reload]" : "", indent,
            k->help);
    if (k->type != PC_KT_STRING)
        fprintf(f, "%s    allowed: %s\n", indent, allowed);
    if (k->type == PC_KT_GROUPS && k->list->keys == pc_output_keys_)
        fprintf(f, "%s    each entry: a URL string, or a group of the keys of an outputs entry\n", indent);
    else if (k->type == PC_KT_GROUPS) {
        char in[32];
        snprintf(in, sizeof in, "%s    ", indent);
        fprintf(f, "%s    each entry:\n", indent);
        for (int i = 0; i < k->list->nkeys; i++)
            print_key_ref(f, in, &k->list->keys[i]);
    }
}

void pc_settings_print_reference(FILE *f)
{
    fprintf(f, "panocap configuration file reference (libconfig syntax).\n"
               "Unknown keys are errors. Command-line options override the file.\n"
               "[live on reload] settings change on SIGHUP without a restart; others need one.\n\n");
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP)
            fprintf(f, "%s = { ... }: %s\n", S->name, S->help);
        else
            fprintf(f, "%s = ( ... ): %s\n", S->name, S->help);
        for (int i = 0; i < S->nkeys; i++)
            print_key_ref(f, "  ", &S->keys[i]);
        if (strcmp(S->name, "capture") == 0) {
            char only[256] = "";
            size_t o = 0;
            for (int i = 0, first = 1; i < pc_ncamera_keys_; i++)
                if (pc_camera_keys_[i].flags & PC_KF_CAMERA_ONLY) {
                    o += (size_t)snprintf(only + o, sizeof only - o, "%s%s", first ? "" : ", ", pc_camera_keys_[i].name);
                    first = 0;
                }
            fprintf(f, "  ...and every key of a camera entry except %s,\n  as the default of every camera.\n", only);
        }
        if (S->kind == PC_SEC_OUTPUTS)
            fprintf(f, "  [live on reload] the whole list; an entry may also be a plain URL string.\n");
        if (S->kind == PC_SEC_LIST)
            fprintf(f, "  [live on reload] the keys so marked, while the list of views (their count and names) "
                       "stays the same.\n");
        fprintf(f, "\n");
    }
}
