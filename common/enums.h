/* enums.h - enumerations that the configuration and the modules acting on
 * it share, defined once so that the daemon can include every header. */
#ifndef PANOCAP_ENUMS_H
#define PANOCAP_ENUMS_H

/* Where frames come from (capture/). */
typedef enum pc_source_kind {
    PC_SOURCE_GIGE = 0, /* GigE Vision cameras by IP, serial or device id */
    PC_SOURCE_FAKE = 1, /* Aravis in-process fake cameras (no network) */
    PC_SOURCE_FILE = 2, /* replay of a PCRAW1 file (capture/raw_format.md) */
} pc_source_kind;

/* How cameras are triggered (capture/). */
typedef enum pc_trigger_mode {
    PC_TRIGGER_FREE_RUN = 0, /* camera runs at fps on its own clock */
    PC_TRIGGER_SOFTWARE = 1, /* panocap triggers all cameras at fps */
    PC_TRIGGER_HARDWARE = 2, /* external pulse on the trigger line */
} pc_trigger_mode;

/* Codec of the NVENC path (encode/); software encoders imply their own. */
typedef enum pc_codec {
    PC_CODEC_HEVC = 0, /* hevc_nvenc: frames up to 8192x8192 (default) */
    PC_CODEC_H264 = 1, /* h264_nvenc: frames up to 4096x4096 */
} pc_codec;

/* How the panorama is laid out for the encoder (daemon/pipeline*.c). */
typedef enum pc_layout {
    PC_LAYOUT_AUTO = 0,    /* stacked when the encoder takes it, else bands (logged why) */
    PC_LAYOUT_STACKED = 1, /* one picture: the camera slabs one above the other */
    PC_LAYOUT_GRID = 2,    /* one picture: the cameras tiled C x R */
    PC_LAYOUT_BANDS = 3,   /* K pictures of whole camera slabs, one encoder each */
} pc_layout;

/* Where the bands' streams go. */
typedef enum pc_band_outputs {
    PC_BAND_OUTPUTS_SEPARATE = 0, /* one output per band: %b in the URL = band number */
    PC_BAND_OUTPUTS_STREAMS = 1,  /* each output has K video streams, one per band (default) */
} pc_band_outputs;

#endif
