/* Dispatch keys: which kernel of an operator's row runs for a call.
 *
 * A call's key set is the union of its tensors' keys (the device key, plus Autograd when grad
 * mode is on and the tensor requires grad) minus this thread's excluded keys. The highest key
 * with a kernel wins; Autograd without a kernel falls through to the backend; CUDA without a
 * kernel but with a CPU kernel asks the caller to fall back (copy to CPU and run). */
#include "dispatch/dispatch_private.h"

#include <stdio.h>
#include <string.h>

#define KEY(k) ((tg_keyset)1 << (k))
#define BACKEND_KEYS (KEY(TG_KEY_CPU) | KEY(TG_KEY_CUDA))

static _Thread_local tg_keyset excluded;

tg_keyset tg__excluded_keys(void) { return excluded; }

tg_keyset tg__set_excluded_keys(tg_keyset ks)
{
    tg_keyset prev = excluded;
    excluded = ks;
    return prev;
}

tg_keyset tg__tensor_keys(const tg_tensor *t)
{
    tg_keyset k = KEY(t->device.type == TG_CUDA ? TG_KEY_CUDA : TG_KEY_CPU);
    if (t->requires_grad && tg__grad_enabled_tls) k |= KEY(TG_KEY_AUTOGRAD);
    return k;
}

const char *tg__dispatch_key_name(int k)
{
    switch (k) {
    case TG_KEY_CPU: return "CPU";
    case TG_KEY_CUDA: return "CUDA";
    case TG_KEY_AUTOGRAD: return "Autograd";
    default: return "Unknown";
    }
}

static void *no_kernel(const tg_op_entry *e, int key)
{
    char have[256] = "";
    size_t n = 0;
    for (int k = 0; k < TG_NUM_KEYS; k++) {
        if (!e->kernels[k] || n >= sizeof have) continue;
        n += (size_t)snprintf(have + n, sizeof have - n, "%s%s", n ? ", " : "",
                              tg__dispatch_key_name(k));
    }
    return tg__error(e->name, "no kernel for key %s; the operator has kernels for: %s",
                     tg__dispatch_key_name(key), n ? have : "(none)");
}

tg_fnptr tg__dispatch_lookup(const tg_op_entry *e, tg_keyset ks, bool *fallback)
{
    if (fallback) *fallback = false;
    ks &= ~excluded;
    if (!(ks & BACKEND_KEYS)) ks |= KEY(TG_KEY_CPU); /* factories with no tensor argument */
    while (ks) {
        int k = 63 - __builtin_clzll(ks);
        if (k < TG_NUM_KEYS && e->kernels[k]) return e->kernels[k];
        if (k == TG_KEY_CUDA && e->kernels[TG_KEY_CPU] && fallback) {
            *fallback = true;
            return NULL;
        }
        if (k != TG_KEY_AUTOGRAD) {
            no_kernel(e, k);
            return NULL;
        }
        ks &= ~KEY(k);
    }
    no_kernel(e, TG_KEY_CPU);
    return NULL;
}
