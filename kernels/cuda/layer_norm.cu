/* Layer normalization on CUDA: native_layer_norm and native_layer_norm_backward, float32 and
 * float64, with the CPU kernels' semantics and checks (kernels/common/embnorm_checks.h).
 *
 * Operands are made contiguous and seen as (M, N). Forward: one block per row (grid-stride
 * over rows), two block reductions through shared memory (mean, then the sum of squared
 * deviations) in the accumulation type (float for float32, double for float64), then the
 * normalised, scaled and shifted row. Backward: one block per row for dx (two block sums,
 * sum(dy * w) and sum(dy * w * (x - mean))); grad_weight/grad_bias are column sums done
 * deterministically without atomics: blocks of (32 columns x 8 row lanes) over chunks of rows
 * write per-chunk partials, and a second kernel adds the partials of each column in chunk
 * order. */
#include "tg_cuda.cuh"
#include "embnorm_checks.h"

#include "kernels/native_layer_norm.h"
#include "kernels/native_layer_norm_backward.h"

#define LN_THREADS 256 /* threads of the row kernels (a power of two) */
#define LN_COLS 32     /* columns per block of the column-sum kernel */
#define LN_LANES 8     /* row lanes per block of the column-sum kernel */
#define LN_CHUNK 128   /* rows per partial of the column sums */
#define LN_MAX_GRID 65535

template <class T> struct ln_acc {
    typedef float type;
};
template <> struct ln_acc<double> {
    typedef double type;
};

/* Sum of v over the block (blockDim.x a power of two <= LN_THREADS); every thread gets it. */
template <class A> __device__ A ln_block_sum(A v, A *sh)
{
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    A r = sh[0];
    __syncthreads();
    return r;
}

template <class T>
__global__ void ln_fwd_kernel(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, int64_t M,
                              int64_t N, double eps)
{
    typedef typename ln_acc<T>::type A;
    __shared__ A sh[LN_THREADS];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        A s = 0;
        for (int64_t i = threadIdx.x; i < N; i += blockDim.x) s += (A)xr[i];
        A mu = N > 0 ? ln_block_sum<A>(s, sh) / (A)N : (A)0;
        A q = 0;
        for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
            A d = (A)xr[i] - mu;
            q += d * d;
        }
        A var = N > 0 ? ln_block_sum<A>(q, sh) / (A)N : (A)NAN;
        A r = (A)(1.0 / sqrt((double)var + eps));
        for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
            A v = ((A)xr[i] - mu) * r;
            if (w) v *= (A)w[i];
            if (b) v += (A)b[i];
            yr[i] = (T)v;
        }
        if (threadIdx.x == 0) {
            mean[row] = (T)mu;
            rstd[row] = (T)r;
        }
    }
}

/* dx = r * dy * w - r * mean(dy * w) - (x - mu) * r^3 * mean(dy * w * (x - mu)) */
template <class T>
__global__ void ln_dx_kernel(const T *dy, const T *x, const T *mean, const T *rstd, const T *w,
                             T *dx, int64_t M, int64_t N)
{
    typedef typename ln_acc<T>::type A;
    __shared__ A sh[LN_THREADS];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N, *gr = dy + row * N;
        A mu = (A)mean[row], r = (A)rstd[row];
        A s1 = 0, s2 = 0;
        for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
            A g = (A)gr[i] * (w ? (A)w[i] : (A)1);
            s1 += g;
            s2 += g * ((A)xr[i] - mu);
        }
        s1 = ln_block_sum<A>(s1, sh);
        s2 = ln_block_sum<A>(s2, sh);
        A c1 = -r * s1 / (A)N, c2 = -r * r * r * s2 / (A)N;
        for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
            A g = (A)gr[i] * (w ? (A)w[i] : (A)1);
            dx[row * N + i] = (T)(r * g + c1 + ((A)xr[i] - mu) * c2);
        }
    }
}

/* Per (chunk of chunk_rows rows, column): partial sums of dy * xhat and dy, each written to
 * pw/pb[chunk * N + col]. Block (LN_COLS, LN_LANES); grid (column blocks, chunks). */
