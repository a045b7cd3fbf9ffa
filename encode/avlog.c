/* avlog.c - routes FFmpeg's av_log lines to panocap's pc_logger.
 *
 * av_log has one process-wide callback. The one installed here looks at
 * thread-local state only: threads that panocap's encoder owns (or that
 * call into it) bind their pc_logger, and while an encoder is being probed
 * the error lines are collected so the one log line that explains the
 * fallback can quote FFmpeg's reason. Other threads keep FFmpeg's default
 * behaviour. No shared mutable state beyond FFmpeg's own callback pointer.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libavutil/log.h>

#include "encode_internal.h"
#include "urlmask.h"

static __thread const pc_logger *tl_log;
static __thread int tl_bound;
static __thread char *tl_cap;
static __thread size_t tl_cap_n;
static __thread int tl_quiet;
static __thread const char *tl_redact; /* an output URL whose secrets never reach the log */

static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void trim(char *s)
{
    size_t l = strlen(s);
    while (l && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' '))
        s[--l] = '\0';
}

static void avlog_cb(void *avcl, int level, const char *fmt, va_list vl)
{
    if (!tl_bound && !tl_cap) {
        av_log_default_callback(avcl, level, fmt, vl);
        return;
    }
    char line[1024];
    int prefix = 1;
    va_list copy;
    va_copy(copy, vl);
    av_log_format_line2(avcl, level, fmt, copy, line, sizeof line, &prefix);
    va_end(copy);
    trim(line);
    if (!line[0])
        return;
    if (tl_redact)
        pc_url_redact(line, sizeof line, tl_redact);
    if (tl_cap) {
        if (level <= AV_LOG_ERROR) {
            /* The reason without the "[hevc_nvenc @ 0x...]" prefix. */
            char bare[1024];
            int p0 = 0;
            va_copy(copy, vl);
            av_log_format_line2(NULL, level, fmt, copy, bare, sizeof bare, &p0);
            va_end(copy);
            trim(bare);
            size_t used = strlen(tl_cap);
            if (used + 3 < tl_cap_n && bare[0] && !strstr(tl_cap, bare))
                snprintf(tl_cap + used, tl_cap_n - used, "%s%s", used ? "; " : "", bare);
        }
        pc_log(tl_log, PC_LOG_DEBUG, "ffmpeg: %s", line);
        return;
    }
    if (level > av_log_get_level())
        return;
    /* FFmpeg's info level is chatty for a service that runs for months
     * (encoder statistics at close, a line per HLS segment opened): it goes
     * to debug; warnings and errors keep their level. */
    int pl = tl_quiet ? PC_LOG_DEBUG
           : level <= AV_LOG_ERROR ? PC_LOG_ERR
           : level <= AV_LOG_WARNING ? PC_LOG_WARNING : PC_LOG_DEBUG;
    pc_log(tl_log, pl, "ffmpeg: %s", line);
}

static void install(void) { av_log_set_callback(avlog_cb); }

void pc_avlog_install(void) { pthread_once(&install_once, install); }

void pc_avlog_bind(const pc_logger *lg)
{
    pc_avlog_install();
    tl_log = lg;
    tl_bound = 1;
}

void pc_avlog_capture_start(char *buf, size_t n)
{
    pc_avlog_install();
    if (n)
        buf[0] = '\0';
    tl_cap = n ? buf : NULL;
    tl_cap_n = n;
}

void pc_avlog_quiet(int on) { tl_quiet = on; }

void pc_avlog_redact(const char *url) { tl_redact = url; }

void pc_avlog_capture_stop(void)
{
    tl_cap = NULL;
    tl_cap_n = 0;
}
