/* roff.h - writing text into man pages (roff): escaping, so that help
 * strings from the option and key tables can be used as they are. */
#ifndef PANOCAP_ROFF_H
#define PANOCAP_ROFF_H

#include <stdio.h>

/* Text with backslashes escaped, '-' as \- (a real minus, so options
 * copy and search correctly) and a leading '.' or '\'' made literal. */
void pc_roff_text(FILE *f, const char *s);

#endif
