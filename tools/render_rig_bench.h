/* render_rig_bench.h - panocap-bench --render --rig (render_rig_bench.c). */
#ifndef PANOCAP_RENDER_RIG_BENCH_H
#define PANOCAP_RENDER_RIG_BENCH_H

typedef struct pc_render_rig_bench_opts {
    const char *rig;       /* the .pto; its i lines name the camera pictures */
    const char *peer_data; /* a folder for tools/cpu-render-peers' inputs, or NULL */
    int iters;             /* frames timed per thread count */
    int threads;           /* an extra thread count (0: none) */
} pc_render_rig_bench_opts;

/* Times the CPU renderer on the rig's own pictures, printing as it goes;
 * 0, or 1 with a message on stderr. */
int pc_render_rig_bench(const pc_render_rig_bench_opts *o);

#endif
