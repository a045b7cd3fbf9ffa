/* test_errmsg.c - the escaping of control bytes in messages (common/
 * errmsg.h) and in every log line (common/log.c): ESC, BEL, DEL and the
 * rest become \xHH (tab, newline, CR \t \n \r), printable bytes and UTF-8
 * stay, a short buffer cuts before an escape, never inside one. */
#include "errmsg.h"
#include "log.h"
#include "tap.h"

#include <string.h>

static char last[2048];

static void sink(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    snprintf(last, sizeof last, "%s", line);
}

int main(void)
{
    char out[256];
    static const char in[] = "v35.1\x1b[2J\x1b]0;pwned\x07 tab\there\r\nnul\x7f caf\xc3\xa9";
    size_t n = pc_escape_ctl(out, sizeof out, in, sizeof in - 1);
    TAP_CHECK(!strcmp(out, "v35.1\\x1b[2J\\x1b]0;pwned\\x07 tab\\there\\r\\nnul\\x7f caf\xc3\xa9") && n == strlen(out),
              "control bytes escaped, printable and UTF-8 kept: %s", out);
    static const char nul[] = "a\0b";
    pc_escape_ctl(out, sizeof out, nul, 3);
    TAP_CHECK(!strcmp(out, "a\\x00b"), "a NUL byte inside the length: \\x00 (%s)", out);
    n = pc_escape_ctl(out, 6, "abc\x1b[2J", 7);
    TAP_CHECK(!strcmp(out, "abc") && n == 3, "a short buffer cuts before an escape, not inside it (%s)", out);
    char s[32] = "plain text";
    TAP_CHECK(pc_escape_ctl_inplace(s, sizeof s) == 0 && !strcmp(s, "plain text"), "nothing to escape: unchanged");
    snprintf(s, sizeof s, "x\x1b[2Jy");
    TAP_CHECK(pc_escape_ctl_inplace(s, sizeof s) == 1 && !strcmp(s, "x\\x1b[2Jy"), "in place: %s", s);
    snprintf(s, sizeof s, "0123456789012345678901234\x07\x07");
    pc_escape_ctl_inplace(s, sizeof s);
    TAP_CHECK(strlen(s) < sizeof s && !strcmp(s, "0123456789012345678901234\\x07"),
              "in place, cut to the buffer at an escape's end: %s", s);

    pc_logger lg = {.sink = sink, .max_level = PC_LOG_DEBUG};
    pc_log(&lg, PC_LOG_ERR, "rig.pto:2: field v: \"%s\" is not a number", "v35.1\x1b[2J\x1b]0;pwned\x07");
    TAP_CHECK(!strcmp(last, "rig.pto:2: field v: \"v35.1\\x1b[2J\\x1b]0;pwned\\x07\" is not a number"),
              "a log line quoting control bytes: escaped (%s)", last);
    pc_log(&lg, PC_LOG_INFO, "first line\nforged: <3>second line\n");
    TAP_CHECK(!strcmp(last, "first line\\nforged: <3>second line"),
              "a newline inside a log line cannot forge a second line; the trailing one goes (%s)", last);
    return tap_done();
}
