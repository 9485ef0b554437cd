/* Reductions on CUDA: sum, mean, prod, amax, amin, max.dim, min.dim, argmax, argmin, var, std.
 * Semantics, dtype rules and messages are the CPU kernels' (kernels/cpu/reduce.c).
 *
 * self is viewed as [outer, inner] exactly as on the CPU (reduced dims "inner", coalesced;
 * order-insensitive reductions walk the inner dims in stride order, the arg reductions in
 * logical order so that the index is the row-major position among the reduced elements).
 * Every reduction runs in two kernels:
 *
 *  1. partial kernels fold a range of one output's inner elements into a `partial` record and
 *     write it to a workspace [outer, splits]:
 *      - block path (the reduced dims are the fastest-moving in memory, e.g. a full reduction
 *        or a sum over the last dim): a group of threads (the whole 256-thread block when the
 *        rows are long, one warp when they are short) strides over the range with coalesced
 *        loads, 8 loads in flight per thread, then merges in shared memory. With few outputs
 *        the ranges are split so that the grid is exactly one wave of resident blocks
 *        (cudaOccupancyMaxActiveBlocksPerMultiprocessor): a full reduction streams the input
 *        once at close to copy bandwidth;
 *      - thread path (the kept dims are the fastest-moving, e.g. a sum over dim 0 of a
 *        row-major matrix): one thread per (output, split); neighbouring threads read
 *        neighbouring outputs, so loads are coalesced across the warp.
 *     `splits` cuts long ranges so that the device is full even with few outputs.
 *  2. finish_kernel merges an output's partials in split order (so results do not depend on
 *     scheduling) and stores the value (and index) converted to the output's dtype.
 *
 * Accumulation as on the CPU: floating dtypes (float16/bfloat16 included) in double, integral
 * in int64 with wrap-around; var/std by Welford per thread and Chan's formula across threads
 * and splits, in double. max/min/argmax/argmin keep the first occurrence of the extreme; NaN
 * propagates and wins (the first NaN's index). */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/amax.h"
#include "kernels/amin.h"
#include "kernels/argmax.h"
#include "kernels/argmin.h"
#include "kernels/max.h"
#include "kernels/mean.h"
#include "kernels/min.h"
#include "kernels/prod.h"
#include "kernels/std.h"
#include "kernels/sum.h"
#include "kernels/var.h"
#include "reduce_checks.h" /* the CPU kernels' argument checks and dtypes */
#include "reduce_view.h"   /* the [outer, inner] view, shared with the CPU kernels */

#define THREADS 256
#define UNROLL 8

/* One partial result: whichever fields the kind uses. */
struct partial {
    double d;    /* sum, product, extreme value (floating), Welford mean */
    double m2;   /* var: sum of squared deviations from the mean */
    int64_t i;   /* integral sum/product/extreme */
    int64_t idx; /* arg reductions: index of the extreme */
    int64_t n;   /* var: element count */
    bool nan, any;
};

/* ------------------------------------------------------------------ folds (device) */

/* Element x as the CPU's reductions read it: int64 (floats converted with x86's rules) for
 * integral accumulation, double otherwise. */
template <typename T> __device__ __forceinline__ int64_t as_i64(T x)
{
    return tg__cuda_narrow<int64_t>(tg__cuda_widen(x));
}
template <typename T> __device__ __forceinline__ double as_f64(T x)
{
    return (double)tg__cuda_widen(x);
}

template <int K> __device__ __forceinline__ void p_init(partial &r)
{
    r.d = K == R_PROD ? 1.0 : 0.0;
    r.i = K == R_PROD ? 1 : 0;
    r.m2 = 0;
    r.idx = 0;
    r.n = 0;
    r.nan = false;
    r.any = false;
}

/* Folds element x with index j (its row-major position among the reduced elements). Within
 * one thread j only grows, so strict comparisons keep the first occurrence. */