template <class T>
__global__ void ln_colsum_kernel(const T *dy, const T *x, const T *mean, const T *rstd, int64_t M,
                                 int64_t N, int64_t chunk_rows, typename ln_acc<T>::type *pw,
                                 typename ln_acc<T>::type *pb)
{
    typedef typename ln_acc<T>::type A;
    __shared__ A sw[LN_LANES][LN_COLS], sb[LN_LANES][LN_COLS];
    int64_t col = (int64_t)blockIdx.x * LN_COLS + threadIdx.x;
    int64_t chunk = blockIdx.y, r0 = chunk * chunk_rows;
    int64_t r1 = r0 + chunk_rows < M ? r0 + chunk_rows : M;
    A aw = 0, ab = 0;
    if (col < N)
        for (int64_t row = r0 + threadIdx.y; row < r1; row += LN_LANES) {
            A g = (A)dy[row * N + col];
            aw += g * ((A)x[row * N + col] - (A)mean[row]) * (A)rstd[row];
            ab += g;
        }
    sw[threadIdx.y][threadIdx.x] = aw;
    sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        for (int l = 1; l < LN_LANES; l++) {
            aw += sw[l][threadIdx.x];
            ab += sb[l][threadIdx.x];
        }
        pw[chunk * N + col] = aw;
        pb[chunk * N + col] = ab;
    }
}

/* The partials of each column added in chunk order. */
template <class T>
__global__ void ln_colsum_final_kernel(const typename ln_acc<T>::type *pw,
                                       const typename ln_acc<T>::type *pb, int64_t chunks,
                                       int64_t N, T *gw, T *gb)
{
    typedef typename ln_acc<T>::type A;
    for (int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; col < N;
         col += (int64_t)gridDim.x * blockDim.x) {
        A a = 0, s = 0;
        for (int64_t c = 0; c < chunks; c++) {
            a += pw[c * N + col];
            s += pb[c * N + col];
        }
        if (gw) gw[col] = (T)a;
        if (gb) gb[col] = (T)s;
    }
}

/* ------------------------------------------------------------------ host side */

static unsigned row_threads(int64_t n)
{
    unsigned t = 32;
    while (t < LN_THREADS && (int64_t)t * 4 < n) t *= 2;
    return t;
}

static unsigned row_blocks(int64_t m) { return (unsigned)(m < LN_MAX_GRID ? m : LN_MAX_GRID); }

static tg_tensor *stat_tensor(const char *op, const tg_tensor *input, int64_t nsl)
{
    int64_t sz[TG_MAX_DIMS];
    for (int64_t i = 0; i < input->ndim; i++) sz[i] = i < input->ndim - nsl ? input->sizes[i] : 1;
    return tg__empty(op, sz, input->ndim, input->dtype, input->device);
}

