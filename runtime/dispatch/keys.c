/* Dispatch keys: a tensor's keys, the keys this thread excludes, the keys' names, and the
 * error that lists the keys an operator has kernels for.
 *
 * A call's key set is the union of its tensors' keys (the key of the device type, plus Autograd
 * when grad mode is on and the tensor requires grad) minus this thread's excluded keys
 * (dispatch.c resolves it to a kernel). */
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
