/* settings_file.c - pc_settings_load: reads a libconfig file into the
 * settings by walking EVERY setting in it and matching each against the
 * key table, so that unknown keys (typos), wrong types and out-of-range
 * values are all reported, each with file, line, key and what is allowed.
 * Built only when libconfig is found; settings_nofile.c stands in. */
#include "settings_keys.h"
#include "settings_literals.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct loader {
    pc_settings *s;
    pc_diag *d;
    const char *path;
    int errors;
} loader;

static const char *where(const loader *L, const config_setting_t *st)
{
    const char *f = config_setting_source_file(st);
    return f ? f : L->path;
}

static void error_at(loader *L, const config_setting_t *st, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void error_at(loader *L, const config_setting_t *st, const char *key, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    L->errors++;
    pc_diag_add(L->d, PC_DIAG_ERROR, where(L, st), st ? config_setting_source_line(st) : 0, key, "%s", msg);
}

/* "a string (\"fifty\")", "a float (2.5)"... for wrong-type messages;
 * numbers as written. */
static void describe(const config_setting_t *st, char *buf, size_t len)
{
    const pc_literal *lit = pc_literal_of(st);
    switch (config_setting_type(st)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        if (lit)
            snprintf(buf, len, "an integer (%s)", lit->text);
        else
            snprintf(buf, len, "an integer (%lld)", (long long)config_setting_get_int64(st));
        break;
    case CONFIG_TYPE_FLOAT:
        if (lit)
            snprintf(buf, len, "a float (%s)", lit->text);
        else
            snprintf(buf, len, "a float (%g)", config_setting_get_float(st));
        break;
    case CONFIG_TYPE_BOOL:
        snprintf(buf, len, "a boolean (%s)", config_setting_get_bool(st) ? "true" : "false");
        break;
    case CONFIG_TYPE_STRING: snprintf(buf, len, "a string (\"%.60s\")", config_setting_get_string(st)); break;
    case CONFIG_TYPE_GROUP: snprintf(buf, len, "a group { ... }"); break;
    case CONFIG_TYPE_ARRAY: snprintf(buf, len, "an array [ ... ]"); break;
    case CONFIG_TYPE_LIST: snprintf(buf, len, "a list ( ... )"); break;
    default: snprintf(buf, len, "an unknown type"); break;
    }
}

static int is_num(const pc_key *k)
{
    return k->type == PC_KT_INT || k->type == PC_KT_INT64 || k->type == PC_KT_DOUBLE;
}

/* A string-of-numbers key given as an array or list of numbers
 * ([2.0, 1.0, 1.5]): stored as the text "2.0, 1.0, 1.5" (each number as
 * written), which the key's own parser checks like the string form. */
static int load_numbers(const pc_key *k, const config_setting_t *st, void *base, char *err, size_t n)
{
    char text[1024] = "", got[96];
    size_t off = 0;
    for (int i = 0; i < config_setting_length(st); i++) {
        const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
        const pc_literal *lit = pc_literal_of(e);
        char num[64];
        int type = config_setting_type(e);
        if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64)
            snprintf(num, sizeof num, "%lld", lit ? lit->value : (long long)config_setting_get_int64(e));
        else if (type == CONFIG_TYPE_FLOAT && lit)
            snprintf(num, sizeof num, "%s", lit->text);
        else if (type == CONFIG_TYPE_FLOAT)
            snprintf(num, sizeof num, "%.17g", config_setting_get_float(e));
        else {
            describe(e, got, sizeof got);
            snprintf(err, n, "entry %d: expected a number, got %s", i, got);
            return -1;
        }
        if (lit && lit->overflow) {
            snprintf(err, n, "entry %d: %s is too large for any integer", i, lit->text);
            return -1;
        }
        off += (size_t)snprintf(text + off, sizeof text - off, "%s%s", i ? ", " : "", num);
        if (off >= sizeof text) {
            snprintf(err, n, "%d numbers: too many", config_setting_length(st));
            return -1;
        }
    }
    return pc_key_parse_(k, text, base, err, n);
}

