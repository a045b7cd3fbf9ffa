/* cuda_emu_sched.cc - the scheduler of the CUDA emulation (cuda_emu.h): the
 * threads of a block as coroutines, __syncthreads(), and the warp-level
 * collectives of cuda_emu_warp.h (ldmatrix, mma.sync, shuffles,
 * __syncwarp), each executed exactly as the PTX ISA defines it once all 32
 * lanes of the warp have arrived.
 *
 * Switching: a thread that must wait (a barrier, a collective) switches
 * straight to the next runnable thread of the block, round robin; the
 * last thread to arrive completes the operation for everyone and goes on
 * without switching. When nothing can run, control returns to launch(),
 * which moves to the next block or reports the deadlock. On x86-64 the
 * switch is a few instructions (callee-saved registers and the stack
 * pointer, cuda_emu_swap below): swapcontext makes a system call per
 * switch (sigprocmask), 1-3 us in a container, and the tensor-core
 * kernels switch tens of millions of times per test. Under AddressSanitizer
 * the switches are announced with the fiber annotations, so ASan checks
 * each coroutine against its own stack; under ThreadSanitizer and on other
 * machines swapcontext is used.
 *
 * wgmma.mma_async (A in registers) is recorded likewise and executed at the
 * warp's wgmma.wait_group, the point where the device guarantees it done.
 *
 * mma.sync is deferred: a lane records its fragments and goes on (no
 * switch); the warp's records are executed in order at its next
 * collective, at the block's next barrier, or when all its lanes have
 * returned. That is the device's result as long as a lane reads its
 * accumulators only after such a point, which cuda_mma.cuh states as the
 * rule for the kernels (they read them after __syncthreads() or
 * __syncwarp()); it saves two switches per lane per mma.
 */
#include "cuda_emu.h"

#include <memory>

#if defined(__SANITIZE_ADDRESS__)
#define PC_EMU_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#else
#define PC_EMU_ASAN 0
#endif
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define PC_EMU_FAST 1
#else
#define PC_EMU_FAST 0
#endif

#if PC_EMU_FAST
/* Saves the callee-saved registers on the current stack and its pointer in
 * *save, then loads the stack pointer `load` and returns into that
 * coroutine. MXCSR and the x87 control word are callee-saved too, but no
 * coroutine changes them (they share the thread's floating-point
 * environment), so they are left alone. */
extern "C" void pc_emu_swap(void **save, void *load);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl pc_emu_swap\n"
        ".hidden pc_emu_swap\n"
        ".type pc_emu_swap,@function\n"
        "pc_emu_swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size pc_emu_swap, .-pc_emu_swap\n"
        ".section .note.GNU-stack,\"\",@progbits\n"
        ".text\n");
#endif

