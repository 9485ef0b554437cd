/* Which kernel serves a call, once its key set is known (keys.c): the highest key wins, with
 * its unboxed kernel, else a boxed kernel registered for it, else the operator's composite
 * kernel (which serves every device), else the key's fallback; Autograd without a kernel falls
 * through to the device. CUDA's fallback is built in: the CPU kernel run on copies
 * (cpu_fallback.c, tg__cuda_cpu_fallback, which the registry holds like a registered one). */
#include "dispatch/dispatch_private.h"

int tg__dispatch_resolve(const tg_op_entry *e, tg_keyset ks, tg__resolved *r)
{
    *r = (tg__resolved){ .key = TG_KEY_CPU };
    ks &= ~tg_dispatch_excluded_keys();
    if (!(ks & TG__DEVICE_KEYS)) ks |= TG__KEY(TG_KEY_CPU); /* factories with no tensor */
    while (ks) {
        int k = 63 - __builtin_clzll(ks);
        ks &= ~TG__KEY(k);
        if (k >= TG_NUM_KEYS) continue;
        r->key = k;
        if ((r->kernel = tg__row_kernel(e, k))) return 0;
        /* The CUDA backend adds its kernels when it loads: on first demand, load it. */
        if (k == TG_KEY_CUDA && tg__cuda_backend_load() && (r->kernel = tg__row_kernel(e, k)))
            return 0;
        if (k == TG_KEY_AUTOGRAD) continue; /* nothing to record: run the device's kernel */
        if (tg__registry_boxed_kernel(e, k, &r->boxed, &r->ctx)) return 0;
        /* A composite kernel serves every device (it calls other operators); CPU and CUDA
         * have it in their slots already, a backend's key gets it here. */
        if ((r->kernel = e->composite)) return 0;
        if (tg__registry_fallback(k, &r->boxed, &r->ctx)) return 0;
        return tg__no_kernel(e, k);
    }
    return tg__no_kernel(e, TG_KEY_CPU);
}

tg_fnptr tg_dispatch_lookup(const tg_op_entry *e, tg_keyset ks, bool *boxed)
{
    tg__resolved r;
    if (boxed) *boxed = false;
    if (tg__dispatch_resolve(e, ks, &r)) return NULL;
    if (r.kernel) return r.kernel;
    if (boxed) *boxed = true;
    else tg__no_kernel(e, r.key); /* the caller cannot take the boxed path */
    return NULL;
}