/* Stores one scalar setting; 0 on success. */
static int load_value(loader *L, const pc_key *k, const config_setting_t *st, void *base, const char *key)
{
    char err[512], got[96];
    int rc = -2; /* -2: wrong type */
    switch (config_setting_type(st)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        /* the value as written (settings_literals.h), never libconfig's
         * 32-bit reading of it */
        if (is_num(k)) {
            const pc_literal *lit = pc_literal_of(st);
            if (lit && lit->overflow) {
                char allowed[160];
                pc_key_allowed_(k, allowed, sizeof allowed);
                snprintf(err, sizeof err, "%s is out of range (too large for any integer); allowed: %s",
                         lit->text, allowed);
                rc = -1;
            } else {
                rc = pc_key_set_int_(k, lit ? lit->value : (long long)config_setting_get_int64(st), base, err,
                                     sizeof err);
            }
        }
        break;
    case CONFIG_TYPE_FLOAT:
        /* 2040.0 is fine for an integer key, 2040.5 is a type error. */
        if (k->type == PC_KT_DOUBLE ||
            (is_num(k) && config_setting_get_float(st) == floor(config_setting_get_float(st))))
            rc = pc_key_set_double_(k, config_setting_get_float(st), base, err, sizeof err);
        break;
    case CONFIG_TYPE_BOOL:
        if (k->type == PC_KT_BOOL) {
            *(int *)((char *)base + k->off) = config_setting_get_bool(st) ? 1 : 0;
            rc = 0;
        }
        break;
    case CONFIG_TYPE_STRING:
        if (k->type == PC_KT_STRING || k->type == PC_KT_ENUM || (is_num(k) && (k->flags & PC_KF_SI)))
            rc = pc_key_parse_(k, config_setting_get_string(st), base, err, sizeof err);
        break;
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST:
        if (k->type == PC_KT_STRING && (k->flags & PC_KF_NUMBERS))
            rc = load_numbers(k, st, base, err, sizeof err);
        else if (k->type == PC_KT_LIST) {
            pc_name_list l;
            memset(&l, 0, sizeof l);
            int n = config_setting_length(st);
            rc = 0;
            if (n > PC_MAX_FALLBACKS) {
                snprintf(err, sizeof err, "%d names; at most %d", n, PC_MAX_FALLBACKS);
                rc = -1;
            }
            for (int i = 0; rc == 0 && i < n; i++) {
                const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
                const char *v = config_setting_get_string(e);
                if (!v) {
                    describe(e, got, sizeof got);
                    snprintf(err, sizeof err, "entry %d: expected a string, got %s", i, got);
                    rc = -1;
                } else if (strlen(v) >= PC_NAME_LEN) {
                    snprintf(err, sizeof err, "entry %d: \"%.40s\" is too long (at most %d characters)", i, v,
                             PC_NAME_LEN - 1);
                    rc = -1;
                } else {
                    snprintf(l.item[l.count++], PC_NAME_LEN, "%s", v);
                }
            }
            if (rc == 0)
                *(pc_name_list *)((char *)base + k->off) = l;
        }
        break;
    default: break;
    }
    if (rc == -2) {
        describe(st, got, sizeof got);
        char allowed[256] = "";
        if (k->type == PC_KT_ENUM || is_num(k)) {
            char a[224];
            pc_key_allowed_(k, a, sizeof a);
            snprintf(allowed, sizeof allowed, "; allowed: %s", a);
        }
        error_at(L, st, key, "expected %s, got %s%s", pc_key_type_name_(k), got, allowed);
        return -1;
    }
    if (rc != 0) {
        error_at(L, st, key, "%s", err);
        return -1;
    }
    return 0;
}

