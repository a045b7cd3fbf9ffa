/* errmsg.h - the one helper behind every module's `char *err, size_t errlen`
 * convention: a printf-style message written into err (nothing when err is
 * NULL or errlen is 0); and the escaping of control bytes, so that a
 * message quoting input (a .pto's field, a config value, a control
 * command) never writes raw terminal escapes to a terminal or the journal.
 */
#ifndef PANOCAP_ERRMSG_H
#define PANOCAP_ERRMSG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void pc_set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Copies the len bytes of src into dst (n bytes, NUL-terminated when n >
 * 0), each control byte (0x00..0x1f, 0x7f) written as \t, \n, \r or
 * \xHH: "v35.1\x1b[2J" for ESC. Stops where the next character would not
 * fit whole. Returns the bytes written (without the NUL). */
size_t pc_escape_ctl(char *dst, size_t n, const char *src, size_t len);
/* The same in place on the NUL-terminated s (a buffer of cap bytes): cut
 * where the escaped text would pass cap. Returns 1 when it changed s. */
int pc_escape_ctl_inplace(char *s, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
