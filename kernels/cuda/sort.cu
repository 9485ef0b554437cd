/* sort.values_stable, topk.values and sort_backward on CUDA, with the checks, ordering and
 * results of the CPU kernels (kernels/cpu/sort.c; keys, tie-break and row algorithms from
 * sort_checks.h, so both backends give the same indices, ties included).
 *
 * self is made contiguous and read as rows along the dim (outer x n x inner). Per row:
 *   n <= BITONIC_MAX (1024): one block of THREADS threads bitonic-sorts the row's (key, index)
 *     pairs in shared memory (padded to a power of two with pairs that sort last);
 *   longer rows: one thread per row runs the CPU's algorithm (merge sort, or for topk with
 *     k * 8 <= n the heap selection then a merge sort of the k) in a global scratch of 2n
 *     pairs per row. Correct, not fast: one thread walks the whole row (the GPT sampler's
 *     topk(logits, 40) over 50257 logits is O(n log 40) per row on that thread).
 * The k first pairs give the outputs, values copied bit for bit from the input. */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/sort.h"
#include "kernels/sort_backward.h"
#include "kernels/topk.h"
#include "sort_checks.h" /* the CPU kernels' checks and row algorithms */

#define THREADS 256
#define BITONIC_MAX 1024
#define FALLBACK_THREADS 64

/* A row view: row r of the contiguous input starts at x + ((r / inner) * n * inner +
 * r % inner) * es, its elements inner * es bytes apart; outputs likewise with k for n. */
struct sort_dev {
    const char *x;
    char *vals;
    int64_t *idx;
    tg_dtype dt;
    int64_t es, n, inner, k, rows;
    bool descending, select, floating;
};

__device__ __forceinline__ void copy_elem(char *d, const char *s, int64_t es)
{
    switch (es) {
    case 1: *d = *s; break;
    case 2: *(uint16_t *)d = *(const uint16_t *)s; break;
    case 4: *(uint32_t *)d = *(const uint32_t *)s; break;
    default: *(uint64_t *)d = *(const uint64_t *)s; break;
    }
}

__device__ __forceinline__ uint64_t key_of(const sort_dev &a, const char *p)
{
    return a.floating ? tg__sort_key_f64(tg__cuda_load<double>(p, a.dt), a.descending)
                      : tg__sort_key_i64(tg__cuda_load<int64_t>(p, a.dt), a.descending);
}

__device__ __forceinline__ const char *row_base(const sort_dev &a, int64_t r)
{
    return a.x + ((r / a.inner) * a.n * a.inner + r % a.inner) * a.es;
}

/* The k first pairs of row r into the outputs. */
__device__ __forceinline__ void write_out(const sort_dev &a, int64_t r, const tg_sort_pair *p,
                                          int64_t t)
{
    int64_t at = ((r / a.inner) * a.k + t) * a.inner + r % a.inner;
    a.idx[at] = p[t].idx;
    copy_elem(a.vals + at * a.es, row_base(a, r) + p[t].idx * a.inner * a.es, a.es);
}

/* One block per row (grid-stride over rows); P the row's power-of-two padding. */
__global__ void __launch_bounds__(THREADS) bitonic_kernel(sort_dev a, int64_t P)
{
    __shared__ tg_sort_pair s[BITONIC_MAX];
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
        const char *base = row_base(a, r);
        for (int64_t t = threadIdx.x; t < P; t += blockDim.x) {
            if (t < a.n) {
                s[t].key = key_of(a, base + t * a.inner * a.es);
                s[t].idx = t;
            } else {
                s[t].key = ~(uint64_t)0;
                s[t].idx = INT64_MAX;
            }
        }
        __syncthreads();
        for (int64_t size = 2; size <= P; size <<= 1) {
            for (int64_t stride = size / 2; stride > 0; stride >>= 1) {
                for (int64_t t = threadIdx.x; t < P; t += blockDim.x) {
                    int64_t q = t ^ stride;
                    if (q <= t) continue;
                    bool up = (t & size) == 0;
                    bool swap = up ? tg__sort_less(s[q], s[t]) : tg__sort_less(s[t], s[q]);
                    if (swap) {
                        tg_sort_pair tmp = s[t];
                        s[t] = s[q];
                        s[q] = tmp;
                    }
                }
                __syncthreads();
            }
        }
        for (int64_t t = threadIdx.x; t < a.k; t += blockDim.x) write_out(a, r, s, t);
        __syncthreads();
    }
}