static void unknown_key(loader *L, const config_setting_t *e, const char *key, const char *name,
                        const pc_key *keys, int n, int with_camera, const char *what)
{
    char sug[64], list[600];
    pc_key_suggest_(name, keys, n, with_camera, sug, sizeof sug);
    pc_key_list_(keys, n, 0, list, sizeof list);
    if (with_camera) {
        size_t off = strlen(list);
        snprintf(list + off, sizeof list - off, "; camera defaults: ");
        off = strlen(list);
        pc_key_list_(pc_camera_keys_, pc_ncamera_keys_, 1, list + off, sizeof list - off);
    }
    error_at(L, e, key, "unknown setting; %s%s takes: %s", sug, what, list);
}

static int *section_line(pc_settings *s, const char *name)
{
    if (strcmp(name, "capture") == 0)
        return &s->capture.line;
    if (strcmp(name, "debayer") == 0)
        return &s->debayer.line;
    if (strcmp(name, "encode") == 0)
        return &s->encode.line;
    if (strcmp(name, "daemon") == 0)
        return &s->daemon.line;
    if (strcmp(name, "panorama") == 0)
        return &s->panorama.line;
    return NULL;
}

static void load_list(loader *L, const pc_list_desc *D, const config_setting_t *l, void *list, const char *name);

/* One key of a group or an entry: a value, or a list of groups. */
static int load_key(loader *L, const pc_key *k, const config_setting_t *e, void *base, const char *key)
{
    if (k->type != PC_KT_GROUPS)
        return load_value(L, k, e, base, key);
    int before = L->errors;
    load_list(L, k->list, e, pc_key_field_(k, base), key);
    return L->errors == before ? 0 : -1;
}

static void load_group(loader *L, const pc_section *S, const config_setting_t *g, int *count_given)
{
    char key[96], got[96], what[64];
    if (!config_setting_is_group(g)) {
        describe(g, got, sizeof got);
        error_at(L, g, S->name, "expected a group %s = { key = value; ... }, got %s", S->name, got);
        return;
    }
    int *line = section_line(L->s, S->name);
    if (line)
        *line = config_setting_source_line(g);
    int cap = strcmp(S->name, "capture") == 0;
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(e);
        snprintf(key, sizeof key, "%s.%s", S->name, name ? name : "?");
        void *base = (char *)L->s + S->off;
        const pc_key *k = pc_key_find_(S->keys, S->nkeys, name);
        if (!k && cap) {
            k = pc_key_find_(pc_camera_keys_, pc_ncamera_keys_, name);
            if (k && (k->flags & PC_KF_CAMERA_ONLY)) {
                error_at(L, e, key, "\"%s\" identifies one camera: put it in an entry of the cameras list", name);
                continue;
            }
            base = &L->s->capture.camera;
        }
        if (!k) {
            snprintf(what, sizeof what, "the %s section", S->name);
            unknown_key(L, e, key, name, S->keys, S->nkeys, cap, what);
            continue;
        }
        if (load_key(L, k, e, base, key) == 0 && cap && strcmp(name, "cameras") == 0)
            *count_given = 1;
    }
}

static int list_like(const config_setting_t *st)
{
    return config_setting_is_list(st) || config_setting_is_array(st);
}

static void load_cameras(loader *L, const config_setting_t *l)
{
    char key[96], got[96];
    if (!list_like(l)) {
        describe(l, got, sizeof got);
        error_at(L, l, "cameras", "expected a list cameras = ( { ... }, { ... } ), got %s", got);
        return;
    }
    int n = config_setting_length(l);
    if (n > PC_MAX_CAMERAS) {
        error_at(L, l, "cameras", "%d cameras; at most %d", n, PC_MAX_CAMERAS);
        n = PC_MAX_CAMERAS;
    }
    for (int i = 0; i < PC_MAX_CAMERAS; i++)
        pc_camera_defaults_(&L->s->cameras[i]);
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        pc_camera_settings *c = &L->s->cameras[i];
        c->line = config_setting_source_line(g);
        snprintf(key, sizeof key, "cameras[%d]", i);
        if (!config_setting_is_group(g)) {
            describe(g, got, sizeof got);
            error_at(L, g, key, "expected a group { address = \"...\"; ... }, got %s", got);
            continue;
        }
        for (int j = 0; j < config_setting_length(g); j++) {
            const config_setting_t *e = config_setting_get_elem(g, (unsigned)j);
            const char *name = config_setting_name(e);
            snprintf(key, sizeof key, "cameras[%d].%s", i, name ? name : "?");
            const pc_key *k = pc_key_find_(pc_camera_keys_, pc_ncamera_keys_, name);
            if (!k) {
                unknown_key(L, e, key, name, pc_camera_keys_, pc_ncamera_keys_, 0, "a camera entry");
                continue;
            }
            if (load_value(L, k, e, c, key) == 0)
                c->set_mask |= 1u << pc_key_index_(pc_camera_keys_, k);
        }
    }
    L->s->cameras_listed = n;
}

