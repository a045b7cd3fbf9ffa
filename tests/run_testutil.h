/* run_testutil.h - runs a program to completion with its stdout and stderr
 * captured into memory (temp files underneath), for the tests of the
 * command-line tools. Header-only, static. */
#ifndef PANOCAP_RUN_TESTUTIL_H
#define PANOCAP_RUN_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct rt_result {
    int status;     /* exit code, 128+signal when killed, -1 when not run */
    char out[65536];
    char err[65536];
} rt_result;

static inline void rt_read(FILE *f, char *buf, size_t n)
{
    size_t k = 0;
    if (f) {
        rewind(f);
        k = fread(buf, 1, n - 1, f);
        fclose(f);
    }
    buf[k] = '\0';
}

/* argv[0] is the program path; NULL-terminated. before_exec (or NULL)
 * runs in the child just before execv (a failure there: _exit(90..99)). */
static inline int rt_run_with(rt_result *r, char *const argv[], void (*before_exec)(void))
{
    FILE *o = tmpfile(), *e = tmpfile();
    r->status = -1;
    r->out[0] = r->err[0] = '\0';
    if (!o || !e) {
        if (o)
            fclose(o);
        if (e)
            fclose(e);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(fileno(o), 1) < 0 || dup2(fileno(e), 2) < 0)
            _exit(120);
        if (before_exec)
            before_exec();
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) == pid)
        r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    rt_read(o, r->out, sizeof r->out);
    rt_read(e, r->err, sizeof r->err);
    return r->status;
}

static inline int rt_run(rt_result *r, char *const argv[]) { return rt_run_with(r, argv, NULL); }

#endif
