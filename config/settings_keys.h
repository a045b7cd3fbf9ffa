/* settings_keys.h - internal to config/: the key table that describes every
 * setting once (name, type, storage, default, range, help), shared by the
 * files of config/: the table (settings_keys.c), one key's value
 * (settings_parse.c), defaults and validation (settings_validate.c), reload
 * diffs (settings_reload.c), writing (settings_write.c) and the libconfig
 * loader (settings_file.c). */
#ifndef PANOCAP_SETTINGS_KEYS_H
#define PANOCAP_SETTINGS_KEYS_H

#include "settings.h"

#include <stdint.h>

typedef enum pc_key_type {
    PC_KT_INT,    /* int */
    PC_KT_INT64,  /* int64_t */
    PC_KT_DOUBLE, /* double */
    PC_KT_BOOL,   /* int 0/1 */
    PC_KT_STRING, /* char[size] */
    PC_KT_ENUM,   /* int, named values */
    PC_KT_LIST,   /* pc_name_list */
    PC_KT_GROUPS, /* a list of groups (pc_key.list): a picture's outputs, a view's presets */
} pc_key_type;

enum {
    PC_KF_CAMERA_ONLY = 1u << 0, /* not a per-camera default in `capture` */
    PC_KF_ZERO_AUTO = 1u << 1,   /* 0 is allowed besides min..max and means "auto" */
    PC_KF_EVEN = 1u << 2,        /* must be even (Bayer 2x2 tiles) */
    PC_KF_SI = 1u << 3,          /* text may carry k/M/G/T (x1000) or Ki/Mi/Gi/Ti (x1024); a string is
                                  * accepted in files ("5G") */
    PC_KF_REQUIRED = 1u << 4,    /* must be given (output url) */
    PC_KF_NEG_AUTO = 1u << 5,    /* negative values allowed and mean "leave unchanged" */
    PC_KF_NUMBERS = 1u << 6,     /* a string of numbers ("2, 1, 1"): files may give an array or a list
                                  * of numbers instead ([2.0, 1.0, 1.0]) */
};

typedef struct pc_enum {
    int (*count)(void);
    const char *(*name)(int i);     /* i-th allowed name */
    int (*parse)(const char *name); /* stored value, or -1 */
    int base;                       /* stored value of name(i) is base + i */
} pc_enum;

typedef struct pc_list_desc pc_list_desc;

typedef struct pc_key {
    const char *name;
    pc_key_type type;
    size_t off;            /* offset in the section struct */
    size_t size;           /* PC_KT_STRING: array size */
    double min, max;
    unsigned flags;
    const pc_enum *en;
    unsigned live;         /* PC_LIVE_* bit when it can change live, else 0 */
    const char *def;       /* default, as text ("" for empty strings) */
    const char *unit;      /* "fps", "ms", "bytes", or NULL */
    const char *help;
    const pc_list_desc *list; /* PC_KT_GROUPS: what an entry is */
} pc_key;

/* A list of groups: the top-level outputs and virtual_cameras, and lists
 * inside a group or an entry (a picture's outputs, a view's presets).
 * Storage: an int count, and at items_off bytes after it the entries,
 * entry_size bytes each, every entry with an int line and a uint32_t
 * set_mask (the keys given, one bit per key of keys). */
struct pc_list_desc {
    const char *entry;     /* "output", "virtual camera", "preset": messages */
    const char *plural;    /* "outputs", "virtual cameras", "presets" */
    const pc_key *keys;
    int nkeys;             /* at most 32 (set_mask) */
    size_t entry_size, items_off;
    int max;
    size_t line_off, mask_off;
    int strings;           /* an entry may be a plain string, the value of keys[0] (a URL) */
    const char *example;   /* "( \"file.ts\", { url = \"...\"; ... } )" */
};

