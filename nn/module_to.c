/* tg_module_to: every parameter and buffer moved to a device and its floating ones converted,
 * all or nothing: the new tensors are all made before any slot changes. */
#include <stdlib.h>

#include "nn_private.h"
#include "ops/_to_copy.h"

/* The converted tensor (a new reference; the same tensor retained when nothing changes), with
 * its requires_grad and .grad carried over. Called inside TG__NN_OWN. */
static tg_tensor *convert(tg_tensor *t, tg_module_to_opts o)
{
    tg_device dev = o.device.type == TG_DEVICE_NONE ? tg_tensor_device(t) : o.device;
    tg_dtype dt = tg_tensor_dtype(t);
    if (o.dtype != TG_DTYPE_NONE && tg_dtype_is_floating(dt)) dt = o.dtype;
    tg_device cur = tg_tensor_device(t);
    if (dt == tg_tensor_dtype(t) && dev.type == cur.type && dev.index == cur.index)
        return tg_retain(t);
    tg_tensor *g = tg_tensor_grad(t);
    tg_tensor *r = tg__to_copy(t, .dtype = dt, .device = dev);
    tg_tensor *rg = g ? tg__to_copy(g, .dtype = dt, .device = dev) : NULL;
    tg_release(g);
    if (!r || (g && !rg)) {
        tg_release(r);
        tg_release(rg);
        return NULL;
    }
    if (tg_tensor_requires_grad(t)) tg_tensor_set_requires_grad(r, true);
    if (rg) tg_tensor_set_grad(r, rg);
    tg_release(rg);
    return r;
}

int tg_module_to_fn(tg_module *m, tg_module_to_opts opts)
{
    if (!m) {
        tg_set_error("Module.to", "module is NULL");
        return -1;
    }
    if (opts.dtype != TG_DTYPE_NONE && !tg_dtype_is_floating(opts.dtype)) {
        tg_set_error(m->type->name, "to() only accepts floating point dtypes, but got %s",
                     tg_dtype_name(opts.dtype));
        return -1;
    }
    if (opts.device.type == TG_CUDA && opts.device.index >= tg_cuda_device_count()) {
        tg_set_error(m->type->name, "to(cuda:%d): %s", opts.device.index,
                     tg_cuda_device_count() ? "no such CUDA device"
                                            : "no CUDA device is available");
        return -1;
    }
    tg_named_tensors l;
    if (tg_module_named_tensors(m, &l, .buffers = true, .keep_duplicates = true) != 0) return -1;
    tg_tensor **made = calloc((size_t)l.len + 1, sizeof *made);
    int rc = made ? 0 : -1;
    /* Tied slots hold one tensor: convert it once, so that they stay tied. */
    for (int64_t i = 0; rc == 0 && i < l.len; i++) {
        for (int64_t j = 0; j < i && !made[i]; j++)
            if (*l.data[j].slot == *l.data[i].slot) made[i] = tg_retain(made[j]);
        if (!made[i]) TG__NN_OWN made[i] = convert(*l.data[i].slot, opts);
        if (!made[i]) rc = -1;
    }
    if (rc == 0)
        for (int64_t i = 0; i < l.len; i++) {
            tg_tensor *old = *l.data[i].slot;
            *l.data[i].slot = made[i];
            made[i] = NULL;
            tg_release(old);
        }
    else if (!made) tg_set_error(m->type->name, "out of memory");
    for (int64_t i = 0; made && i < l.len; i++) tg_release(made[i]);
    free(made);
    tg_named_tensors_free(&l);
    return rc;
}
