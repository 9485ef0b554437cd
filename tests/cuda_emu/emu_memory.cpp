/* cuda-emu device memory: one mapping per cudaMalloc block, [guard page][data][guard page],
 * the block's end placed against the second guard page. Data pages are PROT_NONE except while
 * stream work of their device runs (open_devices), so the CPU traps every access a GPU would
 * not allow, and the SIGSEGV handler below explains it before the process dies. */
#include "emu_internal.h"

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>

namespace tg_emu {

static const size_t kPage = 4096;

static std::map<const char *, Block> &blocks() /* by ptr */
{
    static std::map<const char *, Block> m;
    return m;
}
static size_t used[kMaxDevices];
static unsigned open_mask;               /* devices whose memory is accessible now */
static thread_local const char *running; /* the work running now (for the fault message) */

size_t capacity_bytes()
{
    static size_t cap = [] {
        const char *e = getenv("TG_CUDA_EMU_MEMORY_MB");
        long long mb = e ? atoll(e) : 8192;
        return (size_t)(mb > 0 ? mb : 8192) << 20;
    }();
    return cap;
}

size_t used_bytes(int device) { return device >= 0 && device < kMaxDevices ? used[device] : 0; }

static size_t data_len(const Block &b) { return b.map_len - 2 * kPage; }

static void protect(const Block &b, bool open)
{
    if (mprotect(b.map + kPage, data_len(b), open ? PROT_READ | PROT_WRITE : PROT_NONE) != 0)
        die("mprotect failed: %s", strerror(errno));
}

cudaError_t alloc(void **p, size_t size, int device)
{
    if (!p) return fail(cudaErrorInvalidValue);
    *p = nullptr;
    if (size == 0) return cudaSuccess;
    if (size > capacity_bytes() || used[device] + size > capacity_bytes())
        return fail(cudaErrorMemoryAllocation);
    size_t rounded = (size + 255) / 256 * 256; /* cudaMalloc's 256-byte alignment */
    size_t pages = (rounded + kPage - 1) / kPage;
    size_t len = (pages + 2) * kPage;
    void *m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return fail(cudaErrorMemoryAllocation);
    Block b;
    b.map = (char *)m;
    b.map_len = len;
    b.ptr = b.map + kPage + pages * kPage - rounded;
    b.size = size;
    b.device = device;
    if (open_mask & (1u << device)) protect(b, true);
    blocks()[b.ptr] = b;
    used[device] += size;
    *p = b.ptr;
    return cudaSuccess;
}

cudaError_t release(void *p)
{
    auto it = blocks().find((const char *)p);
    if (it == blocks().end()) return fail(cudaErrorInvalidValue);
    used[it->second.device] -= it->second.size;
    munmap(it->second.map, it->second.map_len);
    blocks().erase(it);
    return cudaSuccess;
}

/* The block whose mapping (guards included) holds p, or null. */
static const Block *find_mapping(const void *p)
{
    auto &m = blocks();
    auto it = m.upper_bound((const char *)p);
    if (it != m.end() && (const char *)p >= it->second.map) return &it->second; /* leading guard */
    if (it == m.begin()) return nullptr;
    --it;
    const Block &b = it->second;
    return (const char *)p < b.map + b.map_len ? &b : nullptr;
}

const Block *find(const void *p, size_t n)
{
    const Block *b = find_mapping(p);
    if (!b || (const char *)p < b->ptr || (const char *)p + n > b->ptr + b->size) return nullptr;
    return b;
}

void open_devices(unsigned mask, const char *what)
{
    running = what;
    unsigned add = mask & ~open_mask;
    if (!add) return;
    for (auto &kv : blocks())
        if (add & (1u << kv.second.device)) protect(kv.second, true);
    open_mask |= add;
}

void close_devices(unsigned mask)
{
    running = nullptr;
    unsigned drop = mask & open_mask;
    if (!drop) return;
    for (auto &kv : blocks())
        if (drop & (1u << kv.second.device)) protect(kv.second, false);
    open_mask &= ~drop;
}

void die(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda-emu: %s\n", msg);
    void *frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 2);
    fflush(stderr);
    signal(SIGABRT, SIG_DFL);
    abort();
}

/* ------------------------------------------------------------------ the fault handler */

static void on_fault(int sig, siginfo_t *si, void *)
{
    const char *addr = (const char *)si->si_addr;
    const Block *b = find_mapping(addr);
    char where[256];
    if (!b) snprintf(where, sizeof where, "%p, which is not device memory", (const void *)addr);
    else if (addr < b->ptr)
        snprintf(where, sizeof where, "%p, %td bytes before a %zu-byte block of cuda:%d",
                 (const void *)addr, b->ptr - addr, b->size, b->device);
    else if (addr >= b->ptr + b->size)
        snprintf(where, sizeof where, "%p, %td bytes past the end of a %zu-byte block of cuda:%d",
                 (const void *)addr, addr - (b->ptr + b->size), b->size, b->device);
    else
        snprintf(where, sizeof where, "%p, byte %td of a %zu-byte block of cuda:%d",
                 (const void *)addr, addr - b->ptr, b->size, b->device);
    if (running)
        fprintf(stderr, "cuda-emu: %s touched %s (%s)\n", running, where,
                b && addr >= b->ptr && addr < b->ptr + b->size
                    ? "memory of a device it does not run on"
                    : "out of bounds");
    else
        fprintf(stderr, "cuda-emu: host code touched %s; on a GPU this is a crash or garbage\n",
                where);
    void *frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL); /* returning re-runs the access, which now kills the process */
}

__attribute__((constructor)) static void install_handler()
{
    static char altstack[64 * 1024];
    stack_t ss;
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
}

} // namespace tg_emu