namespace pc_emu {

[[noreturn]] static void fail(const char *what)
{
    fprintf(stderr, "cuda_emu: %s\n", what);
    abort();
}

/* from -> to. exits: from never resumes (a returned thread). */
static void jump(context &from, context &to, bool exits)
{
#if PC_EMU_ASAN
    __sanitizer_start_switch_fiber(exits ? nullptr : &from.fake, to.bottom, to.size);
#else
    (void)exits;
#endif
#if PC_EMU_FAST
    pc_emu_swap(&from.sp, to.sp);
#else
    swapcontext(&from.uc, &to.uc);
#endif
#if PC_EMU_ASAN
    const void *b;
    size_t n;
    __sanitizer_finish_switch_fiber(from.fake, &b, &n);
#endif
}

/* Leaves thread t (its st already says why: waiting or returned) for the
 * next runnable thread after it, or for launch() when there is none. */
static void leave(state *s, thread *t, bool exits)
{
    for (int k = 1; k < s->nt; k++) {
        thread *u = &s->th[(t->lin + k) % s->nt];
        if (u->st == PC_EMU_RUN) {
            s->cur = u;
            jump(t->ctx, u->ctx, exits);
            return;
        }
    }
    s->cur = nullptr;
    jump(t->ctx, s->sched, exits);
}

static float h2f(unsigned h)
{
    return pc_emu_half_to_float((unsigned short)h);
}

/* Executes the deferred mma.sync of warp w, in program order. PTX ISA
 * 9.7.14.5.8 (mma.m16n8k16, .f16 A/B, .f32 C/D), with groupID = lane >> 2
 * and threadID_in_group t = lane & 3:
 *   A (16x16, row): a0 = {A[g][2t], A[g][2t+1]}, a1 = rows g+8, a2 =
 *     columns 2t+8, 2t+9 of row g, a3 = those of row g+8 (low half first);
 *   B (16x8, col): b0 = {B[2t][g], B[2t+1][g]}, b1 = rows 2t+8, 2t+9;
 *   C, D (16x8): c0, c1 = D[g][2t], D[g][2t+1]; c2, c3 = row g+8.
 * The products of two fp16 are exact in float; their sum over k is taken
 * in double and added to C, one rounding to float (the tensor cores keep
 * more than fp32 inside a k16 step; their exact rounding is not specified). */
static void flush_mma(state *s, int w)
{
    thread *l0 = &s->th[32 * w];
    const size_t n = l0->mma.size();
    if (!n)
        return;
    if (s->warp_lanes[w] != 32)
        fail("mma.sync in a warp of fewer than 32 threads");
    for (int i = 1; i < 32; i++)
        if (s->th[32 * w + i].mma.size() != n)
            fail("the lanes of a warp issued different numbers of mma.sync");
    for (size_t j = 0; j < n; j++) {
        float A[16][16], B[16][8];
        for (int i = 0; i < 32; i++) {
            const mma_rec &r = s->th[32 * w + i].mma[j];
            const int g = i >> 2, t = i & 3;
            A[g][2 * t] = h2f(r.a[0] & 0xFFFF), A[g][2 * t + 1] = h2f(r.a[0] >> 16);
            A[g + 8][2 * t] = h2f(r.a[1] & 0xFFFF), A[g + 8][2 * t + 1] = h2f(r.a[1] >> 16);
            A[g][2 * t + 8] = h2f(r.a[2] & 0xFFFF), A[g][2 * t + 9] = h2f(r.a[2] >> 16);
            A[g + 8][2 * t + 8] = h2f(r.a[3] & 0xFFFF), A[g + 8][2 * t + 9] = h2f(r.a[3] >> 16);
            B[2 * t][g] = h2f(r.b[0] & 0xFFFF), B[2 * t + 1][g] = h2f(r.b[0] >> 16);
            B[2 * t + 8][g] = h2f(r.b[1] & 0xFFFF), B[2 * t + 9][g] = h2f(r.b[1] >> 16);
        }
        double D[16][8];
        for (int r = 0; r < 16; r++)
            for (int c = 0; c < 8; c++) {
                double sum = 0.0;
                for (int k = 0; k < 16; k++)
                    sum += (double)(A[r][k] * B[k][c]);
                D[r][c] = sum;
            }
        for (int i = 0; i < 32; i++) {
            float *d = s->th[32 * w + i].mma[j].d;
            const int g = i >> 2, t = i & 3;
            d[0] = (float)(D[g][2 * t] + d[0]);
            d[1] = (float)(D[g][2 * t + 1] + d[1]);
            d[2] = (float)(D[g + 8][2 * t] + d[2]);
            d[3] = (float)(D[g + 8][2 * t + 1] + d[3]);
        }
        stats().mma++;
    }
    for (int i = 0; i < 32; i++)
        s->th[32 * w + i].mma.clear();
}

/* Executes warp w's recorded wgmma.mma_async of the groups that a
 * wgmma.wait_group N covers (all but the N most recent committed), in
 * program order. PTX ISA 9.7.15 (wgmma.mma_async, .m64nNk16, .f16 A in
 * registers, .f32 D): warp w % 4 of the warpgroup holds rows 16 (w % 4) ..
 * + 15 of A and D, A's fragment that of mma.m16n8k16 (a0 = {A[g][2t],
 * A[g][2t+1]}, a1 = row g+8, a2 = columns 2t+8, 2t+9, a3 = both), D per n8
 * block j as mma's C (d[4j] = D[g][8j+2t], d[4j+1] = D[g][8j+2t+1],
 * d[4j+2], d[4j+3] = row g+8); B (16 x 64) element (k, n) read from shared
 * memory at pc_wgmma_desc_addr(desc, k, n) (wgmma_desc.h: the ISA's
 * descriptor and canonical layouts), K-major (imm-trans-b 0). A warp's
 * rows depend only on its own A and the shared B, so each warp is executed
 * on its own; that the warpgroup's warps issued the same wgmma is checked
 * per block (launch). Products exact, sums in double, one rounding into d
 * (as flush_mma). */
static void exec_wgmma(state *s, int w, int keep)
{
    thread *L = &s->th[32 * w];
    if (s->warp_lanes[w] != 32)
        fail("wgmma in a warp of fewer than 32 threads");
    const size_t n = L[0].wg.size();
    for (int i = 1; i < 32; i++)
        if (L[i].wg.size() != n || L[i].wg_group != L[0].wg_group)
            fail("the lanes of a warp issued different numbers of wgmma or commit groups");
    size_t done = 0;
    for (; done < n && L[0].wg[done].group + (unsigned)keep + 1 <= L[0].wg_group; done++) {
        const uint64_t desc = L[0].wg[done].desc;
        float A[16][16], B[16][64];
        for (int i = 0; i < 32; i++) {
            const wgmma_rec &r = L[i].wg[done];
            if (r.desc != desc)
                fail("wgmma: the lanes of a warp gave different descriptors");
            const int g = i >> 2, t = i & 3;
            A[g][2 * t] = h2f(r.a[0] & 0xFFFF), A[g][2 * t + 1] = h2f(r.a[0] >> 16);
            A[g + 8][2 * t] = h2f(r.a[1] & 0xFFFF), A[g + 8][2 * t + 1] = h2f(r.a[1] >> 16);
            A[g][2 * t + 8] = h2f(r.a[2] & 0xFFFF), A[g][2 * t + 9] = h2f(r.a[2] >> 16);
            A[g + 8][2 * t + 8] = h2f(r.a[3] & 0xFFFF), A[g + 8][2 * t + 9] = h2f(r.a[3] >> 16);
        }
        for (int k = 0; k < 16; k++)
            for (int c = 0; c < 64; c++) {
                const uint32_t a = pc_wgmma_desc_addr(desc, k, c);
                if (a == UINT32_MAX)
                    fail("wgmma: a descriptor other than K-major with the 128-byte swizzle and base offset 0 (not "
                         "emulated)");
                if ((size_t)a + 2 > s->smem.size() - 16)
                    fail("wgmma: the descriptor addresses B outside the block's shared memory (the device would "
                         "fault)");
                unsigned short h;
                memcpy(&h, s->smem.data() + a, 2);
                B[k][c] = h2f(h);
            }
        for (int i = 0; i < 32; i++) {
            float *d = L[i].wg[done].d;
            const int g = i >> 2, t = i & 3;
            for (int j = 0; j < 8; j++)
                for (int e = 0; e < 4; e++) {
                    const int r = g + 8 * (e >> 1), c = 8 * j + 2 * t + (e & 1);
                    double sum = 0.0;
                    for (int k = 0; k < 16; k++)
                        sum += (double)(A[r][k] * B[k][c]);
                    d[4 * j + e] = (float)(sum + d[4 * j + e]);
                }
        }
        s->wg_count[w]++;
        s->wg_sig[w] = (s->wg_sig[w] ^ desc) * 0x100000001B3ull;
        stats().wgmma++;
    }
    for (int i = 0; i < 32; i++)
        L[i].wg.erase(L[i].wg.begin(), L[i].wg.begin() + (long)done);
}

/* A row address of ldmatrix: 16-byte aligned, its 16 bytes inside the
 * block's shared memory (the instruction's .shared state space). */
static const unsigned short *ldsm_row(state *s, const void *p)
{
    const unsigned char *b = s->smem.data(), *q = (const unsigned char *)p;
    if (q < b || q + 16 > b + s->smem.size() - 16 || ((uintptr_t)q & 15))
        fail("ldmatrix: a row address outside shared memory or not 16-byte aligned (the device would fault)");
    return (const unsigned short *)p;
}

/* ldmatrix.sync.aligned.m8n8.x{1,2,4}{,.trans}.shared.b16 (PTX ISA
 * 9.7.9.18 (ldmatrix)): threads 8j .. 8j+7 give the addresses of rows 0-7 of
 * matrix j (only threads 0-7 for .x1, 0-15 for .x2); lane i receives in
 * register j the elements (row i >> 2, columns 2 (i & 3), 2 (i & 3) + 1) of
 * matrix j, or with .trans (rows 2 (i & 3), 2 (i & 3) + 1, column i >> 2),
 * the lower column or row in the low half. Also counts the phases and
 * their bank conflicts: the 8 rows of a matrix are one 128-byte access,
 * conflict-free when they fall in 8 different 16-byte bank groups. */
static void exec_ldsm(state *s, int w, bool trans, int nmat)
{
    thread *L = &s->th[32 * w];
    const unsigned short *row[32];
    for (int i = 0; i < 8 * nmat; i++)
        row[i] = ldsm_row(s, L[i].c.addr);
    for (int j = 0; j < nmat; j++) {
        int groups[8] = {0};
        const unsigned short *seen[8];
        int nseen = 0;
        for (int r = 0; r < 8; r++) {
            bool dup = false;
            for (int q = 0; q < nseen; q++)
                dup = dup || seen[q] == row[8 * j + r];
            if (dup)
                continue; /* the same row twice: one access */
            seen[nseen++] = row[8 * j + r];
            groups[((uintptr_t)row[8 * j + r] >> 4) & 7]++;
        }
        int wf = 0;
        for (int q = 0; q < 8; q++)
            wf = groups[q] > wf ? groups[q] : wf;
        stats().ldsm_phases++;
        stats().ldsm_wavefronts += (unsigned long long)wf;
    }
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < nmat; j++) {
            unsigned lo, hi;
            if (!trans) {
                const unsigned short *r = row[8 * j + (i >> 2)];
                lo = r[2 * (i & 3)];
                hi = r[2 * (i & 3) + 1];
            } else {
                lo = row[8 * j + 2 * (i & 3)][i >> 2];
                hi = row[8 * j + 2 * (i & 3) + 1][i >> 2];
            }
            L[i].c.out[j] = lo | hi << 16;
        }
}

