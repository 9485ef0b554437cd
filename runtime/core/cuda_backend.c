/* The public CUDA functions (tg_core.h) and the loading of the CUDA backend.
 *
 * The core library links no CUDA library: the CUDA backend is libtensorgen_cuda (runtime/cuda,
 * kernels/cuda and the generated table of CUDA kernels), like PyTorch's libtorch_cuda. When it
 * loads, its constructor registers its device hooks, its kernels and the functions below need
 * (tg__register_cuda_backend). A program linking the static libraries links it whole, so it is
 * there from the start; a program using libtensorgen.so gets it on first demand for CUDA (a
 * tensor on a CUDA device, a kernel for the CUDA key, tg_cuda_is_available()): it is dlopen'ed
 * from beside libtensorgen.so.0, else from the loader's search path. Without it, or without a
 * GPU, there are no devices, and creating a CUDA tensor fails naming the operator and why. */
#include "core/rt_private.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define BACKEND_SONAME "libtensorgen_cuda.so.0"

static const tg__cuda_backend *backend; /* set once by the backend's constructor */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_failure[512] = "the CUDA backend was not looked for";

void tg__register_cuda_backend(const tg__cuda_backend *b)
{
    __atomic_store_n(&backend, b, __ATOMIC_RELEASE);
}

static const tg__cuda_backend *loaded(void) { return __atomic_load_n(&backend, __ATOMIC_ACQUIRE); }

/* dl_iterate_phdr visits the main program first: whether `addr` lies in one of its segments. */
typedef struct {
    uintptr_t addr;
    bool in_main;
} where;
static int find_main(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    where *w = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && w->addr >= lo && w->addr < lo + ph->p_memsz) w->in_main = true;
    }
    return 1; /* the main program only */
}

static void load(void)
{
    if (loaded()) return; /* linked in (the static libraries) */
    where w = { (uintptr_t)&tg_cuda_is_built, false };
    dl_iterate_phdr(find_main, &w);
    if (w.in_main) {
        /* libtensorgen.so.0, which the backend links, would be a second core in the process. */
        snprintf(load_failure, sizeof load_failure,
                 "this program links the static library (libtensorgen.a) without the CUDA "
                 "backend: link libtensorgen_cuda.a too, as a whole archive");
        return;
    }
    Dl_info self;
    char path[4096] = "";
    if (dladdr((void *)&tg_cuda_is_built, &self) && self.dli_fname && strrchr(self.dli_fname, '/'))
        snprintf(path, sizeof path, "%.*s/" BACKEND_SONAME,
                 (int)(strrchr(self.dli_fname, '/') - self.dli_fname), self.dli_fname);
    /* RTLD_NODELETE: the backend's kernels and hooks stay registered for the process. */
    void *h = path[0] ? dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) : NULL;
    if (!h) h = dlopen(BACKEND_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        const char *why = dlerror();
        snprintf(load_failure, sizeof load_failure, "the CUDA backend could not be loaded (%s)",
                 why ? why : BACKEND_SONAME " not found");
    } else if (!loaded()) {
        snprintf(load_failure, sizeof load_failure,
                 "the CUDA backend " BACKEND_SONAME " loaded but did not register");
    }
}

bool tg__cuda_backend_load(void)
{
    if (loaded()) return true;
    pthread_once(&load_once, load);
    return loaded() != NULL;
}

const char *tg__cuda_backend_missing(void) { return load_failure; }

bool tg_cuda_is_built(void) { return tg__cuda_backend_load(); }
bool tg_cuda_is_available(void) { return tg__cuda_backend_load() && loaded()->device_count() > 0; }
int tg_cuda_device_count(void) { return tg__cuda_backend_load() ? loaded()->device_count() : 0; }

/* Nothing to wait for, and no memory held, while the backend is not loaded. */
int tg_cuda_synchronize(void) { return loaded() ? loaded()->synchronize() : 0; }
static int64_t memory_stat(int device, int which)
{
    return loaded() ? loaded()->memory_stat(device, which) : 0;
}
int64_t tg_cuda_memory_allocated(int device) { return memory_stat(device, 0); }
int64_t tg_cuda_memory_reserved(int device) { return memory_stat(device, 1); }
int64_t tg_cuda_max_memory_allocated(int device) { return memory_stat(device, 2); }
void tg_cuda_empty_cache(void)
{
    if (loaded()) loaded()->empty_cache();
}

void *tg_cuda_stream(int device)
{
    if (!tg__cuda_backend_load())
        return tg__error("cuda_stream", "CUDA is not available: %s", tg__cuda_backend_missing());
    return loaded()->stream(device);
}
