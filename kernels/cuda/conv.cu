/* convolution and convolution_backward on CUDA. Each pass goes to cuDNN first when the build
 * has it (kernels/cuda/conv_cudnn.cu; TG_CUDA_CONV=im2col turns it off); the path below,
 * im2col + cuBLAS, is the cuDNN-free one, which the CPU emulator runs (docs/cuda.md). Semantics, geometry and messages are the CPU kernels'
 * (kernels/cpu/conv.c, kernels/common/conv_checks.h): one regular convolution from the im side
 * to the col side, read forwards (convolution, a transposed convolution's grad_input) or
 * backwards (a transposed convolution, a convolution's grad_input).
 *
 *   to_col  per chunk of samples: im2col of the chunk into a scratch buffer (one thread per
 *           column element), then one strided-batched GEMM, batched over samples x groups
 *           (groups 1) or over the groups of one sample, onto the bias-filled output.
 *   to_im   per chunk: a batched GEMM W^T . col into the scratch buffer, then col2im as a
 *           gather (one thread per image element sums the column entries that read it: no
 *           atomics, deterministic), plus the bias.
 *   weight  per sample: im2col, then a GEMM over the groups accumulating (beta 1) into
 *           grad_weight in sample order.
 *   bias    one block per channel sums grad_output in double in a fixed order.
 *
 * float32 (full float32 GEMMs, no TF32) and float64. The scratch buffer holds at most
 * SCRATCH_BYTES of columns (at least one sample). */
#include "tg_cuda.cuh"
#include <cublas_v2.h>
#include <climits>
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/convolution.h"
#include "kernels/convolution_backward.h"
#include "conv_checks.h" /* the CPU kernels' argument checks and geometry */
#include "conv_cudnn.cuh"

#define THREADS 256
#define SCRATCH_BYTES ((int64_t)256 << 20)

/* The geometry as kernels read it (3 spatial dims). */
struct conv_dev {
    int64_t im_c, iD, iH, iW, oD, oH, oW, kD, kH, kW;
    int64_t sD, sH, sW, pD, pH, pW, dD, dH, dW;
};

static conv_dev dev_of(const tg__conv_geom &g)
{
    conv_dev d = { g.im_c,      g.im_sp[0],  g.im_sp[1],  g.im_sp[2], g.col_sp[0],
                   g.col_sp[1], g.col_sp[2], g.k[0],      g.k[1],     g.k[2],
                   g.stride[0], g.stride[1], g.stride[2], g.pad[0],   g.pad[1],
                   g.pad[2],    g.dil[0],    g.dil[1],    g.dil[2] };
    return d;
}

/* cols (ns, im_c * kvol, L) <- the columns of ns images (ns, im_c, iD, iH, iW). */
template <typename T> __global__ void im2col_kernel(const T *im, T *cols, conv_dev d, int64_t ns)
{
    int64_t L = d.oD * d.oH * d.oW, kvol = d.kD * d.kH * d.kW;
    int64_t total = ns * d.im_c * kvol * L;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t l = i % L, row = (i / L) % (d.im_c * kvol), n = i / (L * d.im_c * kvol);
        int64_t ow = l % d.oW, oh = (l / d.oW) % d.oH, od = l / (d.oW * d.oH);
        int64_t kw = row % d.kW, kh = (row / d.kW) % d.kH, kd = (row / (d.kW * d.kH)) % d.kD;
        int64_t c = row / kvol;
        int64_t id = od * d.sD - d.pD + kd * d.dD, ih = oh * d.sH - d.pH + kh * d.dH,
                iw = ow * d.sW - d.pW + kw * d.dW;
        bool in = id >= 0 && id < d.iD && ih >= 0 && ih < d.iH && iw >= 0 && iw < d.iW;
        cols[i] = in ? im[(((n * d.im_c + c) * d.iD + id) * d.iH + ih) * d.iW + iw] : (T)0;
    }
}

