/* Copies with dtype conversion, and the out= helpers built on them.
 *
 * tg__convert_loop is the one place that converts elements: same-dtype copies are memcpy or
 * a typed strided move, a few hot pairs (float32 <-> float64, integers -> float32) have
 * direct loops, and the rest go through int64 (integer to integer, exact) or double. */
#include "core/rt_private.h"

#include <string.h>

static void move_same(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, int64_t es)
{
    if (ds == es && ss == es) {
        memcpy(dst, src, (size_t)(n * es));
        return;
    }
    switch (es) {
    case 1:
        for (int64_t i = 0; i < n; i++) dst[i * ds] = src[i * ss];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 2);
        break;
    case 4:
        for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 4);
        break;
    default:
        for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 8);
        break;
    }
}

void tg__convert_loop(char *dst, tg_dtype dt, int64_t ds, const char *src, tg_dtype st, int64_t ss,
                      int64_t n)
{
    if (dt == st) {
        move_same(dst, ds, src, ss, n, tg__dtype_sizes[dt]);
        return;
    }
    if (dt == TG_FLOAT64 && st == TG_FLOAT32) {
        for (int64_t i = 0; i < n; i++) *(double *)(dst + i * ds) = *(const float *)(src + i * ss);
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

static void convert_cb(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const tg_iter *it = ctx;
    tg__convert_loop(data[0], it->dtypes[0], strides[0], data[1], it->dtypes[1], strides[1], n);
}

/* ---- transposed 2-D copies ---- */

/* dst (R, C) row-major and src laid out as its transpose (strides (1, R)), one 2/4/8-byte
 * dtype: a transposed gradient becoming a parameter's contiguous .grad, contiguous() of a t()
 * view. The element loop reads src a cache line per element; 16 x 16 tiles keep both sides in
 * cache (larger ones thrash L1 sets when a stride is a power of two: 512 floats is 2 KiB).
 * Parallel over blocks of rows. */
#define TR_TILE 16

typedef struct tr_job {
    char *d;
    const char *s;
    int64_t R, C;
    size_t e;
} tr_job;

static void tr_blocks(int64_t b, int64_t end, void *ctx)
{
    const tr_job *j = ctx;
    const int64_t R = j->R, C = j->C;
    for (int64_t ib = b; ib < end; ib++) {
        int64_t i0 = ib * TR_TILE, i1 = i0 + TR_TILE < R ? i0 + TR_TILE : R;
        for (int64_t j0 = 0; j0 < C; j0 += TR_TILE) {
            int64_t j1 = j0 + TR_TILE < C ? j0 + TR_TILE : C;
            if (j->e == 4) {
                uint32_t *d = (uint32_t *)j->d;
                const uint32_t *s = (const uint32_t *)j->s;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t c = j0; c < j1; c++) d[i * C + c] = s[c * R + i];
            } else if (j->e == 8) {
                uint64_t *d = (uint64_t *)j->d;
                const uint64_t *s = (const uint64_t *)j->s;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t c = j0; c < j1; c++) d[i * C + c] = s[c * R + i];
            } else {
                uint16_t *d = (uint16_t *)j->d;
                const uint16_t *s = (const uint16_t *)j->s;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t c = j0; c < j1; c++) d[i * C + c] = s[c * R + i];
            }
        }
    }
}

bool tg__copy_transposed_2d(tg_tensor *dst, const tg_tensor *src)
{
    if (dst->ndim != 2 || src->ndim != 2 || dst->dtype != src->dtype ||
        dst->storage == src->storage || dst->device.type != TG_CPU || src->device.type != TG_CPU)
        return false;
    size_t e = tg__dtype_sizes[dst->dtype];
    int64_t R = dst->sizes[0], C = dst->sizes[1];
    if ((e != 2 && e != 4 && e != 8) || src->sizes[0] != R || src->sizes[1] != C || R * C < 1024)
        return false;
    if (dst->strides[0] != C || dst->strides[1] != 1 || src->strides[0] != 1 ||
        src->strides[1] != R)
        return false;
    tr_job j = { tg_tensor_data(dst), tg_tensor_data(src), R, C, e };
    int64_t blocks = (R + TR_TILE - 1) / TR_TILE;
    int64_t grain = tg__grain_size() / (TR_TILE * C) + 1; /* blocks worth a thread */
    tg__parallel_for(blocks, grain, tr_blocks, &j);
    return true;
}

/* ------------------------------------------------------------------ copies with a device */
/* Bytes move between devices only as contiguous same-dtype blocks (the device allocator's
 * copy); broadcasting, conversion and strides are done on one side: on the CPU by the loop
 * below, on a device by the strided copy its copy_ kernel registered (tg__device_copy). */
