/* log.h - leveled logging shared by every module.
 *
 * Messages go to a caller-supplied sink (the daemon's context owns one);
 * with no sink they go to stderr prefixed "<N>" with the syslog priority,
 * which journald turns back into levels. No global state: every module
 * takes a const pc_logger * in its configuration (NULL = stderr, info).
 */
#ifndef PANOCAP_LOG_H
#define PANOCAP_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PC_LOG_ERR = 3,
    PC_LOG_WARNING = 4,
    PC_LOG_NOTICE = 5,
    PC_LOG_INFO = 6,
    PC_LOG_DEBUG = 7,
};

typedef struct pc_logger {
    /* Receives one formatted line without trailing newline. NULL: stderr. */
    void (*sink)(void *user, int level, const char *line);
    void *user;
    int max_level; /* messages above this level are dropped; 0 = PC_LOG_INFO;
                    * changed while threads log: __atomic_store_n */
} pc_logger;

void pc_log(const pc_logger *lg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pc_logv(const pc_logger *lg, int level, const char *fmt, va_list ap);

/* "err", "warning", "notice", "info", "debug" -> level, or -1. */
int pc_log_level_from_name(const char *name);
const char *pc_log_level_name(int level);

#ifdef __cplusplus
}
#endif
#endif
