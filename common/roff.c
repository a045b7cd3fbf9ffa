/* roff.c - roff escaping for the generated man pages (roff.h). */
#include "roff.h"

void pc_roff_text(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else if (*s == '\n') {
            fputc('\n', f);
            if (s[1] == '.' || s[1] == '\'')
                fputs("\\&", f);
        } else
            fputc(*s, f);
    }
}
