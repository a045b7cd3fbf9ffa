/* stderr_guard.c - priority prefixes and a rate limit for what libraries
 * print on stderr (see stderr_guard.h). */
#include "stderr_guard.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_ 2048
#define BURST 20.0
#define PER_SECOND 1.0

struct pc_stderr_guard {
    int orig;       /* the original stderr */
    int rd;         /* the pipe's read end */
    pthread_t thread;
    double tokens;  /* rate limit (owned by the thread) */
    double last_s;
    unsigned long suppressed;
};

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void write_all(int fd, const char *b, size_t n)
{
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

void pc_stderr_guard_sink(void *user, int level, const char *line)
{
    pc_stderr_guard *g = user;
    char buf[LINE_MAX_ + 8];
    int k = snprintf(buf, sizeof buf, "<%d>%s\n", level, line);
    if (k >= (int)sizeof buf) {
        k = (int)sizeof buf - 1;
        buf[k - 1] = '\n';
    }
    write_all(g->orig, buf, (size_t)k);
}

static int has_prefix(const char *l)
{
    return l[0] == '<' && l[1] >= '0' && l[1] <= '7' && l[2] == '>';
}

/* 3 for lines that read as errors, 4 for warnings, 6 otherwise. */
static int guess_level(const char *l)
{
    if (strcasestr(l, "error") || strcasestr(l, "fatal") || strstr(l, "*E:") || strcasestr(l, "failed"))
        return 3;
    if (strcasestr(l, "warn") || strstr(l, "!W:"))
        return 4;
    return 6;
}

static void emit(pc_stderr_guard *g, char *line)
{
    if (has_prefix(line)) {
        size_t n = strlen(line);
        line[n] = '\n';
        write_all(g->orig, line, n + 1);
        return;
    }
    double now = mono_s();
    g->tokens += (now - g->last_s) * PER_SECOND;
    if (g->tokens > BURST)
        g->tokens = BURST;
    g->last_s = now;
    if (g->tokens < 1) {
        g->suppressed++;
        return;
    }
    g->tokens -= 1;
    char buf[LINE_MAX_ + 128];
    int k = 0;
    if (g->suppressed) {
        k = snprintf(buf, sizeof buf, "<4>stderr: %lu library line%s left out (rate limit: %g, then %g/s)\n",
                     g->suppressed, g->suppressed == 1 ? "" : "s", BURST, PER_SECOND);
        g->suppressed = 0;
    }
    k += snprintf(buf + k, sizeof buf - (size_t)k, "<%d>stderr: %s\n", guess_level(line), line);
    if (k >= (int)sizeof buf)
        k = (int)sizeof buf - 1;
    write_all(g->orig, buf, (size_t)k);
}

static void *guard_thread(void *arg)
{
    pc_stderr_guard *g = arg;
    char buf[LINE_MAX_ + 2];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(g->rd, buf + len, LINE_MAX_ - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        size_t start = 0;
        for (size_t i = 0; i < len; i++)
            if (buf[i] == '\n') {
                buf[i] = '\0';
                /* drop trailing CR and skip empty lines */
                size_t e = i;
                while (e > start && (buf[e - 1] == '\r' || buf[e - 1] == ' '))
                    buf[--e] = '\0';
                if (e > start)
                    emit(g, buf + start);
                start = i + 1;
            }
        memmove(buf, buf + start, len - start);
        len -= start;
        if (len == LINE_MAX_) { /* an endless line: cut it */
            buf[len] = '\0';
            emit(g, buf);
            len = 0;
        }
    }
    if (len) {
        buf[len] = '\0';
        emit(g, buf);
    }
    if (g->suppressed) {
        char m[160];
        int k = snprintf(m, sizeof m, "<4>stderr: %lu library line%s left out (rate limit)\n", g->suppressed,
                         g->suppressed == 1 ? "" : "s");
        write_all(g->orig, m, (size_t)k);
    }
    return NULL;
}

int pc_stderr_guard_start(pc_stderr_guard **out, char *err, size_t n)
{
    *out = NULL;
    pc_stderr_guard *g = calloc(1, sizeof *g);
    int p[2] = {-1, -1};
    if (!g) {
        snprintf(err, n, "stderr guard: out of memory");
        return -1;
    }
    g->orig = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (g->orig < 0 || pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, n, "stderr guard: %s", strerror(errno));
        goto fail;
    }
    g->rd = p[0];
    g->tokens = BURST;
    g->last_s = mono_s();
    fflush(stderr);
    if (dup2(p[1], STDERR_FILENO) < 0) {
        snprintf(err, n, "stderr guard: dup2: %s", strerror(errno));
        goto fail;
    }
    close(p[1]);
    p[1] = -1;
    int rc = pthread_create(&g->thread, NULL, guard_thread, g);
    if (rc) {
        dup2(g->orig, STDERR_FILENO);
        snprintf(err, n, "stderr guard: pthread_create: %s", strerror(rc));
        goto fail;
    }
    *out = g;
    return 0;
fail:
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    if (g->orig >= 0)
        close(g->orig);
    free(g);
    return -1;
}

void pc_stderr_guard_stop(pc_stderr_guard *g)
{
    if (!g)
        return;
    fflush(stderr);
    dup2(g->orig, STDERR_FILENO); /* the pipe's last write end closes: EOF */
    pthread_join(g->thread, NULL);
    close(g->rd);
    close(g->orig);
    free(g);
}