static bool same_geometry(const tg_tensor *a, const tg_tensor *b)
{
    if (a->ndim != b->ndim || a->dtype != b->dtype) return false;
    for (int64_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}

static bool same_device(tg_device a, tg_device b) { return a.type == b.type && a.index == b.index; }

/* Raw copy of a contiguous same-shape, same-dtype pair through the device hook. */
static int raw_copy(const char *op, tg_tensor *dst, const tg_tensor *src)
{
    tg_device_type ty = dst->device.type != TG_CPU ? (tg_device_type)dst->device.type
                                                   : (tg_device_type)src->device.type;
    const tg_device_hooks *a = tg__device_hooks(ty);
    if (!a)
        return tg__fail(
            op,
            "no device backend for a copy to or from a %s tensor (was the library built "
            "with CUDA support?)",
            tg__device_type_name(ty));
    size_t n = (size_t)tg__numel(dst) * tg__dtype_sizes[dst->dtype];
    return n ? a->copy(tg_tensor_data(dst), dst->device, tg_tensor_data(src), src->device, n) : 0;
}

/* dst = src on one device (broadcasting, converting, any strides). */
static int copy_within_device(const char *op, tg_tensor *dst, const tg_tensor *src)
{
    if (same_geometry(dst, src) && tg__is_contiguous(dst) && tg__is_contiguous(src))
        return raw_copy(op, dst, src);
    tg_device_copy_fn copy = tg__device_copy((tg_device_type)dst->device.type);
    if (copy) return copy(op, dst, src);
    return tg__fail(op, "this build has no %s copy kernel for strided or converting copies",
                    tg__device_type_name((tg_device_type)dst->device.type));
}

/* A contiguous copy of t in t's own dtype: on `dev` (t's device, or the CPU). New reference. */
static tg_tensor *contiguous_on(const char *op, const tg_tensor *t, tg_device dev)
{
    if (same_device(dev, t->device) && tg__is_contiguous(t)) return tg_retain((tg_tensor *)t);
    tg_tensor *c = tg__empty(op, t->sizes, t->ndim, t->dtype, dev);
    if (!c) return NULL;
    int rc;
    if (same_device(dev, t->device)) {
        rc = dev.type == TG_CPU ? tg__copy_into(op, c, t) : copy_within_device(op, c, t);
    } else {
        tg_tensor *s = contiguous_on(op, t, t->device);
        rc = s ? raw_copy(op, c, s) : -1;
        tg_release(s);
    }
    if (rc) {
        tg_release(c);
        return NULL;
    }
    return c;
}

/* dst = src where at least one of them is not on the CPU. */
static int copy_with_device(const char *op, tg_tensor *dst, const tg_tensor *src)
{
    int rc;
    if (same_device(dst->device, src->device)) {
        rc = copy_within_device(op, dst, src);
    } else if (same_geometry(dst, src) && tg__is_contiguous(dst) && tg__is_contiguous(src)) {
        rc = raw_copy(op, dst, src);
    } else if (dst->device.type == TG_CPU) {
        /* device -> CPU: bring src over as it is, then broadcast/convert on the CPU */
        tg_tensor *h = contiguous_on(op, src, TG_DEVICE_CPU);
        rc = h ? tg__copy_into(op, dst, h) : -1;
        tg_release(h);
    } else {
        /* CPU or another device -> device: src contiguous on dst's device, then a copy there */
        tg_tensor *d = contiguous_on(op, src, dst->device);
        rc = d ? copy_within_device(op, dst, d) : -1;
        tg_release(d);
    }
    if (rc == 0) tg__bump_version(dst);
    return rc;
}

int tg__copy_into(const char *op, tg_tensor *dst, const tg_tensor *src)
{
    if (!dst || !src) return -1;
    if (dst == src) return 0;
    if (dst->device.type != TG_CPU || src->device.type != TG_CPU)
        return copy_with_device(op, dst, src);
    if (tg__copy_transposed_2d(dst, src)) {
        tg__bump_version(dst);
        return 0;
    }
    tg_iter it;
    tg_tensor *outs[1] = { dst };
    tg_tensor *ins[1] = { (tg_tensor *)src };
    if (tg__iter_build(&it, op,
                       TG_ITER_KEEP_OUTPUT_DTYPE | TG_ITER_NO_INPUT_CAST | TG_ITER_NO_BROADCAST_OUT,
                       outs, 1, ins, 1))
        return -1;
    tg__iter_for_each(&it, convert_cb, &it);
    tg__bump_version(dst);
    tg__iter_abort(&it); /* nothing to copy back: release what build holds */
    return 0;
}

tg_tensor *tg__contiguous(const char *op, tg_tensor *t)
{
    if (t && tg__is_contiguous(t)) return tg_retain(t);
    return tg_tensor_copy(op, t);
}

tg_tensor *tg_tensor_copy(const char *op, tg_tensor *t)
{
    if (!t) return NULL;
    tg_tensor *c = tg__empty(op, t->sizes, t->ndim, t->dtype, t->device);
    if (c && tg__copy_into(op, c, t)) {
        tg_release(c);
        return NULL;
    }
    return c;
}

tg_tensor *tg_copy_to_out(const char *op, tg_tensor *out, tg_tensor *result)
{
    if (!out || !result) return NULL;
    if (!tg_can_cast(result->dtype, out->dtype))
        return tg__error(op, "result type %s can't be cast to the desired output type %s",
                         tg__dtype_torch_name(result->dtype), tg__dtype_torch_name(out->dtype));
    if (tg__resize_out(op, out, result->sizes, result->ndim)) return NULL;
    if (tg__copy_into(op, out, result)) return NULL;
    return tg_retain(out);
}
