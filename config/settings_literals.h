/* settings_literals.h - internal to config/: every value of a libconfig
 * file as it is written, in document order (includes followed), attached
 * to libconfig's settings, so that the loader reads integers at their full
 * width whatever libconfig's version did with them.
 *
 * Why: Debian 12's libconfig 1.5 reads an integer written without an `L`
 * suffix with atoi(): 5000000000 becomes 705032704 and 2^63 becomes -1,
 * silently; the value is gone before panocap sees the setting, and libconfig
 * gives no column, only the line of a setting's name. This scanner follows
 * libconfig's own lexical rules (scanner.l: comments, strings and their
 * concatenation, names, booleans, floats, decimal and hex integers with or
 * without L, @include at the start of a line), so the n-th value it finds is
 * the n-th scalar setting of libconfig's tree. pc_literals_attach checks
 * that pairing at every value (kind, and the value itself wherever a
 * 32-bit libconfig cannot have changed it) and refuses the file with the
 * place where they disagree rather than guess. */
#ifndef PANOCAP_SETTINGS_LITERALS_H
#define PANOCAP_SETTINGS_LITERALS_H

#include <libconfig.h>
#include <stddef.h>

typedef enum pc_literal_kind {
    PC_LIT_INTEGER, /* 12, -3, 0x1F, 5000000000L */
    PC_LIT_FLOAT,   /* 1.5, 1e9, .5 */
    PC_LIT_BOOL,    /* true, FALSE */
    PC_LIT_STRING,  /* "a" "b" (adjacent strings are one value) */
} pc_literal_kind;

typedef struct pc_literal {
    pc_literal_kind kind;
    int line;
    int file;          /* index into pc_literals.files */
    int overflow;      /* integer: beyond 64 bits (signed) */
    long long value;   /* integer: its value; bool: 0/1 */
    double fvalue;     /* float */
    char text[48];     /* integer and float: as written (long ones shortened "123...789") */
} pc_literal;

typedef struct pc_literals {
    pc_literal *v;
    int n, cap;
    char **files;      /* [0] the file itself, then each included file */
    int nfiles;
} pc_literals;

/* Scans path (and what it includes, relative to include_dir when set, as
 * libconfig opens them). 0, or -1 with err. */
int pc_literals_scan(pc_literals *L, const char *path, const char *include_dir, char *err, size_t errlen);
/* Pairs the literals with cfg's scalar settings in document order and
 * hangs each on its setting (config_setting_set_hook): 0, or -1 with err,
 * *file and *line saying where the two readings differ. */
int pc_literals_attach(pc_literals *L, config_t *cfg, const char **file, int *line, char *err,
                       size_t errlen);
/* The literal attached to st, or NULL. */
const pc_literal *pc_literal_of(const config_setting_t *st);
void pc_literals_free(pc_literals *L);

#endif
