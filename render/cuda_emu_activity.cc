/* cuda_emu_activity.cc - runs the activity map's kernel (cuda_activity.cuh)
 * on the CPU through cuda_emu.h, with the launch geometry the device uses
 * (activity_cuda.cu), so CI checks the kernel code itself against the
 * reference. */
#include "cuda_emu.h"

#include "cuda_activity.cuh"
#include "cuda_emu_activity.h"
#include "errmsg.h"

extern "C" int pc_emu_activity(const uint8_t *luma, size_t pitch, int w, int h, uint16_t *bg, int init,
                               const pc_activity_params *p, uint32_t *counts, char *err, size_t errlen)
{
    int rc = pc_activity_check(p, w, h, err, errlen);
    if (rc)
        return rc;
    memset(counts, 0, sizeof *counts * (size_t)pc_activity_cells(w, h, p));
    pc_akparams kp;
    pc_akparams_set(&kp, luma, (int)pitch, w, h, bg, counts, init, p);
    const dim3 grid((unsigned)((w + PC_ACT_BX - 1) / PC_ACT_BX), (unsigned)((h + PC_ACT_BY - 1) / PC_ACT_BY));
    const size_t smem = sizeof(unsigned) * (size_t)pc_act_cells_x(p->cw) * pc_act_cells_y(p->ch);
    if (pc_emu::launch(grid, dim3(PC_ACT_BX, PC_ACT_BY), smem, [&]() { pc_activity_kernel(kp); })) {
        pc_set_err(err, errlen, "pc_emu_activity: threads disagree on barriers");
        return PC_EINVAL;
    }
    return 0;
}