template <int K, typename T>
__device__ __forceinline__ void p_fold(partial &r, T x, int64_t j, bool integer)
{
    if (K == R_SUM) {
        if (integer) r.i = (int64_t)((uint64_t)r.i + (uint64_t)as_i64(x));
        else r.d += as_f64(x);
    } else if (K == R_PROD) {
        if (integer) r.i = (int64_t)((uint64_t)r.i * (uint64_t)as_i64(x));
        else r.d *= as_f64(x);
    } else if (K == R_MAX || K == R_MIN) {
        if (integer) {
            int64_t v = as_i64(x);
            if (!r.any || (K == R_MAX ? v > r.i : v < r.i)) r.i = v;
        } else {
            double v = as_f64(x);
            if (v != v) r.nan = true;
            else if (!r.any || (K == R_MAX ? v > r.d : v < r.d)) r.d = v;
        }
        r.any = true;
    } else if (K == R_ARGMAX || K == R_ARGMIN) {
        if (r.nan) return;
        if (integer) {
            int64_t v = as_i64(x);
            if (!r.any || (K == R_ARGMAX ? v > r.i : v < r.i)) {
                r.i = v;
                r.idx = j;
            }
        } else {
            double v = as_f64(x);
            if (v != v) {
                r.nan = true;
                r.d = v;
                r.idx = j;
            } else if (!r.any || (K == R_ARGMAX ? v > r.d : v < r.d)) {
                r.d = v;
                r.idx = j;
            }
        }
        r.any = true;
    } else { /* R_VAR: Welford */
        double v = as_f64(x);
        r.n++;
        double delta = v - r.d;
        r.d += delta / (double)r.n;
        r.m2 += delta * (v - r.d);
    }
}

/* a = a (+) b, for partials of any two index sets (the arg kinds break ties by index). */
template <int K> __device__ __forceinline__ void p_merge(partial &a, const partial &b, bool integer)
{
    if (K == R_SUM) {
        a.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i);
        a.d += b.d;
    } else if (K == R_PROD) {
        a.i = (int64_t)((uint64_t)a.i * (uint64_t)b.i);
        a.d *= b.d;
    } else if (K == R_MAX || K == R_MIN) {
        a.nan |= b.nan;
        if (!b.any) return;
        bool better =
            integer ? (K == R_MAX ? b.i > a.i : b.i < a.i) : (K == R_MAX ? b.d > a.d : b.d < a.d);
        if (!a.any || better) {
            a.d = b.d;
            a.i = b.i;
        }
        a.any = true;
    } else if (K == R_ARGMAX || K == R_ARGMIN) {
        if (!b.any) return;
        if (!a.any) {
            a = b;
            return;
        }
        if (a.nan || b.nan) {
            if (b.nan && (!a.nan || b.idx < a.idx)) a = b;
            return;
        }
        bool better = integer ? (K == R_ARGMAX ? b.i > a.i : b.i < a.i)
                              : (K == R_ARGMAX ? b.d > a.d : b.d < a.d);
        bool equal = integer ? b.i == a.i : b.d == a.d;
        if (better || (equal && b.idx < a.idx)) a = b;
    } else { /* R_VAR: Chan et al. */
        if (b.n == 0) return;
        if (a.n == 0) {
            a = b;
            return;
        }
        double na = (double)a.n, nb = (double)b.n, delta = b.d - a.d;
        a.m2 += b.m2 + delta * delta * na * nb / (na + nb);
        a.d += delta * nb / (na + nb);
        a.n += b.n;
    }
}

/* ------------------------------------------------------------------ partial kernels */

/* Block path. Work item w = (output o, split s), o = w / splits; a group of `group` threads
 * (256 or 32) folds inner elements [s * chunk, min((s + 1) * chunk, inner)) of o and its
 * first thread writes parts[w]. Every thread runs the same number of outer iterations, so
 * the __syncthreads() calls are uniform. */
