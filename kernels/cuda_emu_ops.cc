/* cuda_emu_ops.cc - runs the RGB -> YUV conversion's kernel
 * (cuda_convert.cuh) on the CPU through cuda_emu.h, with the launch
 * geometry the device uses (convert_cuda.cu), so CI checks the kernel code
 * itself against the reference. (The activity map's is render/'s
 * cuda_emu_activity.cc.) */
#include "cuda_emu.h"

#include "convert.h"
#include "cuda_convert.cuh"
#include "cuda_emu_ops.h"
#include "errmsg.h"

template <int BPP, int FMT>
static int run_convert(const pc_ckparams &kp, dim3 grid, int vec)
{
    return pc_emu::launch(grid, dim3(PC_CVX, PC_CVY), 0, [&]() {
        if (vec)
            pc_convert_kernel<BPP, FMT, true>(kp);
        else
            pc_convert_kernel<BPP, FMT, false>(kp);
    });
}

extern "C" int pc_emu_convert(const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    int rc = pc_convert_check(src, dst, err, errlen);
    if (rc)
        return rc;
    int vec = 0;
    const char *why = pc_ckparams_misaligned(src, dst, &vec);
    pc_ckparams kp;
    if (why || pc_ckparams_set(&kp, src, dst)) {
        pc_set_err(err, errlen, "pc_emu_convert: %s", why ? why : "too many colour bands");
        return PC_EINVAL;
    }
    const dim3 grid((unsigned)(((src->width + 3) / 4 + PC_CVX - 1) / PC_CVX),
                    (unsigned)((src->height / 2 + PC_CVY - 1) / PC_CVY));
    const int nv12 = dst->fmt == PC_FMT_NV12;
    if (src->fmt == PC_FMT_RGBX32)
        rc = nv12 ? run_convert<4, PC_FMT_NV12>(kp, grid, vec) : run_convert<4, PC_FMT_I420>(kp, grid, vec);
    else
        rc = nv12 ? run_convert<3, PC_FMT_NV12>(kp, grid, 0) : run_convert<3, PC_FMT_I420>(kp, grid, 0);
    if (rc) {
        pc_set_err(err, errlen, "pc_emu_convert: threads disagree on barriers");
        return PC_EINVAL;
    }
    return 0;
}
