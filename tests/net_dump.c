/* net_dump.c - the learned demosaic on a raw mosaic file, for the tests
 * that compare it with an independent computation (test_net_numpy.py):
 *
 *   net_dump WEIGHTS IMPL CFA CAM_ROWS W H IN.raw OUT.rgb
 *
 * IMPL: ref (pc_net_ref), cpu (the CPU backend's best lanes) or
 * cpu:LANES (avx512, avx2, baseline; exit 77 when this CPU lacks them).
 * IN.raw: W x H bytes; OUT.rgb: W x H x 3 bytes (RGB24). Exit 0, 1 on an
 * error (printed), 77 for lanes this machine cannot run. */
#include "net_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: net_dump WEIGHTS ref|cpu[:LANES] CFA CAM_ROWS W H IN.raw OUT.rgb\n");
        return 64;
    }
    char err[512];
    const char *impl = argv[2];
    const int cfa = pc_cfa_from_name(argv[3]), cam = atoi(argv[4]), w = atoi(argv[5]), h = atoi(argv[6]);
    const char *lanes = strncmp(impl, "cpu:", 4) == 0 ? impl + 4 : NULL;
    if (lanes && !pc_net_cpu_lanes_usable(lanes)) {
        printf("lanes %s: not on this CPU\n", lanes);
        return 77;
    }
    pc_net *net = NULL;
    if (pc_net_load(&net, argv[1], err, sizeof err)) {
        fprintf(stderr, "net_dump: %s\n", err);
        return 1;
    }
    uint8_t *raw = malloc((size_t)w * h), *rgb = malloc((size_t)w * h * 3);
    FILE *f = fopen(argv[7], "rb");
    if (!raw || !rgb || !f || fread(raw, 1, (size_t)w * h, f) != (size_t)w * h) {
        fprintf(stderr, "net_dump: cannot read %dx%d bytes from %s\n", w, h, argv[7]);
        return 1;
    }
    fclose(f);
    pc_bayer src = {raw, (size_t)w, w, h, (pc_cfa)cfa, cam};
    pc_picture dst;
    memset(&dst, 0, sizeof dst);
    dst.fmt = PC_FMT_RGB24;
    dst.plane[0] = rgb;
    dst.pitch[0] = 3 * (size_t)w;
    dst.width = w;
    dst.height = h;
    int rc;
    if (strcmp(impl, "ref") == 0) {
        rc = pc_net_ref(net, &src, &dst, err, sizeof err);
    } else {
        pc_cpu *cpu = NULL;
        rc = pc_cpu_open(&cpu, 0, w, h, err, sizeof err);
        size_t need = pc_net_cpu_temp_bytes(net, w, rc ? 1 : pc_cpu_threads(cpu));
        uint8_t *temp = NULL;
        if (!rc && posix_memalign((void **)&temp, 64, need)) {
            snprintf(err, sizeof err, "out of memory");
            rc = 1;
        }
        if (!rc)
            rc = pc_net_cpu(cpu, net, lanes, temp, need, &src, &dst, err, sizeof err);
        free(temp);
        pc_cpu_close(cpu);
    }
    if (rc) {
        fprintf(stderr, "net_dump: %s\n", err);
        return 1;
    }
    f = fopen(argv[8], "wb");
    if (!f || fwrite(rgb, 1, (size_t)w * h * 3, f) != (size_t)w * h * 3 || fclose(f)) {
        fprintf(stderr, "net_dump: cannot write %s\n", argv[8]);
        return 1;
    }
    pc_net_free(net);
    free(raw);
    free(rgb);
    return 0;
}