/* __shfl_*_sync (CUDA programming guide, warp shuffle functions), full
 * mask only; width w splits the warp into segments of w lanes. */
static void exec_shfl(state *s, int w, int op)
{
    thread *L = &s->th[32 * w];
    if (s->warp_lanes[w] != 32)
        fail("__shfl_sync in a warp of fewer than 32 threads");
    for (int i = 0; i < 32; i++) {
        const int width = L[i].c.n, arg = L[i].c.arg;
        if (L[i].c.mask != 0xFFFFFFFFu)
            fail("__shfl_sync with a partial member mask (the emulation takes full warps only)");
        if (width < 1 || width > 32 || (width & (width - 1)))
            fail("__shfl_sync: width not a power of 2 up to 32");
        const int seg = i & ~(width - 1);
        int src = i;
        if (op == PC_EMU_OP_SHFL_IDX)
            src = seg + (arg & (width - 1));
        else if (op == PC_EMU_OP_SHFL_XOR)
            src = (i ^ arg) < seg + width ? i ^ arg : i; /* a later segment: its own value */
        else if (op == PC_EMU_OP_SHFL_DOWN)
            src = (i & (width - 1)) + arg < width ? i + arg : i;
        else
            src = (i & (width - 1)) - arg >= 0 ? i - arg : i;
        L[i].c.out[0] = L[src & 31].c.val;
    }
}

