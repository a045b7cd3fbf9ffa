/* errmsg.c - pc_set_err and the control-byte escaping (errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pc_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int is_ctl(unsigned char c) { return c < 0x20 || c == 0x7f; }

size_t pc_escape_ctl(char *dst, size_t n, const char *src, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!n)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        char e[5];
        size_t k = 0;
        if (!is_ctl(c)) {
            e[k++] = (char)c;
        } else {
            e[k++] = '\\';
            if (c == '\t' || c == '\n' || c == '\r') {
                e[k++] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
            } else {
                e[k++] = 'x';
                e[k++] = hex[c >> 4];
                e[k++] = hex[c & 15];
            }
        }
        if (o + k >= n)
            break;
        memcpy(dst + o, e, k);
        o += k;
    }
    dst[o] = '\0';
    return o;
}

int pc_escape_ctl_inplace(char *s, size_t cap)
{
    size_t len = strlen(s), i = 0;
    while (i < len && !is_ctl((unsigned char)s[i]))
        i++;
    if (i == len)
        return 0;
    /* the rest, from the first control byte, through a copy */
    char small[1024], *tail = len - i < sizeof small ? small : malloc(len - i + 1);
    if (!tail) { /* no memory: the control bytes become '?' */
        for (; i < len; i++)
            if (is_ctl((unsigned char)s[i]))
                s[i] = '?';
        return 1;
    }
    memcpy(tail, s + i, len - i);
    pc_escape_ctl(s + i, cap - i, tail, len - i);
    if (tail != small)
        free(tail);
    return 1;
}