/* Whether output position o along one dim reads image position x through kernel tap k:
 * o * s - p + k * dl == x. */
__device__ __forceinline__ bool tap(int64_t x, int64_t k, int64_t s, int64_t p, int64_t dl,
                                    int64_t on, int64_t *o)
{
    int64_t t = x + p - k * dl;
    if (t < 0 || t % s != 0) return false;
    *o = t / s;
    return *o < on;
}

/* im (ns, im_c, iD, iH, iW) = bias[c] (or 0) + the sum of the column entries that read each
 * element (the adjoint of im2col). */
template <typename T>
__global__ void col2im_kernel(const T *cols, T *im, const T *bias, conv_dev d, int64_t ns)
{
    int64_t L = d.oD * d.oH * d.oW, kvol = d.kD * d.kH * d.kW, P = d.iD * d.iH * d.iW;
    int64_t total = ns * d.im_c * P;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t x = i % d.iW, y = (i / d.iW) % d.iH, z = (i / (d.iW * d.iH)) % d.iD;
        int64_t c = (i / P) % d.im_c, n = i / (P * d.im_c);
        T acc = bias ? bias[c] : (T)0;
        const T *base = cols + (n * d.im_c + c) * kvol * L;
        for (int64_t kd = 0; kd < d.kD; kd++) {
            int64_t od;
            if (!tap(z, kd, d.sD, d.pD, d.dD, d.oD, &od)) continue;
            for (int64_t kh = 0; kh < d.kH; kh++) {
                int64_t oh;
                if (!tap(y, kh, d.sH, d.pH, d.dH, d.oH, &oh)) continue;
                for (int64_t kw = 0; kw < d.kW; kw++) {
                    int64_t ow;
                    if (!tap(x, kw, d.sW, d.pW, d.dW, d.oW, &ow)) continue;
                    acc += base[((kd * d.kH + kh) * d.kW + kw) * L + (od * d.oH + oh) * d.oW + ow];
                }
            }
        }
        im[i] = (T)acc;
    }
}

/* out (ns, C, L) = bias[c], or 0. */
template <typename T>
__global__ void fill_bias_kernel(T *out, const T *bias, int64_t C, int64_t L, int64_t total)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = bias ? bias[(i / L) % C] : (T)0;
}

/* gb[c] = sum over n and l of go (N, C, L): one block per channel, double partial sums merged
 * in shared memory in a fixed order. */
template <typename T>
__global__ void __launch_bounds__(THREADS)
    bias_grad_kernel(const T *go, T *gb, int64_t N, int64_t C, int64_t L)
{
    __shared__ double part[THREADS];
    int64_t c = blockIdx.x;
    double s = 0;
    for (int64_t i = threadIdx.x; i < N * L; i += blockDim.x)
        s += (double)go[((i / L) * C + c) * L + i % L];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) gb[c] = (T)part[0];
}

/* ------------------------------------------------------------------ host side */

/* Row-major C (m, n) = A (m, k) . B (k, n) + beta C for `batch` problems, operands `sa`, `sb`,
 * `sc` elements apart (A or B transposed as stored), in column-major cuBLAS terms:
 * C^T = B^T A^T. */
struct gemm_rm {
    bool ta, tb;
    int64_t m, n, k, batch, sa, sb, sc;
    double beta;
};