void warp_collective(int op)
{
    state *s = current();
    thread *t = s->cur;
    t->c.op = op;
    const int w = t->warp;
    if (++s->warp_arrived[w] < s->warp_lanes[w]) {
        t->st = PC_EMU_WARP;
        leave(s, t, false);
        return; /* the last lane did the work */
    }
    s->warp_arrived[w] = 0;
    thread *L = &s->th[32 * w];
    for (int i = 0; i < s->warp_lanes[w]; i++)
        if (L[i].c.op != op || L[i].c.n != t->c.n)
            fail("the lanes of a warp wait at different warp collectives (divergent warp code)");
    flush_mma(s, w);
    stats().collectives++;
    if (op == PC_EMU_OP_LDSM || op == PC_EMU_OP_LDSM_TRANS) {
        if (s->warp_lanes[w] != 32)
            fail("ldmatrix in a warp of fewer than 32 threads");
        exec_ldsm(s, w, op == PC_EMU_OP_LDSM_TRANS, t->c.n);
    } else if (op == PC_EMU_OP_WGMMA_WAIT) {
        exec_wgmma(s, w, t->c.n);
    } else if (op != PC_EMU_OP_SYNCWARP) {
        exec_shfl(s, w, op);
    } else {
        for (int i = 0; i < s->warp_lanes[w]; i++)
            if (L[i].c.mask != 0xFFFFFFFFu)
                fail("__syncwarp with a partial member mask (the emulation takes full warps only)");
    }
    for (int i = 0; i < s->warp_lanes[w]; i++)
        if (L[i].st == PC_EMU_WARP)
            L[i].st = PC_EMU_RUN;
}

