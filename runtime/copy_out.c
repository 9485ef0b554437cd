/* Copies with dtype conversion, and the out= helpers built on them.
 *
 * tg__convert_loop is the one place that converts elements: same-dtype copies are memcpy or
 * a typed strided move, a few hot pairs (float32 <-> float64, integers -> float32) have
 * direct loops, and the rest go through int64 (integer to integer, exact) or double. */
#include "tg_rt.h"

#include <string.h>

static void move_same(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, int64_t es) {
    if (ds == es && ss == es) { memcpy(dst, src, (size_t)(n * es)); return; }
    switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) dst[i * ds] = src[i * ss]; break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 4); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 8); break;
    }
}

void tg__convert_loop(char *dst, tg_dtype dt, int64_t ds, const char *src, tg_dtype st,
                      int64_t ss, int64_t n) {
    if (dt == st) { move_same(dst, ds, src, ss, n, tg__dtype_sizes[dt]); return; }
    if (dt == TG_FLOAT64 && st == TG_FLOAT32) {
        for (int64_t i = 0; i < n; i++)
            *(double *)(dst + i * ds) = *(const float *)(src + i * ss);
        return;
    }
    if (dt == TG_FLOAT32 && st == TG_FLOAT64) {
        for (int64_t i = 0; i < n; i++)
            *(float *)(dst + i * ds) = (float)*(const double *)(src + i * ss);
        return;
    }
    if (dt == TG_FLOAT32 && st == TG_INT64) {
        for (int64_t i = 0; i < n; i++)
            *(float *)(dst + i * ds) = (float)*(const int64_t *)(src + i * ss);
        return;
    }
    if (dt == TG_FLOAT32 && st == TG_INT32) {
        for (int64_t i = 0; i < n; i++)
            *(float *)(dst + i * ds) = (float)*(const int32_t *)(src + i * ss);
        return;
    }
    if (tg_dtype_is_integral(dt, true) && tg_dtype_is_integral(st, true) && dt != TG_BOOL) {
        for (int64_t i = 0; i < n; i++)
            tg__store_int64(dst + i * ds, dt, tg__load_int64(src + i * ss, st));
        return;
    }
    for (int64_t i = 0; i < n; i++)
        tg__store_double(dst + i * ds, dt, tg__load_double(src + i * ss, st));
}

static void convert_cb(char **data, const int64_t *strides, int64_t n, void *ctx) {
    const tg_iter *it = ctx;
    tg__convert_loop(data[0], it->dtypes[0], strides[0], data[1], it->dtypes[1], strides[1], n);
}

/* Contiguous same-dtype copies between devices go through the device's copy hook. */
static int copy_across_devices(const char *op, tg_tensor *dst, const tg_tensor *src) {
    tg_device_type ty = dst->device.type != TG_CPU ? (tg_device_type)dst->device.type
                                                   : (tg_device_type)src->device.type;
    const tg_device_allocator *a = tg__device_allocator(ty);
    bool same = dst->ndim == src->ndim && dst->dtype == src->dtype;
    for (int64_t i = 0; same && i < dst->ndim; i++) same = dst->sizes[i] == src->sizes[i];
    if (!a || !same || !tg__is_contiguous(dst) || !tg__is_contiguous(src)) {
        tg__error(op, "copies between devices need a device backend and contiguous tensors of "
                  "one shape and dtype");
        return -1;
    }
    size_t n = (size_t)tg__numel(dst) * tg__dtype_sizes[dst->dtype];
    if (n && a->copy(tg_tensor_data(dst), dst->device, tg_tensor_data(src), src->device, n))
        return -1;
    tg__bump_version(dst);
    return 0;
}

int tg__copy_into(const char *op, tg_tensor *dst, const tg_tensor *src) {
    if (!dst || !src) return -1;
    if (dst == src) return 0;
    if (dst->device.type != src->device.type || dst->device.index != src->device.index) {
        if (!(src->device.type == TG_CPU && src->ndim == 0))
            return copy_across_devices(op, dst, src);
    }
    if (dst->device.type != TG_CPU) return copy_across_devices(op, dst, src);
    tg_iter it;
    tg_tensor *outs[1] = { dst };
    tg_tensor *ins[1] = { (tg_tensor *)src };
    if (tg__iter_build(&it, op, TG_ITER_KEEP_OUTPUT_DTYPE | TG_ITER_NO_INPUT_CAST |
                       TG_ITER_NO_BROADCAST_OUT, outs, 1, ins, 1))
        return -1;
    tg__iter_for_each(&it, convert_cb, &it);
    tg__bump_version(dst);
    tg__iter_abort(&it);          /* nothing to copy back: release what build holds */
    return 0;
}

tg_tensor *tg__contiguous(const char *op, tg_tensor *t) {
    if (!t) return NULL;
    if (tg__is_contiguous(t)) return tg_retain(t);
    tg_tensor *c = tg__empty(op, t->sizes, t->ndim, t->dtype, t->device);
    if (c && tg__copy_into(op, c, t)) { tg_release(c); return NULL; }
    return c;
}

tg_tensor *tg__copy_to_out(const char *op, tg_tensor *out, tg_tensor *result) {
    if (!out || !result) return NULL;
    if (!tg_can_cast(result->dtype, out->dtype))
        return tg__error(op, "result type %s can't be cast to the desired output type %s",
                         tg__dtype_torch_name(result->dtype), tg__dtype_torch_name(out->dtype));
    if (tg__resize_out(op, out, result->sizes, result->ndim)) return NULL;
    if (tg__copy_into(op, out, result)) return NULL;
    return tg_retain(out);
}
