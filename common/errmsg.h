/* errmsg.h - the one helper behind every module's `char *err, size_t errlen`
 * convention: a printf-style message written into err (nothing when err is
 * NULL or errlen is 0). */
#ifndef PANOCAP_ERRMSG_H
#define PANOCAP_ERRMSG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void pc_set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
