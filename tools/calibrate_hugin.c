/* calibrate_hugin.c - runs Hugin's command-line tools (Debian's
 * hugin-tools) for panocap-calibrate, one child process per step, in the
 * work folder, each with its own log; and the two small edits of a
 * project the chain needs between tools (photometric links, final paths). */
#include "calibrate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const cal_hugin_tools[] = {"pto_gen", "pto_lensstack", "pto_var", "cpfind", "cpclean",
                                       "autooptimiser", "vig_optimize", "pano_modify", NULL};

/* 1 when name is an executable file in one of PATH's folders. */
static int in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    char dir[PATH_MAX], full[PATH_MAX + 64];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)(n < sizeof dir ? n : sizeof dir - 1), p);
        snprintf(full, sizeof full, "%s/%s", n ? dir : ".", name);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

int cal_hugin_check(char *missing, size_t n)
{
    for (int i = 0; cal_hugin_tools[i]; i++)
        if (!in_path(cal_hugin_tools[i])) {
            snprintf(missing, n, "%s", cal_hugin_tools[i]);
            return -1;
        }
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The last non-empty line of a file (trimmed, at most n - 1 bytes). */
static void last_line(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t l = strlen(s);
        if (l) {
            l = l < n ? l : n - 1;
            memcpy(out, s, l);
            out[l] = '\0';
        }
    }
    fclose(f);
}

int cal_run(cal_runner *r, const char *log, char *const argv[], char *err, size_t errlen)
{
    char log_path[PATH_MAX];
    snprintf(log_path, sizeof log_path, "%s/%s", r->work, log);
    double t0 = now_s();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "step %d/%d %s: cannot start a process: %s", r->step, r->nsteps, argv[0],
                 strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || chdir(r->work) != 0)
            _exit(126);
        execvp(argv[0], argv);
        dprintf(2, "panocap-calibrate: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            snprintf(err, errlen, "step %d/%d %s: waitpid: %s", r->step, r->nsteps, argv[0], strerror(errno));
            return -1;
        }
    }
    r->seconds = now_s() - t0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    char tail[240];
    last_line(log_path, tail, sizeof tail);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 126)
        snprintf(err, errlen, "step %d/%d %s: cannot set up the process (log %s, folder %s)", r->step, r->nsteps,
                 argv[0], log_path, r->work);
    else if (WIFEXITED(st))
        snprintf(err, errlen, "step %d/%d %s failed (exit status %d); its log %s ends: %s", r->step, r->nsteps,
                 argv[0], WEXITSTATUS(st), log_path, tail[0] ? tail : "(empty)");
    else
        snprintf(err, errlen, "step %d/%d %s was killed by signal %d; its log: %s", r->step, r->nsteps, argv[0],
                 WTERMSIG(st), log_path);
    return -1;
}

double cal_optimiser_rms(const char *log_path)
{
    FILE *f = fopen(log_path, "r");
    if (!f)
        return -1;
    char line[512];
    double rms = -1;
    while (fgets(line, sizeof line, f)) {
        /* "after 3 iteration(s):         0.168829741583029 units" */
        const char *p = strstr(line, "iteration(s):");
        double v;
        if (p && sscanf(p + 13, "%lf units", &v) == 1)
            rms = v;
    }
    fclose(f);
    return rms;
}

/* Rewrites the `i` lines of project in into out: fix(line, image, f)
 * writes the line (without its newline); other lines are copied. */
typedef int (*line_fix)(const char *line, int image, FILE *f, const void *arg);

static int rewrite(const char *in, const char *out, line_fix fix, const void *arg, char *err, size_t errlen)
{
    FILE *src = fopen(in, "r");
    if (!src) {
        snprintf(err, errlen, "%s: %s", in, strerror(errno));
        return -1;
    }
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        fclose(src);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int image = 0, rc = 0;
    while (!rc && (len = getline(&line, &cap, src)) >= 0) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == 'i' && line[1] == ' ')
            rc = fix(line, image++, f, arg);
        else
            fputs(line, f);
        fputc('\n', f);
    }
    free(line);
    int bad_in = ferror(src);
    fclose(src);
    if (fclose(f) != 0 || rc || bad_in) {
        snprintf(err, errlen, "%s: %s", bad_in ? in : tmp, bad_in ? "read error" : "cannot write");
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, out) != 0) {
        snprintf(err, errlen, "%s: %s", out, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static const char *const photometric_fields[] = {"Ra", "Rb", "Rc", "Rd", "Re", "Va", "Vb",
                                                 "Vc", "Vd", "Vx", "Vy", NULL};

/* One field name of photometric_fields followed by a value or a link. */
static int is_photometric(const char *tok, size_t len)
{
    for (int k = 0; photometric_fields[k]; k++)
        if (len > 2 && strncmp(tok, photometric_fields[k], 2) == 0 &&
            (tok[2] == '=' || tok[2] == '-' || tok[2] == '.' || (tok[2] >= '0' && tok[2] <= '9')))
            return 1;
    return 0;
}

static int link_line(const char *line, int image, FILE *f, const void *arg)
{
    if (image == 0) {
        fputs(line, f);
        return 0;
    }
    for (const char *s = line; *s;) {
        size_t n = strcspn(s, " \t");
        if (n == 0) {
            fputc(*s++, f);
            continue;
        }
        if (s[0] == 'n' && s[1] == '"') { /* the file name: the rest, as it is */
            fputs(s, f);
            break;
        }
        if (is_photometric(s, n))
            fprintf(f, "%.2s=0", s);
        else
            fprintf(f, "%.*s", (int)n, s);
        s += n;
    }
    return 0;
}

int cal_link_photometry(const char *in, const char *out, char *err, size_t errlen)
{
    return rewrite(in, out, link_line, NULL, err, errlen);
}

static int path_line(const char *line, int image, FILE *f, const void *arg)
{
    const char *folder = arg, *q = strstr(line, " n\"");
    if (!q || q[3] == '/') {
        fputs(line, f);
        return 0;
    }
    fprintf(f, "%.*s n\"%s/%s", (int)(q - line), line, folder, q + 3);
    return 0;
}

int cal_write_final(const char *in, const char *folder, const char *out, char *err, size_t errlen)
{
    char abs[PATH_MAX];
    if (!realpath(folder, abs)) {
        snprintf(err, errlen, "%s: %s", folder, strerror(errno));
        return -1;
    }
    return rewrite(in, out, path_line, abs, err, errlen);
}