void syncthreads()
{
    state *s = current();
    thread *t = s->cur;
    if (++s->bar < s->nt) {
        t->st = PC_EMU_BAR;
        leave(s, t, false);
        return;
    }
    s->bar = 0;
    for (size_t w = 0; w < s->warp_lanes.size(); w++)
        flush_mma(s, (int)w);
    for (int i = 0; i < s->nt; i++)
        if (s->th[i].st == PC_EMU_BAR)
            s->th[i].st = PC_EMU_RUN;
}

static void entry()
{
    state *s = current();
#if PC_EMU_ASAN
    const void *b;
    size_t n;
    __sanitizer_finish_switch_fiber(nullptr, &b, &n);
    if (!s->sched_known) { /* the first thread of a launch starts from launch() */
        s->sched.bottom = b;
        s->sched.size = n;
        s->sched_known = 1;
    }
#endif
    s->body();
    thread *t = s->cur;
    t->st = PC_EMU_DONE;
    t->cp.clear(); /* copies never waited for: nothing reads them */
    t->wg.clear(); /* likewise wgmma never waited for */
    bool all = true;
    for (int i = 0; i < s->warp_lanes[t->warp]; i++)
        all = all && s->th[32 * t->warp + i].st == PC_EMU_DONE;
    if (all) /* results nobody reads, but the records must go */
        for (int i = 0; i < s->warp_lanes[t->warp]; i++)
            s->th[32 * t->warp + i].mma.clear();
    leave(s, t, true);
    fail("a returned thread was resumed");
}

#if !PC_EMU_FAST
static void entry_uc() { entry(); }
#endif

static void start(thread &t)
{
    t.st = PC_EMU_RUN;
    t.mma.clear();
    t.cp.clear();
    t.cp_group = 0;
    t.wg.clear();
    t.wg_group = 0;
#if PC_EMU_ASAN
    __asan_unpoison_memory_region(t.stack, PC_EMU_STACK); /* frames of a previous block's thread */
    t.ctx.bottom = t.stack;
    t.ctx.size = PC_EMU_STACK;
    t.ctx.fake = nullptr;
#endif
#if PC_EMU_FAST
    /* entry() is entered by the `ret` of pc_emu_swap as if called: rsp + 8
     * 16-byte aligned there, a null return address above it */
    uintptr_t top = ((uintptr_t)(t.stack + PC_EMU_STACK)) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr;
    *--sp = (void *)&entry;
    for (int i = 0; i < 6; i++)
        *--sp = nullptr; /* rbp rbx r12 r13 r14 r15 */
    t.ctx.sp = sp;
#else
    getcontext(&t.ctx.uc);
    t.ctx.uc.uc_stack.ss_sp = t.stack;
    t.ctx.uc.uc_stack.ss_size = PC_EMU_STACK;
    t.ctx.uc.uc_link = nullptr;
    makecontext(&t.ctx.uc, entry_uc, 0);
#endif
}