static int gemm(const char *op, cublasHandle_t h, tg_dtype dt, const gemm_rm &g, const void *a,
                const void *b, void *c)
{
    if (g.m == 0 || g.n == 0 || g.batch == 0) return 0;
    int64_t lda = g.ta ? g.m : g.k, ldb = g.tb ? g.k : g.n;
    if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX || g.batch > INT_MAX)
        return tg__fail(op, "convolution dimensions exceed cuBLAS's 32-bit limits");
    float one_f = 1.0f, beta_f = (float)g.beta;
    double one_d = 1.0;
    bool f64 = dt == TG_FLOAT64;
    cudaDataType_t ty = f64 ? CUDA_R_64F : CUDA_R_32F;
    cublasComputeType_t ct = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    const void *alpha = f64 ? (const void *)&one_d : (const void *)&one_f;
    const void *beta = f64 ? (const void *)&g.beta : (const void *)&beta_f;
    cublasStatus_t s = cublasGemmStridedBatchedEx(
        h, g.tb ? CUBLAS_OP_T : CUBLAS_OP_N, g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)g.n, (int)g.m,
        (int)g.k, alpha, b, ty, (int)ldb, (long long)g.sb, a, ty, (int)lda, (long long)g.sa, beta,
        c, ty, (int)g.n, (long long)g.sc, (int)g.batch, ct, CUBLAS_GEMM_DEFAULT);
    return tg__cublas_check(op, (int)s);
}

/* Everything a pass needs: geometry, device, stream, cuBLAS, scratch. */
struct conv_ctx {
    const char *op;
    tg__conv_geom g;
    conv_dev d;
    tg_dtype dt;
    size_t es;
    int device;
    cudaStream_t st;
    cublasHandle_t h;
    int64_t K, L, P, kvol, icg, ocg, chunk; /* chunk: samples per scratch buffer */
    bool cudnn;                             /* cuDNN may take the passes (conv_cudnn.cuh) */
    char *scratch;
    size_t scratch_bytes;
};

static int ctx_init(conv_ctx *c, const char *op, const tg__conv_geom &g, const tg_tensor *t)
{
    c->op = op;
    c->g = g;
    c->d = dev_of(g);
    c->dt = t->dtype;
    c->es = tg_dtype_size(t->dtype);
    c->device = tg__cuda_device_of(t);
    c->K = tg__conv_col_rows(&g);
    c->L = tg__conv_prod3(g.col_sp);
    c->P = tg__conv_prod3(g.im_sp);
    c->kvol = tg__conv_prod3(g.k);
    c->icg = g.im_c / g.groups;
    c->ocg = g.col_c / g.groups;
    c->scratch = NULL;
    c->scratch_bytes = 0;
#ifdef TG_WITH_CUDNN
    const char *mode = getenv("TG_CUDA_CONV");
    c->cudnn = !(mode && !strcmp(mode, "im2col"));
#else
    c->cudnn = false;
#endif
    int rc;
    c->st = tg__cuda_select_stream(op, t->device, &rc);
    if (rc) return -1;
    c->h = tg__cublas_handle(op, c->device);
    if (!c->h) return -1;
    int64_t per_sample = g.groups * c->K * c->L * (int64_t)c->es;
    c->chunk = per_sample > 0 ? SCRATCH_BYTES / per_sample : g.n;
    if (c->chunk < 1) c->chunk = 1;
    if (c->chunk > g.n) c->chunk = g.n;
    return 0;
}

/* The column buffer of the im2col path, allocated when a pass first needs it (never when cuDNN
 * takes every pass). 0, or -1 + error. */
static int scratch_ready(conv_ctx *c)
{
    if (c->scratch || c->chunk < 1) return 0;
    c->scratch_bytes = (size_t)(c->chunk * c->g.groups * c->K * c->L) * c->es + 16;
    c->scratch = (char *)tg__cuda_alloc(c->op, c->scratch_bytes, c->device);
    return c->scratch ? 0 : -1;
}

static void ctx_free(conv_ctx *c)
{
    if (c->scratch) tg__cuda_free(c->scratch, c->scratch_bytes, c->device);
    c->scratch = NULL;
}

template <typename F> static int with_type(tg_dtype dt, F f)
{
    if (dt == TG_FLOAT64) return f((double)0);
    return f((float)0);
}

