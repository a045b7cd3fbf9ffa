/* errmsg.c - pc_set_err (errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void pc_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
