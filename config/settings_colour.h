/* settings_colour.h - one camera's colour keys (pixel_format, black_level,
 * white_level, wb_gains, ccm, transfer) as the colour stage's types
 * (kernels/colour.h). Used by validation (errors name the key) and by the
 * daemon when it builds the tables. */
#ifndef PANOCAP_SETTINGS_COLOUR_H
#define PANOCAP_SETTINGS_COLOUR_H

#include "colour.h"
#include "settings.h"

/* Gigabit Ethernet's payload rate, for the link warning. */
#define PC_GIGE_PAYLOAD_BYTES_S 118e6

typedef struct pc_camera_colour {
    pc_rawfmt fmt;
    int fmt_auto;      /* pixel_format "auto": fmt is a stand-in (12-bit) */
    pc_colour_cfg cfg; /* cfg.lut points into lut */
    int wb_auto;       /* 0 manual, 1 "auto" (own estimate), 2 "auto shared" */
    uint8_t *lut;      /* transfer LUT file contents (malloc'd) or NULL */
} pc_camera_colour;

/* Fills out from c. On error returns -1 with the key's name in key ("ccm")
 * and the message in err; nothing to free then. */
int pc_settings_camera_colour(const pc_camera_settings *c, pc_camera_colour *out, char *key, size_t keylen,
                              char *err, size_t errlen);
void pc_camera_colour_free(pc_camera_colour *cc);

#endif
