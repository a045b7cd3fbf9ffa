/* tap.h - a tiny TAP (Test Anything Protocol) producer for panocap's C tests.
 *
 * meson runs every test binary with protocol 'tap', so each check is one
 * numbered "ok"/"not ok" line and tools/run-tests can count them. Usage:
 *   TAP_CHECK(cond, "what %d", x);   TAP_SKIP("why");   return tap_done();
 * Counters are per test binary; no other test code keeps global state.
 */
#ifndef PANOCAP_TAP_H
#define PANOCAP_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count_, tap_failed_;

/* Prints text as TAP: a check's description on one line (newlines in it
 * become " | "), or each line of a diagnostic behind "# ". Anything else
 * on stdout would be an unknown TAP line to meson. */
static inline void tap_put_(const char *text, int diag)
{
    if (diag)
        fputs("# ", stdout);
    for (const char *c = text; *c; c++) {
        if (*c != '\n')
            putchar(*c);
        else if (!diag)
            fputs(" | ", stdout);
        else if (c[1])
            fputs("\n# ", stdout);
    }
    putchar('\n');
    fflush(stdout);
}

static inline __attribute__((format(printf, 2, 3))) int
tap_check_(int ok, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    printf("%s %d - ", ok ? "ok" : "not ok", ++tap_count_);
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    tap_put_(text, 0);
    if (!ok)
        tap_failed_++;
    return ok;
}
#define TAP_CHECK(cond, ...) tap_check_(!!(cond), __VA_ARGS__)

static inline __attribute__((format(printf, 1, 2))) void tap_diag(const char *fmt, ...)
{
    char text[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    tap_put_(text, 1);
}

/* One skipped check, with the reason on the line. */
static inline void tap_skip(const char *why)
{
    printf("ok %d # SKIP %s\n", ++tap_count_, why);
    fflush(stdout);
}

/* The whole binary skipped (no device, no simulator...): TAP plan 1..0. */
static inline int tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    return 0;
}

static inline int tap_done(void)
{
    printf("1..%d\n", tap_count_);
    return tap_failed_ ? 1 : 0;
}

#endif