/* col (N, col_c, L) = bias + W . im2col(im (N, im_c, P)). */
static int pass_to_col(conv_ctx *c, const char *im, const char *w, const char *bias, char *col)
{
    return with_type(c->dt, [&](auto zero) {
        using T = decltype(zero);
        const tg__conv_geom &g = c->g;
        int64_t total = g.n * g.col_c * c->L;
        fill_bias_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, c->st>>>(
            (T *)col, (const T *)bias, g.col_c, c->L, total);
        if (tg__cuda_launch_ok(c->op)) return -1;
        int done = tg__cudnn_conv(c->op, TG_CUDNN_TO_COL, g, c->dt, c->device, c->st, (void *)im,
                                  col, (void *)w);
        if (done) return done < 0 ? -1 : 0;
        if (scratch_ready(c)) return -1;
        for (int64_t n0 = 0; n0 < g.n; n0 += c->chunk) {
            int64_t ns = g.n - n0 < c->chunk ? g.n - n0 : c->chunk;
            int64_t tot = ns * g.im_c * (c->kvol) * c->L;
            const T *src = (const T *)im + n0 * g.im_c * c->P;
            im2col_kernel<T><<<tg__cuda_blocks(tot, THREADS), THREADS, 0, c->st>>>(
                src, (T *)c->scratch, c->d, ns);
            if (tg__cuda_launch_ok(c->op)) return -1;
            T *dst = (T *)col + n0 * g.col_c * c->L;
            if (g.groups == 1) { /* one batch over the chunk's samples, weight shared */
                gemm_rm p = { false, false, c->ocg,      c->L,          c->K,
                              ns,    0,     c->K * c->L, c->ocg * c->L, 1.0 };
                if (gemm(c->op, c->h, c->dt, p, w, c->scratch, dst)) return -1;
                continue;
            }
            for (int64_t s = 0; s < ns; s++) { /* per sample, batched over groups */
                gemm_rm p = { false,    false,         c->ocg,      c->L,          c->K,
                              g.groups, c->ocg * c->K, c->K * c->L, c->ocg * c->L, 1.0 };
                if (gemm(c->op, c->h, c->dt, p, w, (T *)c->scratch + s * g.groups * c->K * c->L,
                         dst + s * g.col_c * c->L))
                    return -1;
            }
        }
        return 0;
    });
}

/* im (N, im_c, P) = bias + col2im(W^T . col (N, col_c, L)). */
static int pass_to_im(conv_ctx *c, const char *col, const char *w, const char *bias, char *im)
{
    return with_type(c->dt, [&](auto zero) {
        using T = decltype(zero);
        const tg__conv_geom &g = c->g;
        if (c->cudnn) { /* cuDNN adds onto the bias */
            int64_t total = g.n * g.im_c * c->P;
            fill_bias_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, c->st>>>(
                (T *)im, (const T *)bias, g.im_c, c->P, total);
            if (tg__cuda_launch_ok(c->op)) return -1;
            int done = tg__cudnn_conv(c->op, TG_CUDNN_TO_IM, g, c->dt, c->device, c->st, im,
                                      (void *)col, (void *)w);
            if (done) return done < 0 ? -1 : 0;
        }
        if (scratch_ready(c)) return -1;
        for (int64_t n0 = 0; n0 < g.n; n0 += c->chunk) {
            int64_t ns = g.n - n0 < c->chunk ? g.n - n0 : c->chunk;
            const T *src = (const T *)col + n0 * g.col_c * c->L;
            /* scratch (ns * groups, K, L) = W_g^T (K, ocg) . col (ocg, L) */
            if (g.groups == 1) {
                gemm_rm p = { true, false, c->K,          c->L,        c->ocg,
                              ns,   0,     c->ocg * c->L, c->K * c->L, 0.0 };
                if (gemm(c->op, c->h, c->dt, p, w, src, c->scratch)) return -1;
            } else {
                for (int64_t s = 0; s < ns; s++) {
                    gemm_rm p = { true,     false,         c->K,          c->L,        c->ocg,
                                  g.groups, c->ocg * c->K, c->ocg * c->L, c->K * c->L, 0.0 };
                    if (gemm(c->op, c->h, c->dt, p, w, src + s * g.col_c * c->L,
                             (T *)c->scratch + s * g.groups * c->K * c->L))
                        return -1;
                }
            }
            if (c->ocg == 0) {
                int64_t zeros = ns * g.groups * c->K * c->L;
                fill_bias_kernel<T><<<tg__cuda_blocks(zeros, THREADS), THREADS, 0, c->st>>>(
                    (T *)c->scratch, (const T *)NULL, 1, 1, zeros);
                if (tg__cuda_launch_ok(c->op)) return -1;
            }
            int64_t tot = ns * g.im_c * c->P;
            col2im_kernel<T><<<tg__cuda_blocks(tot, THREADS), THREADS, 0, c->st>>>(
                (const T *)c->scratch, (T *)im + n0 * g.im_c * c->P, (const T *)bias, c->d, ns);
            if (tg__cuda_launch_ok(c->op)) return -1;
        }
        return 0;
    });
}