/* A list of groups (entries as D describes) into list: the top-level
 * outputs and virtual_cameras, and lists inside a group or an entry
 * (name: "panorama.unstitched_outputs", "virtual_cameras[0].presets").
 * Every entry starts from the defaults; required keys not given are
 * errors. */
static void load_list(loader *L, const pc_list_desc *D, const config_setting_t *l, void *list, const char *name)
{
    char key[160], got[96], what[64];
    const char *base_name = strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
    if (!list_like(l)) {
        describe(l, got, sizeof got);
        error_at(L, l, name, "expected a list %s = %s, got %s", base_name, D->example, got);
        return;
    }
    int n = config_setting_length(l);
    if (n > D->max) {
        error_at(L, l, name, "%d %s; at most %d", n, D->plural, D->max);
        n = D->max;
    }
    snprintf(what, sizeof what, "%s %s entry", strchr("aeiou", D->entry[0]) ? "an" : "a", D->entry);
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        void *o = pc_list_entry_(D, list, i);
        pc_list_entry_defaults_(D, o);
        *(int *)((char *)o + D->line_off) = config_setting_source_line(g);
        uint32_t *mask = (uint32_t *)((char *)o + D->mask_off);
        snprintf(key, sizeof key, "%s[%d]", name, i);
        if (D->strings && config_setting_type(g) == CONFIG_TYPE_STRING) {
            snprintf(key, sizeof key, "%s[%d].%s", name, i, D->keys[0].name);
            if (load_value(L, &D->keys[0], g, o, key) == 0)
                *mask |= 1;
            continue;
        }
        if (!config_setting_is_group(g)) {
            describe(g, got, sizeof got);
            if (D->strings)
                error_at(L, g, key, "expected a URL string or a group { url = \"...\"; ... }, got %s", got);
            else
                error_at(L, g, key, "expected a group { %s = ...; ... }, got %s", D->keys[0].name, got);
            continue;
        }
        uint32_t given = 0; /* a bad value is reported as such, not as missing too */
        for (int j = 0; j < config_setting_length(g); j++) {
            const config_setting_t *e = config_setting_get_elem(g, (unsigned)j);
            const char *kn = config_setting_name(e);
            snprintf(key, sizeof key, "%s[%d].%s", name, i, kn ? kn : "?");
            const pc_key *k = pc_key_find_(D->keys, D->nkeys, kn);
            if (!k) {
                unknown_key(L, e, key, kn, D->keys, D->nkeys, 0, what);
                continue;
            }
            given |= 1u << pc_key_index_(D->keys, k);
            if (load_key(L, k, e, o, key) == 0)
                *mask |= 1u << pc_key_index_(D->keys, k);
        }
        for (int j = 0; j < D->nkeys; j++)
            if ((D->keys[j].flags & PC_KF_REQUIRED) && !(given & (1u << j))) {
                snprintf(key, sizeof key, "%s[%d].%s", name, i, D->keys[j].name);
                error_at(L, g, key, "missing: every %s needs a %s", D->entry, D->keys[j].name);
            }
    }
    *pc_list_count_(list) = n;
}