/* One thread per row, in a scratch of 2n pairs per row. */
__global__ void fallback_kernel(sort_dev a, tg_sort_pair *scratch)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < a.rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        tg_sort_pair *p = scratch + r * 2 * a.n, *tmp = p + a.n;
        const char *base = row_base(a, r);
        for (int64_t t = 0; t < a.n; t++) {
            p[t].key = key_of(a, base + t * a.inner * a.es);
            p[t].idx = t;
        }
        int64_t m = a.n;
        if (a.select) {
            tg__sort_select(p, a.n, a.k);
            m = a.k;
        }
        tg__sort_pairs(p, tmp, m);
        for (int64_t t = 0; t < a.k; t++) write_out(a, r, p, t);
    }
}

/* Fills the contiguous outputs v and ix (outer x k x inner) from the contiguous x. 0 or -1. */
static int run_sort(const char *op, tg_tensor *x, const tg_sort_geom *g, int64_t k, bool descending,
                    bool select, tg_tensor *v, tg_tensor *ix, cudaStream_t st)
{
    sort_dev a;
    a.x = tg__k_data(x);
    a.vals = tg__k_data(v);
    a.idx = (int64_t *)tg__k_data(ix);
    a.dt = x->dtype;
    a.es = (int64_t)tg_dtype_size(x->dtype);
    a.n = g->n;
    a.inner = g->inner;
    a.k = k;
    a.rows = g->outer * g->inner;
    a.descending = descending;
    a.select = select;
    a.floating = tg_dtype_is_floating(x->dtype);
    if (a.rows == 0 || k == 0) return 0;
    if (a.n <= BITONIC_MAX) {
        int64_t P = 1;
        while (P < a.n) P *= 2;
        unsigned blocks = (unsigned)(a.rows < TG_CUDA_MAX_BLOCKS ? a.rows : TG_CUDA_MAX_BLOCKS);
        bitonic_kernel<<<blocks, THREADS, 0, st>>>(a, P);
        return tg__cuda_launch_ok(op);
    }
    int64_t sz = a.rows * 2 * a.n * (int64_t)sizeof(tg_sort_pair);
    tg_tensor *scratch = tg__empty(op, &sz, 1, TG_UINT8, x->device);
    if (!scratch) return -1;
    fallback_kernel<<<tg__cuda_blocks(a.rows, FALLBACK_THREADS), FALLBACK_THREADS, 0, st>>>(
        a, (tg_sort_pair *)tg__k_data(scratch));
    int rc = tg__cuda_launch_ok(op);
    /* the scratch may be freed only after the kernel has read it */
    if (rc == 0) rc = tg__cuda_ok(op, cudaStreamSynchronize(st));
    tg_release(scratch);
    return rc;
}

/* The shared host side: outputs of self's shape with k along the dim (a non-contiguous out=
 * tensor receives a copy of a contiguous result). */
static tg_values_indices sort_common(const char *op, tg_tensor *self, const tg_sort_geom *g,
                                     int64_t k, bool descending, bool select, tg_tensor *values,
                                     tg_tensor *indices)
{
    tg_values_indices r = { NULL, NULL };
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return r;
    int64_t sizes[TG_MAX_DIMS];
    for (int64_t i = 0; i < self->ndim; i++) sizes[i] = i == g->d ? k : self->sizes[i];
    tg_tensor *v = tg__cuda_prepare_out(op, values, sizes, self->ndim, self->dtype, self->device);
    if (!v) return r;
    tg_tensor *ix = tg__cuda_prepare_out(op, indices, sizes, self->ndim, TG_INT64, self->device);
    if (!ix) {
        tg_release(v);
        return r;
    }
    tg_tensor *x = tg__cuda_contiguous(op, self, self->dtype);
    tg_tensor *vw = tg__is_contiguous(v)
                        ? tg_retain(v)
                        : tg__empty(op, sizes, self->ndim, self->dtype, self->device);
    tg_tensor *iw = tg__is_contiguous(ix)
                        ? tg_retain(ix)
                        : tg__empty(op, sizes, self->ndim, TG_INT64, self->device);
    rc = x && vw && iw ? run_sort(op, x, g, k, descending, select, vw, iw, st) : -1;
    tg_release(x);
    return tg__sort_finish(op, rc, v, vw, ix, iw, values != NULL, indices != NULL);
}