template <int K, typename T>
__global__ void __launch_bounds__(THREADS)
    block_kernel(const T *base, rview v, int64_t splits, int64_t chunk, int group, bool integer,
                 partial *parts)
{
    __shared__ partial sm[THREADS];
    int per_block = THREADS / group;
    int g = threadIdx.x / group, lane = threadIdx.x % group;
    int64_t items = v.outer_numel * splits;
    for (int64_t w0 = (int64_t)blockIdx.x * per_block; w0 < items;
         w0 += (int64_t)gridDim.x * per_block) {
        int64_t w = w0 + g;
        partial r;
        p_init<K>(r);
        if (w < items) {
            int64_t o = w / splits, s = w % splits;
            int64_t jb = s * chunk, je = jb + chunk < v.inner_numel ? jb + chunk : v.inner_numel;
            const T *p = base + tg__rv_outer_offset(&v, o);
            int64_t j = jb + lane;
            if (v.in == 1 && v.ist[0] == 1) { /* contiguous: no stride multiply */
                for (; j + (UNROLL - 1) * group < je; j += UNROLL * group) {
                    T x[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; u++) x[u] = p[j + u * group];
#pragma unroll
                    for (int u = 0; u < UNROLL; u++) p_fold<K, T>(r, x[u], j + u * group, integer);
                }
                for (; j < je; j += group) p_fold<K, T>(r, p[j], j, integer);
            } else if (v.in == 1) {
                int64_t st = v.ist[0];
                for (; j + (UNROLL - 1) * group < je; j += UNROLL * group) {
                    T x[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; u++) x[u] = p[(j + u * group) * st];
#pragma unroll
                    for (int u = 0; u < UNROLL; u++) p_fold<K, T>(r, x[u], j + u * group, integer);
                }
                for (; j < je; j += group) p_fold<K, T>(r, p[j * st], j, integer);
            } else {
                for (; j < je; j += group)
                    p_fold<K, T>(r, p[tg__rv_inner_offset(&v, j)], j, integer);
            }
        }
        sm[threadIdx.x] = r;
        __syncthreads();
        for (int h = group / 2; h > 0; h /= 2) {
            if (lane < h) p_merge<K>(sm[threadIdx.x], sm[threadIdx.x + h], integer);
            __syncthreads();
        }
        if (lane == 0 && w < items) parts[w] = sm[threadIdx.x];
        __syncthreads();
    }
}

/* Thread path: one thread per work item; item t is output o = t % outer (neighbouring threads
 * read neighbouring outputs), split s = t / outer. The inner index walks incrementally. */
template <int K, typename T>
__global__ void thread_kernel(const T *base, rview v, int64_t splits, int64_t chunk, bool integer,
                              partial *parts)
{
    int64_t items = v.outer_numel * splits;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < items;
         t += (int64_t)gridDim.x * blockDim.x) {
        int64_t o = t % v.outer_numel, s = t / v.outer_numel;
        int64_t jb = s * chunk, je = jb + chunk < v.inner_numel ? jb + chunk : v.inner_numel;
        partial r;
        p_init<K>(r);
        if (jb < je) {
            const T *p = base + tg__rv_outer_offset(&v, o);
            int64_t idx[TG_MAX_DIMS], off = 0, rem = jb;
            for (int d = v.in - 1; d >= 0; d--) {
                idx[d] = rem % v.isz[d];
                rem /= v.isz[d];
                off += idx[d] * v.ist[d];
            }
            for (int64_t j = jb; j < je; j++) {
                p_fold<K, T>(r, p[off], j, integer);
                for (int d = v.in - 1; d >= 0; d--) {
                    off += v.ist[d];
                    if (++idx[d] < v.isz[d]) break;
                    off -= v.isz[d] * v.ist[d];
                    idx[d] = 0;
                }
            }
        }
        parts[o * splits + s] = r;
    }
}

/* ------------------------------------------------------------------ finish */

struct rout {
    char *p, *p2; /* values (or the only output), indices (max.dim / min.dim) */
    tg_cuda_offsets<1> oc, oc2;
    tg_dtype dt;
};