/* The count and the i-th entry of a list stored at base. */
static inline int *pc_list_count_(void *base) { return (int *)base; }
static inline void *pc_list_entry_(const pc_list_desc *L, void *base, int i)
{
    return (char *)base + L->items_off + (size_t)i * L->entry_size;
}
static inline const void *pc_list_centry_(const pc_list_desc *L, const void *base, int i)
{
    return (const char *)base + L->items_off + (size_t)i * L->entry_size;
}
/* An entry with every key at its default, nothing given. */
void pc_list_entry_defaults_(const pc_list_desc *L, void *entry);
extern const pc_list_desc pc_outputs_list_;         /* the top-level outputs (in pc_settings) */
extern const pc_list_desc pc_picture_outputs_list_; /* a pc_output_list */
extern const pc_list_desc pc_vcams_list_;           /* virtual_cameras (in pc_settings) */
extern const pc_list_desc pc_presets_list_;         /* a pc_preset_list */

/* pc_key.max of keys with no upper bound ("N or more"). */
#define PC_KEY_NO_MAX 1e18

/* Sections of the file. Scalar sections are groups; `cameras`, `outputs`
 * and `virtual_cameras` are lists of groups (outputs also of plain URL
 * strings). Cameras take their defaults from capture; outputs and
 * virtual cameras are lists as pc_list_desc describes (outputs change
 * live as a whole). */
typedef enum pc_section_kind { PC_SEC_GROUP, PC_SEC_CAMERAS, PC_SEC_OUTPUTS, PC_SEC_LIST } pc_section_kind;

typedef struct pc_section {
    const char *name;
    pc_section_kind kind;
    const pc_key *keys;
    int nkeys;
    size_t off;            /* group sections: offset in pc_settings; outputs and lists: of the count */
    const char *help;
    const pc_list_desc *list; /* outputs and lists */
} pc_section;

extern const pc_section pc_sections_[];
extern const int pc_nsections_;
extern const pc_key pc_camera_keys_[];
extern const int pc_ncamera_keys_;
extern const pc_key pc_output_keys_[];
extern const int pc_noutput_keys_;

const pc_section *pc_section_find_(const char *name);
const pc_key *pc_key_find_(const pc_key *keys, int n, const char *name);
int pc_key_index_(const pc_key *keys, const pc_key *k);
/* The name of one entry of a section ("camera", "output", "virtual_camera")
 * or the group's own name: the prefix of pc_settings_key_name. */
const char *pc_section_entry_name_(const pc_section *S);

/* Stores text (command line, defaults, file strings) after checking it. */
int pc_key_parse_(const pc_key *k, const char *text, void *base, char *err, size_t len);
/* Stores a number from a file after checking type rules and range. */
int pc_key_set_int_(const pc_key *k, long long v, void *base, char *err, size_t len);
int pc_key_set_double_(const pc_key *k, double v, void *base, char *err, size_t len);
/* "1..1000", "one of: a, b", "true or false"... */
void pc_key_allowed_(const pc_key *k, char *buf, size_t len);
const char *pc_key_type_name_(const pc_key *k);
/* "did you mean 'x'?" for a misspelt key among keys (and the camera
 * defaults when with_camera); buf empty when nothing is close. */
void pc_key_suggest_(const char *name, const pc_key *keys, int n, int with_camera,
                     char *buf, size_t len);
/* Comma-separated key names of a table (CAMERA_ONLY excluded when asked). */
void pc_key_list_(const pc_key *keys, int n, int skip_camera_only, char *buf, size_t len);

/* The value as text: plain (quote 0: diffs, logs) or as libconfig writes
 * it (quote 1: strings and names quoted, 64-bit integers with L). */
void pc_key_format_(const pc_key *k, const void *base, char *buf, size_t len, int quote);

/* Where a key's value lives in its section struct, and its size. */
static inline void *pc_key_field_(const pc_key *k, void *base) { return (char *)base + k->off; }
static inline const void *pc_key_cfield_(const pc_key *k, const void *base)
{
    return (const char *)base + k->off;
}
static inline size_t pc_key_field_size_(const pc_key *k)
{
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_BOOL:
    case PC_KT_ENUM: return sizeof(int);
    case PC_KT_INT64: return sizeof(int64_t);
    case PC_KT_DOUBLE: return sizeof(double);
    case PC_KT_STRING: return k->size;
    case PC_KT_LIST: return sizeof(pc_name_list);
    case PC_KT_GROUPS: return k->size;
    }
    return 0;
}

void pc_output_defaults_(pc_output_settings *o);
void pc_camera_defaults_(pc_camera_settings *c);

#endif
