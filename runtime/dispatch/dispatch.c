/* Dispatch keys: which kernel of an operator's row serves a call.
 *
 * A call's key set is the union of its tensors' keys (the key of the device type, plus Autograd
 * when grad mode is on and the tensor requires grad) minus this thread's excluded keys. The
 * highest key wins: its unboxed kernel, else a boxed kernel registered for it, else the
 * operator's composite kernel (which serves every device), else the key's fallback; Autograd
 * without a kernel falls through to the device. CUDA's fallback is built in: the CPU kernel
 * run on copies (boxed.c, tg__cuda_cpu_fallback). */
#include "dispatch/dispatch_private.h"

#include <stdio.h>
#include <string.h>

static _Thread_local tg_keyset excluded;

tg_keyset tg_dispatch_excluded_keys(void) { return excluded; }

tg_keyset tg_dispatch_set_excluded_keys(tg_keyset ks)
{
    tg_keyset prev = excluded;
    excluded = ks;
    return prev;
}

tg_keyset tg_dispatch_tensor_keys(const tg_tensor *t)
{
    /* A tensor's device type is valid (checked when its storage was made): it is its key. */
    tg_keyset k = TG__KEY(t->device.type);
    /* Forward mode works whatever grad mode says, as in PyTorch. */
    if ((t->requires_grad && tg__grad_enabled_tls) || t->fw_dual) k |= TG__KEY(TG_KEY_AUTOGRAD);
    return k;
}

const char *tg_dispatch_key_name(int k)
{
    switch (k) {
    case TG_KEY_CPU: return "CPU";
    case TG_KEY_CUDA: return "CUDA";
    case TG_KEY_AUTOGRAD: return "Autograd";
    default:
        return k >= TG_KEY_BACKEND_FIRST && k <= TG_KEY_BACKEND_LAST
                   ? tg__device_type_name((tg_device_type)k)
                   : "Unknown";
    }
}

int tg__no_kernel(const tg_op_entry *e, int key)
{
    char have[256] = "";
    size_t n = 0;
    for (int k = 0; k < TG_NUM_KEYS; k++) {
        if (!tg__row_kernel(e, k) || n >= sizeof have) continue;
        n += (size_t)snprintf(have + n, sizeof have - n, "%s%s", n ? ", " : "",
                              tg_dispatch_key_name(k));
    }
    return tg__fail(e->name, "no kernel for key %s; the operator has kernels for: %s",
                    tg_dispatch_key_name(key), n ? have : "(none)");
}

int tg__dispatch_resolve(const tg_op_entry *e, tg_keyset ks, tg__resolved *r)
{
    *r = (tg__resolved){ .key = TG_KEY_CPU };
    ks &= ~excluded;
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