/* Merges output o's partials in split order and stores the result like the CPU's
 * store_result. `kind` is the user-facing kind (mean and std finish differently). */
template <int K>
__global__ void finish_kernel(const partial *parts, int64_t outer, int64_t splits, int kind,
                              bool integer, int64_t inner_numel, int64_t correction, rout out)
{
    for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < outer;
         o += (int64_t)gridDim.x * blockDim.x) {
        partial r = parts[o * splits];
        for (int64_t s = 1; s < splits; s++) p_merge<K>(r, parts[o * splits + s], integer);
        int64_t off;
        out.oc.get(o, &off);
        char *p = out.p + off;
        switch (kind) {
        case R_SUM:
        case R_PROD:
            if (integer) tg__cuda_store(p, out.dt, r.i);
            else tg__cuda_store(p, out.dt, r.d);
            break;
        case R_MEAN: tg__cuda_store(p, out.dt, r.d / (double)inner_numel); break;
        case R_MAX:
        case R_MIN:
            if (integer) tg__cuda_store(p, out.dt, r.i);
            else tg__cuda_store(p, out.dt, r.nan ? (double)NAN : r.d);
            break;
        case R_ARGMAX:
        case R_ARGMIN:
            if (out.p2) {
                if (integer) tg__cuda_store(p, out.dt, r.i);
                else tg__cuda_store(p, out.dt, r.d);
                out.oc2.get(o, &off);
                p = out.p2 + off;
            }
            *(int64_t *)p = r.idx;
            break;
        default: { /* R_VAR, R_STD */
            double den = (double)r.n - (double)correction;
            double var = (r.n ? r.m2 : (double)NAN) / (den > 0 ? den : 0);
            tg__cuda_store(p, out.dt, kind == R_STD ? sqrt(var) : var);
            break;
        }
        }
    }
}

/* ------------------------------------------------------------------ drivers (host) */

static int sm_count(int dev)
{
    static int cached[64];
    if (dev < 0 || dev >= 64) return 132;
    if (!cached[dev]) {
        int n = 0;
        if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            n <= 0) {
            (void)cudaGetLastError();
            n = 132;
        }
        cached[dev] = n;
    }
    return cached[dev];
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The block path suits reductions whose innermost reduced dim is the fastest in memory. */
static bool use_block_path(const rview &v)
{
    if (v.inner_numel <= 16) return false;
    if (v.ist[v.in - 1] == 1) return true;
    return !(v.ost[v.on - 1] == 1 && v.outer_numel >= 32);
}

template <int K, typename T>
static int launch_partials(const char *op, const rview &v, const T *base, bool integer,
                           partial **parts_out, int64_t *splits_out, tg_tensor **ws, tg_device dev,
                           cudaStream_t st)
{
    int sms = sm_count(dev.index);
    int64_t splits = 1, chunk = v.inner_numel > 0 ? v.inner_numel : 1;
    bool block = use_block_path(v);
    int group = THREADS;
    if (block) {
        group = v.inner_numel <= 2048 ? 32 : THREADS;
        /* One full wave: as many blocks as can be resident at once (no half-empty tail wave
         * when a few outputs are split across the whole device). */
        int resident = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, block_kernel<K, T>, THREADS,
                                                          0) != cudaSuccess ||
            resident < 1) {
            (void)cudaGetLastError();
            resident = 4;
        }
        int64_t want_items = (int64_t)sms * resident * (THREADS / group);
        if (v.outer_numel < want_items) {
            splits = want_items / v.outer_numel;
            int64_t max_splits = ceil_div(v.inner_numel, (int64_t)group * UNROLL * 4);
            if (splits > max_splits) splits = max_splits;
            if (splits < 1) splits = 1;
        }
    } else {
        int64_t want_threads = (int64_t)sms * 2048;
        if (v.outer_numel < want_threads) {
            splits = ceil_div(want_threads, v.outer_numel);
            int64_t max_splits = ceil_div(v.inner_numel, 64);
            if (splits > max_splits) splits = max_splits;
            if (splits < 1) splits = 1;
        }
    }
    if (v.inner_numel > 0) chunk = ceil_div(v.inner_numel, splits);
    int64_t items = v.outer_numel * splits;
    int64_t wsz = items * (int64_t)sizeof(partial);
    *ws = tg__empty(op, &wsz, 1, TG_UINT8, dev);
    if (!*ws) return -1;
    partial *parts = (partial *)tg__k_data(*ws);
    if (block) {
        int64_t blocks = ceil_div(items, THREADS / group);
        unsigned grid = (unsigned)(blocks < (int64_t)sms * 32 ? blocks : (int64_t)sms * 32);
        block_kernel<K, T><<<grid, THREADS, 0, st>>>(base, v, splits, chunk, group, integer, parts);
    } else {
        thread_kernel<K, T><<<tg__cuda_blocks(items, THREADS), THREADS, 0, st>>>(
            base, v, splits, chunk, integer, parts);
    }
    *parts_out = parts;
    *splits_out = splits;
    return tg__cuda_launch_ok(op);
}

