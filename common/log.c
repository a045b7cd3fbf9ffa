/* log.c - see log.h. */
#include "log.h"

#include "errmsg.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const level_names[8] = {
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

void pc_logv(const pc_logger *lg, int level, const char *fmt, va_list ap)
{
    /* max_level may change while other threads log (the daemon's reload) */
    int max = lg ? __atomic_load_n(&lg->max_level, __ATOMIC_RELAXED) : 0;
    if (!max)
        max = PC_LOG_INFO;
    if (level > max)
        return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n')
        line[--n] = '\0';
    /* one line, and no raw control byte from the input a message quotes
     * (a terminal escape, a forged second line) reaches the terminal or
     * the journal */
    pc_escape_ctl_inplace(line, sizeof line);
    if (lg && lg->sink) {
        lg->sink(lg->user, level, line);
        return;
    }
    /* One fprintf per line so concurrent threads do not interleave. */
    fprintf(stderr, "<%d>%s\n", level, line);
}

void pc_log(const pc_logger *lg, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_logv(lg, level, fmt, ap);
    va_end(ap);
}

int pc_log_level_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < 8; i++)
        if (strcasecmp(name, level_names[i]) == 0)
            return i;
    if (strcasecmp(name, "error") == 0)
        return PC_LOG_ERR;
    if (strcasecmp(name, "warn") == 0)
        return PC_LOG_WARNING;
    return -1;
}

const char *pc_log_level_name(int level)
{
    return (level >= 0 && level < 8) ? level_names[level] : "?";
}
