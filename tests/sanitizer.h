/* sanitizer.h - whether a test runs in a sanitizer build (tools/run-tests
 * --sanitize: ThreadSanitizer, or AddressSanitizer + UBSan). Instrumented
 * code runs several times slower, so the real-time tests size their
 * workload there (the same checks on smaller frames, fewer cameras, longer
 * waits for an event) and skip only what measures speed, each such skip
 * with a "skipped under sanitizer: ..." line. No check of behaviour is
 * skipped or weakened. PC_TEST_SANITIZE=1 (run-tests sets it) says so too,
 * e.g. for a build whose sanitizer has no predefined macro (UBSan alone). */
#ifndef PANOCAP_TEST_SANITIZER_H
#define PANOCAP_TEST_SANITIZER_H

#include <stdlib.h>
#include <string.h>

static inline int tu_sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 1;
#else
    const char *e = getenv("PC_TEST_SANITIZE");
    return e && e[0] && strcmp(e, "0") != 0;
#endif
}

/* The bound of a wait for an event (a set, a reconnection, a log line):
 * generous, since a loaded machine may take long to get there, and four
 * times that under a sanitizer. A test waits for the event and asserts
 * that it came, never that it came within a time that depends on the
 * machine's speed. */
static inline double tu_bound(double seconds)
{
    return tu_sanitized() ? 4 * seconds : seconds;
}

#endif