/* gw (col_c, K) = sum over samples of col (ocg, L) . im2col(im)^T, per group. */
static int pass_weight(conv_ctx *c, const char *im, const char *col, char *gw)
{
    return with_type(c->dt, [&](auto zero) {
        using T = decltype(zero);
        const tg__conv_geom &g = c->g;
        int64_t wsize = g.col_c * c->K;
        int done = tg__cudnn_conv(c->op, TG_CUDNN_WEIGHT, g, c->dt, c->device, c->st, (void *)im,
                                  (void *)col, gw);
        if (done) return done < 0 ? -1 : 0;
        fill_bias_kernel<T><<<tg__cuda_blocks(wsize, THREADS), THREADS, 0, c->st>>>(
            (T *)gw, (const T *)NULL, 1, 1, wsize);
        if (tg__cuda_launch_ok(c->op) || (g.n > 0 && scratch_ready(c))) return -1;
        for (int64_t n = 0; n < g.n; n++) {
            int64_t tot = g.im_c * (c->kvol) * c->L;
            im2col_kernel<T><<<tg__cuda_blocks(tot, THREADS), THREADS, 0, c->st>>>(
                (const T *)im + n * g.im_c * c->P, (T *)c->scratch, c->d, 1);
            if (tg__cuda_launch_ok(c->op)) return -1;
            gemm_rm p = { false,    true,          c->ocg,      c->K,          c->L,
                          g.groups, c->ocg * c->L, c->K * c->L, c->ocg * c->K, 1.0 };
            if (gemm(c->op, c->h, c->dt, p, (const T *)col + n * g.col_c * c->L, c->scratch, gw))
                return -1;
        }
        return 0;
    });
}

/* Operands on one CUDA device, contiguous (new references in out[]; NULL stays NULL). */
static int prepare(const char *op, tg_tensor *const *in, tg_tensor **out, int n)
{
    for (int i = 0; i < n; i++) out[i] = NULL;
    for (int i = 1; i < n; i++)
        if (in[i] && tg__cuda_same_device(op, in[0], in[i])) return -1;
    for (int i = 0; i < n; i++) {
        if (!in[i]) continue;
        out[i] = tg__cuda_contiguous(op, in[i], in[i]->dtype);
        if (!out[i]) {
            for (int k = 0; k < i; k++) tg_release(out[k]);
            return -1;
        }
    }
    return 0;
}