/* The threads' stacks, kept from launch to launch: allocating and
 * poisoning 256 KB per thread per launch made the emulation tests spend as
 * much time in the kernel (page faults) as in the kernels. Each launch
 * poisons the top PC_EMU_POISON bytes again (the frames the kernels use;
 * deeper, a stack holds what an earlier thread left there, which is just
 * as stale). A launch from inside an emulated kernel (none does) gets
 * stacks of its own. */
#define PC_EMU_POISON (64 * 1024)
static std::vector<std::unique_ptr<char[]>> &stack_pool()
{
    static std::vector<std::unique_ptr<char[]>> pool;
    return pool;
}

int launch(dim3 grid, dim3 block, size_t smem_bytes, std::function<void()> body)
{
    state s;
    s.grid_dim = grid;
    s.block_dim = block;
    s.body = body;
    s.sched_known = 0;
    s.cur = nullptr;
    state *prev = current();
    current() = &s;
    const int nt = (int)(block.x * block.y * block.z), nw = (nt + 31) / 32;
    s.nt = nt;
    s.th.resize((size_t)nt);
    s.warp_arrived.assign((size_t)nw, 0);
    s.warp_lanes.assign((size_t)nw, 32);
    s.warp_lanes[(size_t)nw - 1] = nt - 32 * (nw - 1);
    std::vector<std::unique_ptr<char[]>> own;
    std::vector<std::unique_ptr<char[]>> &pool = prev ? own : stack_pool();
    while (pool.size() < (size_t)nt) {
        pool.emplace_back(new char[PC_EMU_STACK]);
        memset(pool.back().get(), 0xA5, PC_EMU_STACK);
    }
    for (int i = 0; i < nt; i++) {
        thread &t = s.th[(size_t)i];
        t.stack = pool[(size_t)i].get();
#if PC_EMU_ASAN
        __asan_unpoison_memory_region(t.stack, PC_EMU_STACK);
#endif
        memset(t.stack + PC_EMU_STACK - PC_EMU_POISON, 0xA5, PC_EMU_POISON); /* poisoned, like fresh registers */
        t.tid = dim3(i % block.x, (i / block.x) % block.y, i / (block.x * block.y));
        t.lin = i;
        t.lane = i & 31;
        t.warp = i >> 5;
    }
    int rc = 0;
    for (unsigned bz = 0; bz < grid.z && !rc; bz++)
        for (unsigned by = 0; by < grid.y && !rc; by++)
            for (unsigned bx = 0; bx < grid.x && !rc; bx++) {
                s.block_idx = dim3(bx, by, bz);
                s.smem.assign(smem_bytes + 16, 0xA5); /* poisoned, like stale smem */
                s.bar = 0;
                std::fill(s.warp_arrived.begin(), s.warp_arrived.end(), 0);
                for (auto &t : s.th)
                    start(t);
                s.wg_count.assign((size_t)nw, 0);
                s.wg_sig.assign((size_t)nw, 0);
                s.cur = &s.th[0];
                jump(s.sched, s.th[0].ctx, false);
                for (auto &t : s.th)
                    if (t.st != PC_EMU_DONE)
                        rc = -1; /* deadlock: waiting for threads that returned or wait elsewhere */
                /* wgmma is a warpgroup's: 4 consecutive warps from a
                 * multiple of 4, all issuing the same */
                for (int w = 0; w < nw && !rc; w++)
                    if (s.wg_count[(size_t)w] &&
                        (nt % 128 || s.wg_count[(size_t)w] != s.wg_count[(size_t)(w & ~3)] ||
                         s.wg_sig[(size_t)w] != s.wg_sig[(size_t)(w & ~3)]))
                        fail("wgmma: the warps of a warpgroup issued different wgmma, or the block is not whole "
                             "warpgroups");
            }
    current() = prev;
    return rc;
}

} // namespace pc_emu
