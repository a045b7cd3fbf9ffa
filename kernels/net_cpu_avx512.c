/* net_cpu_avx512.c - the CPU backend's learned demosaic (net_cpu_lanes.h)
 * compiled for AVX-512 (its FMA): 16 floats a vector, a block of 12 pixels
 * x 32 output channels in 24 registers. net_cpu.c runs it where the CPU
 * has AVX-512 F (x86-64 only; elsewhere the file is empty). */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512f,fma")
#define PC_NET_LANES pc_net_lanes_avx512
#define PC_NET_VL 16
#include "net_cpu_lanes.h"
#endif
