/* test_stderr_guard.c - what libraries print on stderr under systemd: in a
 * child whose stderr is a file, the guard is installed and 200 bare lines
 * (as libsrt prints a connection error on every retry) plus an
 * SVT-AV1-like banner and an already prefixed line are written to fd 2.
 * Every line in the file carries a "<N>" priority; the bare lines are
 * rate-limited (20 of the 200 pass, the rest counted in one line); the
 * prefixed line and panocap's own lines (through the guard's sink) pass
 * unchanged; error-looking lines get <3>. */
#include "log.h"
#include "stderr_guard.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    char path[] = "/tmp/pc-stderr-guard-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return tap_skip_all("mkstemp failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        pc_stderr_guard *g;
        char err[256] = "";
        if (pc_stderr_guard_start(&g, err, sizeof err))
            _exit(2);
        pc_logger lg = {.sink = pc_stderr_guard_sink, .user = g};
        pc_log(&lg, PC_LOG_NOTICE, "panocap's own line");
        fprintf(stderr, "Svt[info]: SVT [version]:\tSVT-AV1 Encoder Lib v1.4.1\n");
        fprintf(stderr, "<3>already prefixed\n");
        for (int i = 0; i < 200; i++)
            fprintf(stderr, "12:00:00.%06d/SRT:RcvQ:w1*E:SRT.cn: Connection setup failure: rejected %d\n", i, i);
        fprintf(stderr, "a last line without a newline");
        pc_stderr_guard_stop(g);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    TAP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child with the guard exited 0");
    FILE *f = fopen(path, "r");
    char line[4096];
    int lines = 0, bare = 0, srt = 0, srt_err = 0, own = 0, pre = 0, svt = 0, left = 0, last = 0;
    unsigned long left_n = 0;
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        if (!(line[0] == '<' && line[1] >= '0' && line[1] <= '7' && line[2] == '>'))
            bare++;
        if (strstr(line, "SRT.cn")) {
            srt++;
            srt_err += strncmp(line, "<3>stderr: ", 11) == 0;
        }
        own += strcmp(line, "<5>panocap's own line\n") == 0;
        pre += strcmp(line, "<3>already prefixed\n") == 0;
        svt += strncmp(line, "<6>stderr: Svt[info]:", 21) == 0;
        last += strcmp(line, "<6>stderr: a last line without a newline\n") == 0;
        const char *l = strstr(line, "stderr: ");
        if (l && strstr(line, "library lines left out")) {
            left++;
            left_n += strtoul(l + 8, NULL, 10);
        }
    }
    if (f)
        fclose(f);
    unlink(path);
    TAP_CHECK(lines > 0 && bare == 0, "every one of %d lines has a <N> priority prefix", lines);
    TAP_CHECK(own == 1 && pre == 1, "panocap's own line and an already prefixed line pass unchanged");
    TAP_CHECK(svt == 1, "the SVT-AV1 banner line gets <6>stderr:");
    TAP_CHECK(srt >= 15 && srt <= 21 && srt_err == srt, "200 repeated library error lines: %d pass, each as <3>",
              srt);
    TAP_CHECK(left >= 1 && srt + (int)left_n + last == 201,
              "the rest is counted: %lu left out in %d line(s) (%d + %lu + %d = 201 lines)", left_n, left, srt, left_n,
              last);
    return tap_done();
}
