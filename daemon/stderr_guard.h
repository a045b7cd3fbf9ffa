/* stderr_guard.h - under systemd (stderr not a terminal) every line on the
 * journal carries a "<N>" priority prefix and no library can flood it.
 *
 * Libraries print to stderr on their own: the SVT-AV1 banner, libsrt's
 * connection errors on every retry, x265's info lines. The guard moves
 * file descriptor 2 onto a pipe read by a thread of its own: lines that
 * already carry "<N>" pass unchanged; other lines get "<N>stderr: " (N =
 * 3 for lines that look like errors, 4 for warnings, 6 otherwise) and are
 * rate-limited (a burst of 20, then one per second; the number left out is
 * reported). panocap's own log lines do not pass through the pipe: the
 * guard's sink writes them straight to the original stderr. */
#ifndef PANOCAP_STDERR_GUARD_H
#define PANOCAP_STDERR_GUARD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_stderr_guard pc_stderr_guard;

/* Installs the guard. Returns 0 or -1 with err (stderr is left as it was). */
int pc_stderr_guard_start(pc_stderr_guard **out, char *err, size_t n);
/* A pc_logger sink writing "<level>line\n" to the original stderr in one
 * write (user = the guard). */
void pc_stderr_guard_sink(void *user, int level, const char *line);
/* Puts stderr back, lets the thread write what is left, joins it. */
void pc_stderr_guard_stop(pc_stderr_guard *g);

#ifdef __cplusplus
}
#endif
#endif