extern "C" tg_values_indices tg__cuda_sort_stable_out(tg_tensor *self, tg_opt_bool stable,
                                                      int64_t dim, bool descending,
                                                      tg_tensor *values, tg_tensor *indices)
{
    (void)stable;
    tg_sort_geom g;
    if (tg__sort_check("sort", self, dim, &g) != 0) return tg_values_indices{ NULL, NULL };
    return sort_common("sort", self, &g, g.n, descending, false, values, indices);
}

extern "C" tg_values_indices tg__cuda_topk_out(tg_tensor *self, int64_t k, int64_t dim,
                                               bool largest, bool sorted, tg_tensor *values,
                                               tg_tensor *indices)
{
    (void)sorted;
    tg_sort_geom g;
    if (tg__topk_check("topk", self, k, dim, "topk_out_cuda", &g) != 0)
        return tg_values_indices{ NULL, NULL };
    return sort_common("topk", self, &g, k, largest, k > 0 && tg__topk_use_select(k, g.n), values,
                       indices);
}

/* ------------------------------------------------------------------ sort_backward */

/* One thread per element e of grad (outer x m x inner, contiguous): out[o, idx[e], i] =
 * grad[e]. An index outside [0, n) is not written; the lowest such e goes to *bad. */
__global__ void scatter_kernel(const char *grad, const int64_t *idx, char *out, int64_t total,
                               int64_t m, int64_t n, int64_t inner, int64_t es,
                               unsigned long long *bad)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t t = idx[e];
        if (t < 0 || t >= n) {
            atomicMin(bad, (unsigned long long)e);
            continue;
        }
        int64_t o = e / (m * inner), i = e % inner;
        copy_elem(out + ((o * n + t) * inner + i) * es, grad + e * es, es);
    }
}

extern "C" tg_tensor *tg__cuda_sort_backward(tg_tensor *grad, int64_t dim, tg_tensor *indices,
                                             tg_int_list sizes)
{
    const char *op = "sort_backward";
    tg_sort_geom g;
    if (tg__sort_backward_check(op, grad, dim, indices, sizes, &g) != 0) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, grad->device, &rc);
    if (rc || tg__cuda_same_device(op, grad, indices)) return NULL;
    tg_tensor *out = tg__empty(op, sizes.data, sizes.len, grad->dtype, grad->device);
    tg_tensor *gc = tg__cuda_contiguous(op, grad, grad->dtype);
    tg_tensor *ic = tg__cuda_contiguous(op, indices, TG_INT64);
    int64_t badn = 8;
    tg_tensor *bad = tg__empty(op, &badn, 1, TG_UINT8, grad->device);
    int64_t es = (int64_t)tg_dtype_size(grad->dtype), total = tg__numel(grad);
    rc = out && gc && ic && bad ? 0 : -1;
    if (rc == 0)
        rc = tg__cuda_ok(op,
                         cudaMemsetAsync(tg__k_data(out), 0, (size_t)(tg__numel(out) * es), st)) ||
             tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(bad), 0xff, 8, st));
    if (rc == 0 && total > 0) {
        int64_t m = grad->ndim > 0 ? grad->sizes[g.d] : 1;
        scatter_kernel<<<tg__cuda_blocks(total, THREADS), THREADS, 0, st>>>(
            tg__k_data(gc), (const int64_t *)tg__k_data(ic), tg__k_data(out), total, m, g.n,
            g.inner, es, (unsigned long long *)tg__k_data(bad));
        rc = tg__cuda_launch_ok(op);
        unsigned long long first = ~0ULL;
        if (rc == 0)
            rc = tg__cuda_ok(op, cudaMemcpyAsync(&first, tg__k_data(bad), sizeof first,
                                                 cudaMemcpyDeviceToHost, st)) ||
                 tg__cuda_ok(op, cudaStreamSynchronize(st));
        if (rc == 0 && first != ~0ULL) {
            int64_t t = 0;
            rc = tg__cuda_ok(op, cudaMemcpy(&t, (const int64_t *)tg__k_data(ic) + first, sizeof t,
                                            cudaMemcpyDeviceToHost));
            if (rc == 0)
                rc = tg__fail(op, "index %lld is out of bounds for dimension %lld with size %lld",
                              (long long)t, (long long)g.d, (long long)g.n);
        }
    }
    tg_release(bad);
    tg_release(gc);
    tg_release(ic);
    return tg__k_result(rc == 0, out);
}
