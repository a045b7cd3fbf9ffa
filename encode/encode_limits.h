/* encode_limits.h - the encoder's limits, in one place: encoder.c enforces
 * them and the settings' key table (config/settings_keys.c) takes its
 * ranges from here, so --check-config and a run refuse the same values.
 * Plain numbers only: usable without FFmpeg's headers. */
#ifndef PANOCAP_ENCODE_LIMITS_H
#define PANOCAP_ENCODE_LIMITS_H

#define PC_ENCODE_MIN_BITRATE 100000LL    /* bit/s */
#define PC_ENCODE_MAX_BITRATE 800000000LL /* bit/s: 800 Mbit/s */
#define PC_ENCODE_MAX_PKT_SIZE 65507      /* UDP/SRT datagram payload */
#define PC_ENCODE_MIN_SIDE 16             /* pixels: a picture's width and height (even) */
#define PC_ENCODE_MAX_SIDE 16384

#endif
