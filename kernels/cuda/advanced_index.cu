/* index.Tensor and index_put_ on CUDA over the shared host-side plan
 * (kernels/common/advanced_index.h): the indices (and masks) are read back to the host, wrapped
 * and bounds-checked there, so no kernel ever runs with a bad index; the offsets aoff / poff /
 * boff are then copied to the device in one block.
 *
 * The gather runs one thread per result element. The put runs one thread per (a, b) position,
 * which walks the index positions p in order: no two threads write the same element of self,
 * so accumulate needs no atomics and is deterministic (the CPU's order), and a duplicated
 * index keeps the last value in index order. */
#include "tg_cuda.cuh"
#include "advanced_index.h"

#include <stdlib.h>

#include "kernels/index.h"
#include "kernels/index_put.h"

#define THREADS 256

/* out[(a * P + p) * B + b] = self[aoff[a] + poff[p] + boff[b]] */
template <class T>
__global__ void adv_gather_kernel(const int64_t *off, int64_t A, int64_t P, int64_t B,
                                  const T *self, T *out)
{
    const int64_t *aoff = off, *poff = off + A, *boff = off + A + P;
    for (int64_t i = tg__cuda_thread_index(); i < (A * P * B); i += tg__cuda_thread_count()) {
        int64_t b = i % B, p = (i / B) % P, a = i / (B * P);
        out[i] = self[aoff[a] + poff[p] + boff[b]];
    }
}

/* self[aoff[a] + poff[p] + boff[b]] = (or +=) v[(a * P + p) * B + b], one thread per (a, b). */
template <class T, bool ACC>
__global__ void adv_put_kernel(const int64_t *off, int64_t A, int64_t P, int64_t B, T *self,
                               const T *v)
{
    const int64_t *aoff = off, *poff = off + A, *boff = off + A + P;
    for (int64_t u = tg__cuda_thread_index(); u < (A * B); u += tg__cuda_thread_count()) {
        int64_t b = u % B, a = u / B;
        T *base = self + aoff[a] + boff[b];
        for (int64_t p = 0; p < P; p++) {
            T s = v[(a * P + p) * B + b];
            if (ACC) base[poff[p]] = (T)(base[poff[p]] + s);
            else base[poff[p]] = s;
        }
    }
}

/* The plan's offsets on self's device (a new tensor; NULL + error). */
static tg_tensor *upload(const char *op, const tg_adv_plan *pl, tg_device dev, cudaStream_t st)
{
    int64_t n = pl->A + pl->P + pl->B;
    tg_tensor *d = tg__empty(op, &n, 1, TG_INT64, dev);
    if (!d) return NULL;
    if (tg__cuda_ok(op, cudaMemcpyAsync(tg__k_data(d), pl->buf, sizeof(int64_t) * (size_t)n,
                                        cudaMemcpyHostToDevice, st)) ||
        tg__cuda_ok(op, cudaStreamSynchronize(st))) {
        tg_release(d);
        return NULL;
    }
    return d;
}

/* The start of a launch: makes dev current (its stream in *st) and uploads pl's offsets into
 * *off (the caller releases it). 0, or -1 with the error recorded. */
static int begin_offsets(const char *op, const tg_adv_plan *pl, tg_device dev, cudaStream_t *st,
                         tg_tensor **off)
{
    int rc;
    *st = tg__cuda_select_stream(op, dev, &rc);
    *off = rc ? NULL : upload(op, pl, dev, *st);
    return *off ? 0 : -1;
}

template <class T>
static void launch_gather(const tg_adv_plan *pl, const int64_t *off, const void *self, void *out,
                          cudaStream_t st)
{
    int64_t n = pl->A * pl->P * pl->B;
    adv_gather_kernel<T><<<tg__cuda_blocks(n, THREADS), THREADS, 0, st>>>(
        off, pl->A, pl->P, pl->B, (const T *)self, (T *)out);
}

template <class T>
static void launch_put(const tg_adv_plan *pl, const int64_t *off, void *self, const void *v,
                       bool acc, cudaStream_t st)
{
    unsigned blocks = tg__cuda_blocks(pl->A * pl->B, THREADS);
    if (acc)
        adv_put_kernel<T, true>
            <<<blocks, THREADS, 0, st>>>(off, pl->A, pl->P, pl->B, (T *)self, (const T *)v);
    else
        adv_put_kernel<T, false>
            <<<blocks, THREADS, 0, st>>>(off, pl->A, pl->P, pl->B, (T *)self, (const T *)v);
}