extern "C" tg_tensor *tg__cuda_convolution(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                           tg_int_list stride, tg_int_list padding,
                                           tg_int_list dilation, bool transposed,
                                           tg_int_list output_padding, int64_t groups)
{
    const char *op = "convolution";
    tg__conv_geom g;
    if (tg__conv_prepare(op, &g, input, weight, bias ? 1 : -1, bias ? bias->sizes : NULL,
                         bias ? bias->ndim : 0, stride, padding, dilation, transposed,
                         output_padding, groups) != 0)
        return NULL;
    if (bias && bias->dtype != input->dtype)
        return (tg_tensor *)tg__error(op, "Input type (%s) and bias type (%s) should be the same",
                                      tg__k_meta_name(input->dtype), tg__k_meta_name(bias->dtype));
    tg_tensor *src[3] = { input, weight, bias }, *c[3];
    if (prepare(op, src, c, 3) != 0) return NULL;
    tg_tensor *out = tg__empty(op, g.out_sizes, 2 + g.nsp, input->dtype, input->device);
    conv_ctx cx;
    int rc = out ? ctx_init(&cx, op, g, input) : -1;
    if (rc == 0 && g.n > 0) {
        const char *b = c[2] ? tg__k_data(c[2]) : NULL;
        rc = transposed ? pass_to_im(&cx, tg__k_data(c[0]), tg__k_data(c[1]), b, tg__k_data(out))
                        : pass_to_col(&cx, tg__k_data(c[0]), tg__k_data(c[1]), b, tg__k_data(out));
    }
    if (out) ctx_free(&cx);
    tg__k_release_all(c, 3);
    if (rc != 0) {
        tg_release(out);
        return NULL;
    }
    return out;
}

extern "C" tg_tensors3 tg__cuda_convolution_backward(tg_tensor *grad_output, tg_tensor *input,
                                                     tg_tensor *weight, tg_int_list bias_sizes,
                                                     tg_int_list stride, tg_int_list padding,
                                                     tg_int_list dilation, bool transposed,
                                                     tg_int_list output_padding, int64_t groups,
                                                     tg_bool_list output_mask)
{
    const char *op = "convolution_backward";
    tg_tensors3 r = { NULL, NULL, NULL };
    tg__conv_geom g;
    bool want[3];
    if (tg__conv_prepare_backward(op, &g, grad_output, input, weight, bias_sizes, stride, padding,
                                  dilation, transposed, output_padding, groups, output_mask,
                                  want) != 0)
        return r;
    tg_tensor *src[3] = { grad_output, input, weight }, *c[3];
    if (prepare(op, src, c, 3) != 0) return r;
    const char *go = tg__k_data(c[0]), *in = tg__k_data(c[1]), *w = tg__k_data(c[2]);
    conv_ctx cx;
    int rc = ctx_init(&cx, op, g, input);
    if (rc == 0 && want[0]) {
        r.r0 = tg__empty(op, input->sizes, input->ndim, input->dtype, input->device);
        rc = !r.r0         ? -1
             : g.n == 0    ? 0
             : !transposed ? pass_to_im(&cx, go, w, NULL, tg__k_data(r.r0))
                           : pass_to_col(&cx, go, w, NULL, tg__k_data(r.r0));
    }
    if (rc == 0 && want[1]) {
        r.r1 = tg__empty(op, weight->sizes, weight->ndim, weight->dtype, weight->device);
        rc = !r.r1 ? -1
                   : pass_weight(&cx, transposed ? go : in, transposed ? in : go, tg__k_data(r.r1));
    }
    if (rc == 0 && want[2]) {
        int64_t C = g.out_sizes[1], L = 1;
        for (int i = 0; i < g.nsp; i++) L *= g.out_sizes[2 + i];
        r.r2 = tg__empty(op, &C, 1, input->dtype, input->device);
        rc = r.r2 ? 0 : -1;
        if (rc == 0 && C > 0)
            rc = with_type(input->dtype, [&](auto zero) {
                using T = decltype(zero);
                bias_grad_kernel<T><<<(unsigned)C, THREADS, 0, cx.st>>>(
                    (const T *)go, (T *)tg__k_data(r.r2), g.n, C, L);
                return tg__cuda_launch_ok(op);
            });
    }
    ctx_free(&cx);
    tg__k_release_all(c, 3);
    if (rc != 0) {
        tg_release(r.r0);
        tg_release(r.r1);
        tg_release(r.r2);
        r = tg_tensors3{ NULL, NULL, NULL };
    }
    return r;
}