extern "C" tg_tensors3 tg__cuda_native_layer_norm(tg_tensor *input, tg_int_list normalized_shape,
                                                  tg_tensor *weight, tg_tensor *bias, double eps)
{
    const char *op = "native_layer_norm";
    tg_tensors3 res = { NULL, NULL, NULL };
    int64_t M, N;
    if (tg__layer_norm_check(op, input, normalized_shape, weight, bias, &M, &N) != 0) return res;
    tg_tensor *others[2] = { weight, bias }, *c[3];
    cudaStream_t st;
    if (tg__cuda_begin_copies(op, input, others, 2, 2, &st, c) != 0) return res;
    tg_tensor *x = c[0], *w = c[1], *b = c[2];
    tg_dtype dt = input->dtype;
    tg_tensor *y = tg__empty(op, input->sizes, input->ndim, dt, input->device);
    tg_tensor *mt = y ? stat_tensor(op, input, normalized_shape.len) : NULL;
    tg_tensor *rt = mt ? stat_tensor(op, input, normalized_shape.len) : NULL;
    bool ok = rt != NULL;
    if (ok && M > 0) {
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                ln_fwd_kernel<T><<<row_blocks(M), row_threads(N), 0, st>>>(
                    (const T *)tg__k_data(x), w ? (const T *)tg__k_data(w) : (const T *)NULL,
                    b ? (const T *)tg__k_data(b) : (const T *)NULL, (T *)tg__k_data(y),
                    (T *)tg__k_data(mt), (T *)tg__k_data(rt), M, N, eps);
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    tg__k_release_all(c, 3);
    return tg__k_results3(ok, y, mt, rt);
}

extern "C" tg_tensors3 tg__cuda_native_layer_norm_backward(tg_tensor *grad_out, tg_tensor *input,
                                                           tg_int_list normalized_shape,
                                                           tg_tensor *mean, tg_tensor *rstd,
                                                           tg_tensor *weight, tg_tensor *bias,
                                                           tg_bool_list output_mask)
{
    const char *op = "native_layer_norm_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    int64_t M, N;
    if (tg__layer_norm_backward_check(op, grad_out, input, normalized_shape, mean, rstd, weight,
                                      bias, &M, &N) != 0)
        return res;
    /* bias is only checked: the gradients do not read it */
    tg_tensor *others[5] = { grad_out, mean, rstd, weight, bias }, *c[5];
    cudaStream_t st;
    if (tg__cuda_begin_copies(op, input, others, 5, 4, &st, c) != 0) return res;
    tg_tensor *x = c[0], *dy = c[1], *mu = c[2], *rs = c[3], *w = c[4];
    bool want[3];
    tg__k_output_mask(output_mask, want);
    tg_dtype dt = input->dtype;
    tg_device dev = input->device;
    /* rows per partial: LN_CHUNK, more when the grid's y dimension would overflow */
    int64_t chunk_rows = (M + LN_MAX_GRID - 1) / LN_MAX_GRID;
    if (chunk_rows < LN_CHUNK) chunk_rows = LN_CHUNK;
    int64_t chunks = (M + chunk_rows - 1) / chunk_rows;
    bool cols = want[1] || want[2];
    tg_tensor *dx = want[0] ? tg__empty(op, input->sizes, input->ndim, dt, dev) : NULL;
    tg_tensor *gw =
        want[1] ? tg__empty(op, normalized_shape.data, normalized_shape.len, dt, dev) : NULL;
    tg_tensor *gb =
        want[2] ? tg__empty(op, normalized_shape.data, normalized_shape.len, dt, dev) : NULL;
    /* the partials, in the accumulation type (float32 for float32) */
    int64_t nws = cols ? 2 * chunks * N + 1 : 1;
    tg_tensor *ws = tg__empty(op, &nws, 1, dt, dev);
    bool ok = ws && (!want[0] || dx) && (!want[1] || gw) && (!want[2] || gb);
    if (ok && M > 0 && N > 0) {
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                const T *xp = (const T *)tg__k_data(x), *dyp = (const T *)tg__k_data(dy);
                const T *mp = (const T *)tg__k_data(mu), *rp = (const T *)tg__k_data(rs);
                if (dx)
                    ln_dx_kernel<T><<<row_blocks(M), row_threads(N), 0, st>>>(
                        dyp, xp, mp, rp, w ? (const T *)tg__k_data(w) : (const T *)NULL,
                        (T *)tg__k_data(dx), M, N);
                if (cols) {
                    T *pw = (T *)tg__k_data(ws), *pb = pw + chunks * N;
                    dim3 grid((unsigned)((N + LN_COLS - 1) / LN_COLS), (unsigned)chunks);
                    ln_colsum_kernel<T><<<grid, dim3(LN_COLS, LN_LANES), 0, st>>>(
                        dyp, xp, mp, rp, M, N, chunk_rows, pw, pb);
                    ln_colsum_final_kernel<T><<<tg__cuda_blocks(N, 256), 256, 0, st>>>(
                        pw, pb, chunks, N, gw ? (T *)tg__k_data(gw) : (T *)NULL,
                        gb ? (T *)tg__k_data(gb) : (T *)NULL);
                }
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    tg_release(ws);
    /* no rows (zero gradients for weight and bias) or empty rows (nothing to compute) */
    tg_tensor *g[3] = { dx, gw, gb };
    return tg__cuda_grads_end(op, ok, !(M > 0 && N > 0), g, c, 5, st);
}
