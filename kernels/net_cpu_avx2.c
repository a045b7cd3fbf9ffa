/* net_cpu_avx2.c - the CPU backend's learned demosaic (net_cpu_lanes.h)
 * compiled for AVX2 with FMA: 8 floats a vector, a block of 6 pixels x 16
 * output channels in 12 registers. net_cpu.c runs it where the CPU has
 * AVX2 and FMA (x86-64 only; elsewhere the file is empty). */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2,fma")
#define PC_NET_LANES pc_net_lanes_avx2
#define PC_NET_VL 8
#include "net_cpu_lanes.h"
#endif