template <int K>
static int run_kind(const char *op, int kind, const rview &v, const tg_tensor *self, bool integer,
                    int64_t correction, const rout &out, cudaStream_t st)
{
    partial *parts = NULL;
    int64_t splits = 1;
    tg_tensor *ws = NULL;
    int rc = -1;
    tg__cuda_dispatch(self->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        rc = launch_partials<K, T>(op, v, (const T *)tg__k_data(self), integer, &parts, &splits,
                                   &ws, self->device, st);
    });
    if (rc == 0) {
        finish_kernel<K><<<tg__cuda_blocks(v.outer_numel, THREADS), THREADS, 0, st>>>(
            parts, v.outer_numel, splits, kind, integer, v.inner_numel, correction, out);
        rc = tg__cuda_launch_ok(op);
    }
    tg_release(ws); /* the caching allocator reuses it in stream order */
    return rc;
}

static int run_reduce(const char *op, int kind, const rview &v, const tg_tensor *self, bool integer,
                      int64_t correction, const rout &out, cudaStream_t st)
{
    switch (kind) {
    case R_SUM:
    case R_MEAN: return run_kind<R_SUM>(op, kind, v, self, integer, correction, out, st);
    case R_PROD: return run_kind<R_PROD>(op, kind, v, self, integer, correction, out, st);
    case R_MAX: return run_kind<R_MAX>(op, kind, v, self, integer, correction, out, st);
    case R_MIN: return run_kind<R_MIN>(op, kind, v, self, integer, correction, out, st);
    case R_ARGMAX: return run_kind<R_ARGMAX>(op, kind, v, self, integer, correction, out, st);
    case R_ARGMIN: return run_kind<R_ARGMIN>(op, kind, v, self, integer, correction, out, st);
    default: return run_kind<R_VAR>(op, kind, v, self, integer, correction, out, st);
    }
}

/* The CUDA body of every reduction (reduce_checks.h's tg_reduce_fn), as the CPU's: prepares
 * the output(s) on self's device and runs. */
static tg_tensor *reduce_common(const tg_reduce_req *rq, tg_tensor **res2)
{
    const char *op = rq->op;
    tg_tensor *self = rq->self;
    const tg_reduce_plan *plan = &rq->plan;
    int rc = 0;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return NULL;
    if (tg__cuda_same_device(op, self, rq->out) || tg__cuda_same_device(op, self, rq->out2))
        return NULL;
    tg_tensor *res =
        tg__cuda_prepare_out(op, rq->out, plan->out_sizes, plan->out_ndim, rq->odt, self->device);
    if (!res) return NULL;
    rout ro;
    memset(&ro, 0, sizeof ro);
    ro.p = tg__k_data(res);
    ro.oc = tg__cuda_offsets_from_tensor(res);
    ro.dt = rq->odt;
    if (res2) {
        *res2 = tg__cuda_prepare_out(op, rq->out2, plan->out_sizes, plan->out_ndim, TG_INT64,
                                     self->device);
        if (!*res2) {
            tg_release(res);
            return NULL;
        }
        ro.p2 = tg__k_data(*res2);
        ro.oc2 = tg__cuda_offsets_from_tensor(*res2);
    }
    if (rq->v.outer_numel > 0)
        rc = run_reduce(op, rq->kind, rq->v, self, rq->integer, rq->correction, ro, st);
    return tg__reduce_done(rc, res, res2, rq->out, rq->out2);
}