extern "C" tg_tensor *tg__cuda_index(tg_tensor *self, tg_tensor_list indices)
{
    const char *op = "index";
    tg_adv_plan pl;
    if (tg__adv_plan_build(op, self, indices, &pl)) return NULL;
    tg_tensor *r = tg__empty(op, pl.sizes, pl.ndim, self->dtype, self->device);
    tg_tensor *off = NULL;
    int rc = r ? 0 : -1;
    cudaStream_t st;
    if (r && tg__numel(r) > 0 && (rc = begin_offsets(op, &pl, self->device, &st, &off)) == 0) {
        const int64_t *o = (const int64_t *)tg__k_data(off);
        size_t es = tg_dtype_size(self->dtype);
        void *s = tg__k_data(self), *d = tg__k_data(r);
        if (es == 1) launch_gather<uint8_t>(&pl, o, s, d, st);
        else if (es == 2) launch_gather<uint16_t>(&pl, o, s, d, st);
        else if (es == 4) launch_gather<uint32_t>(&pl, o, s, d, st);
        else if (es == 8) launch_gather<unsigned long long>(&pl, o, s, d, st);
        else {
            rc = tg__fail(op, "\"index\" not implemented for '%s'",
                          tg__dtype_torch_name(self->dtype));
            goto done;
        }
        rc = tg__cuda_launch_ok(op);
    }
done:
    tg_release(off);
    tg__adv_plan_free(&pl);
    if (rc) {
        tg_release(r);
        return NULL;
    }
    return r;
}

extern "C" tg_tensor *tg__cuda_index_put_(tg_tensor *self, tg_tensor_list indices,
                                          tg_tensor *values, bool accumulate)
{
    const char *op = "index_put_";
    tg_adv_plan pl;
    if (tg__adv_put_check(op, self, values) || tg__adv_plan_build(op, self, indices, &pl))
        return NULL;
    tg_tensor *v = tg__adv_values(op, self, values, &pl);
    tg_tensor *off = NULL;
    int rc = v ? 0 : -1;
    cudaStream_t st;
    if (v && tg__numel(v) > 0 && (rc = begin_offsets(op, &pl, self->device, &st, &off)) == 0) {
        const int64_t *o = (const int64_t *)tg__k_data(off);
        void *s = tg__k_data(self);
        const void *x = tg__k_data(v);
        size_t es = tg_dtype_size(self->dtype);
        if (!accumulate && es == 1) launch_put<uint8_t>(&pl, o, s, x, false, st);
        else if (!accumulate && es == 2) launch_put<uint16_t>(&pl, o, s, x, false, st);
        else if (!accumulate && es == 4) launch_put<uint32_t>(&pl, o, s, x, false, st);
        else if (!accumulate && es == 8) launch_put<unsigned long long>(&pl, o, s, x, false, st);
        else switch (self->dtype) {
            case TG_FLOAT32: launch_put<float>(&pl, o, s, x, true, st); break;
            case TG_FLOAT64: launch_put<double>(&pl, o, s, x, true, st); break;
            case TG_INT64: launch_put<int64_t>(&pl, o, s, x, true, st); break;
            case TG_INT32: launch_put<int32_t>(&pl, o, s, x, true, st); break;
            case TG_INT16: launch_put<int16_t>(&pl, o, s, x, true, st); break;
            case TG_INT8: launch_put<int8_t>(&pl, o, s, x, true, st); break;
            case TG_UINT8: launch_put<uint8_t>(&pl, o, s, x, true, st); break;
            default: /* float16, bfloat16, and any non-accumulating odd size */
                rc = tg__fail(op, "\"index_put_\" not implemented for '%s'",
                              tg__dtype_torch_name(self->dtype));
                goto done;
            }
        rc = tg__cuda_launch_ok(op);
    }
done:
    if (rc == 0) tg__bump_version(self);
    tg_release(off);
    tg_release(v);
    tg__adv_plan_free(&pl);
    return rc ? NULL : tg_retain(self);
}