static void unknown_section(loader *L, const config_setting_t *e, const char *name)
{
    char list[192] = "", sug[160] = "";
    size_t off = 0;
    for (int i = 0; i < pc_nsections_; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", pc_sections_[i].name);
    /* A key written outside its section, or a misspelt section name. */
    for (int i = 0; i < pc_nsections_ && !sug[0]; i++) {
        const pc_section *S = &pc_sections_[i];
        if (S->kind == PC_SEC_GROUP && pc_key_find_(S->keys, S->nkeys, name))
            snprintf(sug, sizeof sug, "it belongs in a section: %s = { %s = ...; }; ", S->name, name);
    }
    if (!sug[0]) {
        pc_key k[16];
        memset(k, 0, sizeof k);
        for (int i = 0; i < pc_nsections_ && i < 16; i++)
            k[i].name = pc_sections_[i].name;
        pc_key_suggest_(name, k, pc_nsections_, 0, sug, sizeof sug);
    }
    error_at(L, e, name, "unknown section; %ssections are: %s", sug, list);
}

int pc_settings_load(pc_settings *s, const char *path, pc_diag *d)
{
    loader L = {s, d, path, 0};
    struct stat sb;
    if (!path || !path[0]) {
        pc_diag_add(d, PC_DIAG_ERROR, "", 0, "", "no configuration file name given");
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        pc_diag_add(d, PC_DIAG_ERROR, path, 0, "", "cannot open the configuration file: %s", strerror(errno));
        return -1;
    }
    int isdir = fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode);
    fclose(f);
    if (isdir) {
        pc_diag_add(d, PC_DIAG_ERROR, path, 0, "", "is a directory, not a configuration file");
        return -1;
    }

    config_t cfg;
    config_init(&cfg);
    char dir[PC_PATH_LEN];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        config_set_include_dir(&cfg, dir[0] ? dir : "/");
    }
    if (config_read_file(&cfg, path) != CONFIG_TRUE) {
        const char *ef = config_error_file(&cfg);
        int line = config_error_line(&cfg);
        const char *text = config_error_text(&cfg);
        if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
            pc_diag_add(d, PC_DIAG_ERROR, ef ? ef : path, line, "", "cannot read: %s",
                        text ? text : "file I/O error");
        else
            pc_diag_add(d, PC_DIAG_ERROR, ef ? ef : path, line, "", "%s (libconfig syntax: key = value; "
                        "groups { }, lists ( ), arrays [ ], strings in double quotes)", text ? text : "syntax error");
        config_destroy(&cfg);
        return -1;
    }

    /* every value as written, hung on its setting (settings_literals.h) */
    pc_literals lits;
    char lerr[512];
    const char *lfile = path;
    int lline = 0;
    if (pc_literals_scan(&lits, path, slash ? (dir[0] ? dir : "/") : NULL, lerr, sizeof lerr) ||
        pc_literals_attach(&lits, &cfg, &lfile, &lline, lerr, sizeof lerr)) {
        pc_diag_add(d, PC_DIAG_ERROR, lfile, lline, "", "cannot read the numbers of the file at their full width: %s",
                    lerr);
        pc_literals_free(&lits);
        config_destroy(&cfg);
        return -1;
    }

    const config_setting_t *root = config_root_setting(&cfg);
    int count_given = 0, have_cameras = 0;
    for (int i = 0; i < config_setting_length(root); i++) {
        const config_setting_t *e = config_setting_get_elem(root, (unsigned)i);
        const char *name = config_setting_name(e);
        const pc_section *S = name ? pc_section_find_(name) : NULL;
        if (!S) {
            unknown_section(&L, e, name ? name : "?");
            continue;
        }
        if (S->kind == PC_SEC_GROUP)
            load_group(&L, S, e, &count_given);
        else if (S->kind == PC_SEC_CAMERAS) {
            load_cameras(&L, e);
            have_cameras = 1;
        } else
            load_list(&L, S->list, e, (char *)s + S->off, S->name);
    }
    if (have_cameras && !count_given && s->cameras_listed > 0)
        s->capture.cameras = s->cameras_listed;
    config_destroy(&cfg);
    pc_literals_free(&lits);
    snprintf(s->config_file, sizeof s->config_file, "%s", path);
    pc_settings_finish(s);
    return L.errors ? -1 : 0;
}
