/* cuda-emu kernel execution: a grid runs block after block; the threads of a block are fibers
 * (ucontext) on the calling OS thread, resumed in thread order. A fiber runs until it finishes
 * or reaches __syncthreads; when every unfinished thread of the block waits at the barrier, all
 * are released (threads that have exited count as arrived, as on sm_70 and later). So shared
 * memory, barriers and atomics mean what they mean on the device, and a missing barrier shows:
 * thread 0 runs ahead of thread 1 until it waits. Fiber stacks are mmap'd with a guard page. */
#include "emu_internal.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <vector>

thread_local uint3 tg_emu_threadIdx, tg_emu_blockIdx;
thread_local dim3 tg_emu_blockDim, tg_emu_gridDim;

namespace tg_emu {

static const size_t kStack = 256 * 1024;

struct Fiber {
    ucontext_t ctx;
    char *stack = nullptr;
    bool done = false;
    uint3 tid;
};

static thread_local std::vector<Fiber> *pool;
static thread_local ucontext_t scheduler;
static thread_local Fiber *running_fiber;
static thread_local const std::function<void()> *body;

static void fiber_main()
{
    (*body)();
    running_fiber->done = true;     /* returning switches to uc_link: the scheduler */
}

static Fiber &fiber(size_t i)
{
    if (!pool) pool = new std::vector<Fiber>();
    while (pool->size() <= i) pool->emplace_back();
    Fiber &f = (*pool)[i];
    if (!f.stack) {
        char *m = (char *)mmap(nullptr, kStack + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                               -1, 0);
        if (m == MAP_FAILED) die("no memory for a fiber stack");
        mprotect(m, 4096, PROT_NONE);          /* stack overflow traps */
        f.stack = m + 4096;
    }
    return f;
}

void run_grid(const char *name, dim3 grid, dim3 block, const std::function<void()> &thread_body)
{
    (void)name;
    const size_t nthreads = (size_t)block.x * block.y * block.z;
    const std::function<void()> *saved_body = body;
    body = &thread_body;
    tg_emu_gridDim = grid;
    tg_emu_blockDim = block;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                tg_emu_blockIdx = uint3{ bx, by, bz };
                for (size_t t = 0; t < nthreads; t++) {
                    Fiber &f = fiber(t);
                    f.done = false;
                    f.tid = uint3{ (unsigned)(t % block.x), (unsigned)(t / block.x % block.y),
                                   (unsigned)(t / ((size_t)block.x * block.y)) };
                    getcontext(&f.ctx);
                    f.ctx.uc_stack.ss_sp = f.stack;
                    f.ctx.uc_stack.ss_size = kStack;
                    f.ctx.uc_link = &scheduler;
                    makecontext(&f.ctx, fiber_main, 0);
                }
                /* Each pass resumes every unfinished thread once: it runs to the next barrier
                 * or to its end. After a pass every unfinished thread waits at the barrier. */
                for (size_t left = nthreads; left > 0;) {
                    left = 0;
                    for (size_t t = 0; t < nthreads; t++) {
                        Fiber &f = (*pool)[t];
                        if (f.done) continue;
                        running_fiber = &f;
                        tg_emu_threadIdx = f.tid;
                        swapcontext(&scheduler, &f.ctx);
                        if (!f.done) left++;
                    }
                }
                running_fiber = nullptr;
            }
    body = saved_body;
}

}  // namespace tg_emu

void tg_emu_syncthreads(void)
{
    using namespace tg_emu;
    Fiber *f = running_fiber;
    if (!f) return;                             /* host code: nothing to wait for */
    swapcontext(&f->ctx, &scheduler);
    tg_emu_threadIdx = f->tid;
}
