/* conf_man.h - the configuration key table written for man pages and
 * shell completion (used by tools/panocap-man at build time). */
#ifndef PANOCAP_CONF_MAN_H
#define PANOCAP_CONF_MAN_H

#include <stdio.h>

/* Every section and key as roff (.SS per section, .TP per key): type,
 * default, allowed values, unit, live-on-reload and the help text. */
void pc_settings_write_man(FILE *f);

/* Every key as --set takes it, one per line: capture.fps,
 * cameras[0].exposure, outputs[0].url... */
void pc_settings_write_set_keys(FILE *f);

/* The names a key accepts (enum names, true/false), one per line; nothing
 * for other keys. key: "debayer.algo", "capture.source"... */
void pc_settings_write_key_values(FILE *f, const char *key);

#endif
