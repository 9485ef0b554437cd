/* cuda-emu kernel execution: a grid runs block after block; the threads of a block are fibers
 * on the calling OS thread, resumed in thread order. A fiber runs until it finishes
 * or reaches __syncthreads; when every unfinished thread of the block waits at the barrier, all
 * are released (threads that have exited count as arrived, as on sm_70 and later). So shared
 * memory, barriers and atomics mean what they mean on the device, and a missing barrier shows:
 * thread 0 runs ahead of thread 1 until it waits. Fiber stacks are mmap'd with a guard page. */
#include "emu_internal.h"

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#include <vector>

thread_local uint3 tg_emu_threadIdx, tg_emu_blockIdx;
thread_local dim3 tg_emu_blockDim, tg_emu_gridDim;

namespace tg_emu {

static const size_t kStack = 256 * 1024;

/* The context switch: saves the callee-saved registers on the current stack, stores the stack
 * pointer in *from, and resumes the stack `to` (made by switch_to's own pushes, or by
 * new_stack). Everything else is caller-saved across this call. glibc's swapcontext would also
 * save the signal mask, a system call per switch: two thirds of the emulator's time. */
extern "C" void tg_emu_switch(void **from, void *to);
__asm__(".text\n"
        ".globl tg_emu_switch\n"
        ".type tg_emu_switch,@function\n"
        "tg_emu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size tg_emu_switch,.-tg_emu_switch\n");

struct Fiber {
    void *sp = nullptr;
    char *stack = nullptr;
    bool done = false;
    uint3 tid;
};

static thread_local std::vector<Fiber> *pool;
static thread_local void *scheduler_sp;
static thread_local Fiber *running_fiber;
static thread_local const std::function<void()> *body;

/* Stack switches, told to AddressSanitizer when the emulator is built with it so that it knows
 * which stack is live (a fiber learns the scheduler's stack each time it is resumed). */
#if defined(__SANITIZE_ADDRESS__)
static thread_local const void *scheduler_bottom;
static thread_local size_t scheduler_size;
/* From the scheduler into fiber f. */
static void enter_fiber(Fiber &f)
{
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f.stack, kStack);
    tg_emu_switch(&scheduler_sp, f.sp);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
}
/* From fiber f back to the scheduler; `last`: f has finished and is never resumed. */
static void leave_fiber(Fiber &f, bool last)
{
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(last ? nullptr : &fake, scheduler_bottom, scheduler_size);
    tg_emu_switch(&f.sp, scheduler_sp);
    __sanitizer_finish_switch_fiber(fake, &scheduler_bottom, &scheduler_size);
}
#define ENTERED_FIBER() __sanitizer_finish_switch_fiber(nullptr, &scheduler_bottom, &scheduler_size)
#else
static void enter_fiber(Fiber &f) { tg_emu_switch(&scheduler_sp, f.sp); }
static void leave_fiber(Fiber &f, bool) { tg_emu_switch(&f.sp, scheduler_sp); }
#define ENTERED_FIBER() ((void)0)
#endif

[[noreturn]] static void fiber_main()
{
    ENTERED_FIBER();
    (*body)();
    Fiber *f = running_fiber;
    f->done = true;
    leave_fiber(*f, true); /* never resumed */
    __builtin_unreachable();
}

/* A fresh context on f's stack that starts in fiber_main: what tg_emu_switch pops (control
 * words, six registers), then fiber_main as the return address, entered with the stack
 * aligned as after a call. */
static void new_stack(Fiber &f)
{
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(f.stack, kStack); /* the last thread ended inside frames */
#endif
    uintptr_t top = ((uintptr_t)f.stack + kStack) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr; /* fiber_main's (absent) return address */
    *--sp = (void *)&fiber_main;
    for (int i = 0; i < 6; i++) *--sp = nullptr; /* rbp rbx r12 r13 r14 r15 */
    uint32_t cw[2];
    __asm__ volatile("stmxcsr %0" : "=m"(cw[0]));
    __asm__ volatile("fnstcw %0" : "=m"(*(uint16_t *)&cw[1]));
    cw[1] &= 0xffff;
    *--sp = *(void **)cw;
    f.sp = sp;
}

static Fiber &fiber(size_t i)
{
    if (!pool) pool = new std::vector<Fiber>();
    while (pool->size() <= i) pool->emplace_back();
    Fiber &f = (*pool)[i];
    if (!f.stack) {
        char *m = (char *)mmap(nullptr, kStack + 4096, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) die("no memory for a fiber stack");
        mprotect(m, 4096, PROT_NONE); /* stack overflow traps */
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
                    new_stack(f);
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
                        enter_fiber(f);
                        if (!f.done) left++;
                    }
                }
                running_fiber = nullptr;
            }
    body = saved_body;
}

} // namespace tg_emu

void tg_emu_syncthreads(void)
{
    using namespace tg_emu;
    Fiber *f = running_fiber;
    if (!f) return; /* host code: nothing to wait for */
    leave_fiber(*f, false);
}
