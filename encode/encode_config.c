/* encode_config.c - pc_encode_config_default (encode.h): the encoder's
 * defaults, one definition for the FFmpeg build and the stub. */
#include "encode.h"

#include <string.h>

void pc_encode_config_default(pc_encode_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->fps_num = 50;
    cfg->fps_den = 1;
    cfg->codec = PC_CODEC_HEVC;
    cfg->bitrate = 20000000;
    cfg->frame_threads = -1;
    cfg->matrix = PC_MATRIX_BT709;
    cfg->range = PC_RANGE_LIMITED;
}
