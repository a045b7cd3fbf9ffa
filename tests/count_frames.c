/* count_frames.c - decodes every frame of each recording given and prints
 * "FILE: N frames WxH codec, E decode errors" (daemon_testutil.h's
 * decoder, libavformat + libavcodec), so that tools/gpu-e2e can count the
 * sets a recording holds on a machine without FFmpeg's programs. Exit 1
 * when a file cannot be decoded. Not a test; built beside them. */
#include "daemon_testutil.h"

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        dt_decoded d;
        int r = dt_decode(argv[i], NULL, NULL, &d);
        if (r) {
            printf("%s: cannot be decoded (step %d)\n", argv[i], -r);
            rc = 1;
            continue;
        }
        printf("%s: %d frames %dx%d %s, %d decode errors\n", argv[i], d.frames, d.width, d.height, d.codec,
               d.errors);
    }
    return rc;
}
