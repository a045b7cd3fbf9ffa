/* encode_limits.h - the encoder's limits, in one place: encoder.c enforces
 * them and the settings (config/settings_keys.c's ranges, the layout, the
 * panorama's and the views' sizes) take them from here, so --check-config
 * and a run refuse the same values.
 * Plain numbers only: usable without FFmpeg's headers. */
#ifndef PANOCAP_ENCODE_LIMITS_H
#define PANOCAP_ENCODE_LIMITS_H

#define PC_ENCODE_MIN_BITRATE 100000LL    /* bit/s */
#define PC_ENCODE_MAX_BITRATE 800000000LL /* bit/s: 800 Mbit/s */
#define PC_ENCODE_MAX_PKT_SIZE 65507      /* UDP/SRT datagram payload */
#define PC_ENCODE_MIN_SIDE 16             /* pixels: a picture's width and height (even) */
#define PC_ENCODE_MAX_SIDE 16384

/* The area: libavcodec opens no picture whose 8 x (width + 128) x (height
 * + 128) reaches INT_MAX (avcodec_open2's av_image_check_size: "Picture
 * size WxH is invalid"), so (width + 128) x (height + 128) is at most
 * this: 16384x16128 is the largest picture 16384 wide, 16254x16254 the
 * largest square. */
#define PC_ENCODE_MAX_AREA 268435455LL

/* 1 when a w x h picture is inside the area libavcodec opens. */
static inline int pc_encode_area_ok(long long w, long long h)
{
    return w >= 0 && h >= 0 && (w + 128) * (h + 128) <= PC_ENCODE_MAX_AREA;
}

/* The tallest even height inside the area at width w (0: none). */
static inline int pc_encode_area_max_height(long long w)
{
    long long h = PC_ENCODE_MAX_AREA / (w + 128) - 128;
    return h < 0 ? 0 : (int)(h & ~1LL);
}

#endif