/* ------------------------------------------------------------------ kernels
 * The argument handling is reduce_checks.h's (shared with the CPU), around reduce_common. */

extern "C" tg_tensor *tg__cuda_sum_out(tg_tensor *self, tg_int_list dim, bool keepdim,
                                       tg_dtype dtype, tg_tensor *out)
{
    return tg__reduce_sum(reduce_common, self, dim, keepdim, dtype, out);
}

extern "C" tg_tensor *tg__cuda_mean_out(tg_tensor *self, tg_int_list dim, bool keepdim,
                                        tg_dtype dtype, tg_tensor *out)
{
    return tg__reduce_mean(reduce_common, self, dim, keepdim, dtype, out);
}

extern "C" tg_tensor *tg__cuda_prod_out(tg_tensor *self, int64_t dim, bool keepdim, tg_dtype dtype,
                                        tg_tensor *out)
{
    return tg__reduce_prod(reduce_common, self, dim, keepdim, dtype, out);
}

extern "C" tg_tensor *tg__cuda_amax_out(tg_tensor *self, tg_int_list dim, bool keepdim,
                                        tg_tensor *out)
{
    return tg__reduce_amax_amin(reduce_common, "amax", "amax()", R_MAX, self, dim, keepdim, out);
}

extern "C" tg_tensor *tg__cuda_amin_out(tg_tensor *self, tg_int_list dim, bool keepdim,
                                        tg_tensor *out)
{
    return tg__reduce_amax_amin(reduce_common, "amin", "amin()", R_MIN, self, dim, keepdim, out);
}

extern "C" tg_values_indices tg__cuda_max_dim_out(tg_tensor *self, int64_t dim, bool keepdim,
                                                  tg_tensor *max, tg_tensor *max_values)
{
    return tg__reduce_max_min_dim(reduce_common, "max", "max()", R_ARGMAX, self, dim, keepdim, max,
                                  max_values);
}

extern "C" tg_values_indices tg__cuda_min_dim_out(tg_tensor *self, int64_t dim, bool keepdim,
                                                  tg_tensor *min, tg_tensor *min_indices)
{
    return tg__reduce_max_min_dim(reduce_common, "min", "min()", R_ARGMIN, self, dim, keepdim, min,
                                  min_indices);
}

extern "C" tg_tensor *tg__cuda_argmax_out(tg_tensor *self, tg_opt_int dim, bool keepdim,
                                          tg_tensor *out)
{
    return tg__reduce_arg(reduce_common, "argmax", "argmax()", R_ARGMAX, self, dim, keepdim, out);
}

extern "C" tg_tensor *tg__cuda_argmin_out(tg_tensor *self, tg_opt_int dim, bool keepdim,
                                          tg_tensor *out)
{
    return tg__reduce_arg(reduce_common, "argmin", "argmin()", R_ARGMIN, self, dim, keepdim, out);
}

extern "C" tg_tensor *tg__cuda_var_out(tg_tensor *self, tg_int_list dim, tg_opt_int correction,
                                       bool keepdim, tg_tensor *out)
{
    return tg__reduce_var_std(reduce_common, "var", R_VAR, self, dim, correction, keepdim, out);
}

extern "C" tg_tensor *tg__cuda_std_out(tg_tensor *self, tg_int_list dim, tg_opt_int correction,
                                       bool keepdim, tg_tensor *out)
{
    return tg__reduce_var_std(reduce_common, "std", R_STD, self, dim, correction, keepdim, out);
}
