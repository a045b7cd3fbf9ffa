/* http_token.c - the web control token's file (daemon.http_token_file):
 * read it, or make it with a new random token (see pc_http_token_load in
 * http.h). */
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_MIN 16
#define TOKEN_MAX 256

static int make_token_file(const char *path, char *token, size_t len, char *err, size_t errlen)
{
    unsigned char raw[32];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(err, errlen, "%s: no random bytes for a new token: %s", path, strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    if (len < 2 * sizeof raw + 1) {
        snprintf(err, errlen, "%s: token buffer too small", path);
        return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(token + 2 * i, 3, "%02x", raw[i]);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot make the token file: %s", path, strerror(errno));
        return -1;
    }
    char line[2 * sizeof raw + 2];
    int n = snprintf(line, sizeof line, "%s\n", token);
    int ok = fchmod(fd, 0600) == 0 && write(fd, line, (size_t)n) == n && fsync(fd) == 0;
    int e = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        unlink(path);
        snprintf(err, errlen, "%s: cannot write the token file: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

int pc_http_token_load(const char *path, char *token, size_t len, int *created, char *err, size_t errlen)
{
    *created = 0;
    if (len)
        token[0] = '\0';
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
        if (make_token_file(path, token, len, err, errlen))
            return -1;
        *created = 1;
        return 0;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot read the token file: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        snprintf(err, errlen, "%s: the token file is not a regular file", path);
        return -1;
    }
    if (sb.st_mode & 077) {
        close(fd);
        snprintf(err, errlen, "%s: the token file may be read or written by other users (mode %04o); "
                 "chmod 600 it", path, (unsigned)(sb.st_mode & 07777));
        return -1;
    }
    char buf[TOKEN_MAX + 64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        snprintf(err, errlen, "%s: cannot read the token file: %s", path, strerror(e));
        return -1;
    }
    buf[n] = '\0';
    size_t a = strspn(buf, " \t\r\n"), b = (size_t)n;
    while (b > a && strchr(" \t\r\n", buf[b - 1]))
        b--;
    size_t tl = b - a;
    for (size_t i = a; i < b; i++)
        if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f) {
            snprintf(err, errlen, "%s: the token must be one word of printable ASCII characters (byte %zu "
                     "is not)", path, i);
            return -1;
        }
    if (tl < TOKEN_MIN || tl > TOKEN_MAX || tl + 1 > len) {
        snprintf(err, errlen, "%s: the token has %zu characters; it needs %d to %d (delete the file and "
                 "panocap makes a new one)", path, tl, TOKEN_MIN, TOKEN_MAX);
        return -1;
    }
    memcpy(token, buf + a, tl);
    token[tl] = '\0';
    return 0;
}
