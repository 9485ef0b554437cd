/* Matrix products on CUDA: mm, bmm, addmm, baddbmm, on cuBLAS. Semantics, shape checks and messages
 * are the CPU kernels' (kernels/cpu/linalg.c); integral and bool dtypes are rejected as
 * PyTorch's CUDA kernels do ("\"addmm_cuda\" not implemented for 'Long'").
 *
 * Every product is one call of gemm(): C (M, N) = alpha * A (M, K) @ B (K, N) + beta * C for
 * `batch` matrices `bs*` elements apart (bmm uses cublasGemmStridedBatchedEx, mm/addmm
 * cublasGemmEx). cuBLAS is column-major, our matrices are row-major: a row-major C is the
 * column-major C^T, so we ask cuBLAS for C^T = B^T A^T. An operand whose strides are those of a
 * row-major matrix is passed with CUBLAS_OP_N, one laid out as a transpose (a t() view) with
 * CUBLAS_OP_T and its column stride as leading dimension: transposes are flags, never copies.
 * Only operands with other strides (both > 1, e.g. a slice of every other column) are copied
 * to a contiguous temporary; a column-major C is handled as C^T = B^T A^T with the roles
 * swapped.
 *
 * dtypes: float32 (cublasGemmEx, CUDA_R_32F, CUBLAS_COMPUTE_32F: full float32, TF32 off),
 * float64 (CUBLAS_COMPUTE_64F), float16/bfloat16 (CUDA_R_16F / CUDA_R_16BF storage, float32
 * accumulation and float alpha/beta). TF32 tensor cores for float32 are opt-in: set the
 * environment variable TG_CUDA_ALLOW_TF32=1 before the first CUDA matmul (PyTorch's
 * torch.backends.cuda.matmul.allow_tf32); results then carry ~1e-3 relative error.
 *
 * The runtime owns one cuBLAS handle per device (tg__cublas_handle, math mode
 * CUBLAS_DEFAULT_MATH), bound to the device's stream; TF32 is chosen per call through the
 * compute type. */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/addmm.h"
#include "kernels/baddbmm.h"
#include "kernels/bmm.h"
#include "kernels/mm.h"
#include "linalg_checks.h" /* the CPU kernels' shape and dtype checks */

#include <cublas_v2.h>
#include <limits.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ cuBLAS */

static int cublas_check(const char *op, cublasStatus_t s) { return tg__cublas_check(op, (int)s); }

static bool tf32_allowed(void)
{
    const char *e = getenv("TG_CUDA_ALLOW_TF32");
    return e && e[0] == '1';
}

/* ------------------------------------------------------------------ layouts */

/* A matrix operand of one batch: rows x cols at p, strides in elements. */
struct mat {
    char *p;
    int64_t rows, cols, rs, cs;
};

/* How cuBLAS can read a row-major-called operand: trans = false with ld = row stride, trans =
 * true (stored as its transpose) with ld = column stride, or not at all. As the CPU's. */
static bool blas_layout(const mat &m, bool *trans, int64_t *ld)
{
    int64_t r = m.rows, c = m.cols;
    if ((m.cs == 1 || c == 1) && (r == 1 || m.rs >= (c > 1 ? c : 1))) {
        *trans = false;
        *ld = r == 1 ? (c > 1 ? c : 1) : m.rs;
        return *ld >= (c > 1 ? c : 1);
    }
    if ((m.rs == 1 || r == 1) && (c == 1 || m.cs >= (r > 1 ? r : 1))) {
        *trans = true;
        *ld = c == 1 ? (r > 1 ? r : 1) : m.cs;
        return *ld >= (r > 1 ? r : 1);
    }
    return false;
}

static mat mat_of(const tg_tensor *t, int64_t batch_dims)
{
    mat m = { tg__k_data(t), t->sizes[batch_dims], t->sizes[batch_dims + 1], t->strides[batch_dims],
              t->strides[batch_dims + 1] };
    return m;
}

/* One cuBLAS problem: C = alpha A B + beta C for `batch` matrices, batch strides in elements. */
struct gemm_args {
    tg_dtype dt;
    int64_t batch, K;
    mat A, B, C;
    int64_t bsa, bsb, bsc;
    double alpha, beta;
};

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Calls cuBLAS for operands already in usable layouts with a row-major C. */
static int gemm_call(const char *op, cublasHandle_t h, const gemm_args &g)
{
    bool ta, tb, tc;
    int64_t lda, ldb, ldc;
    blas_layout(g.A, &ta, &lda);
    blas_layout(g.B, &tb, &ldb);
    blas_layout(g.C, &tc, &ldc);
    int64_t M = g.C.rows, N = g.C.cols, K = g.K;
    if (!fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(lda) || !fits_int(ldb) ||
        !fits_int(ldc) || !fits_int(g.batch))
        return tg__fail(op, "matrix dimensions exceed cuBLAS's 32-bit limits");
    cudaDataType_t ty;
    cublasComputeType_t ct;
    float af = (float)g.alpha, bf = (float)g.beta;
    const void *alpha = &af, *beta = &bf;
    switch (g.dt) {
    case TG_FLOAT64:
        ty = CUDA_R_64F;
        ct = CUBLAS_COMPUTE_64F;
        alpha = &g.alpha;
        beta = &g.beta;
        break;
    case TG_FLOAT16:
        ty = CUDA_R_16F;
        ct = CUBLAS_COMPUTE_32F;
        break;
    case TG_BFLOAT16:
        ty = CUDA_R_16BF;
        ct = CUBLAS_COMPUTE_32F;
        break;
    default:
        ty = CUDA_R_32F;
        ct = tf32_allowed() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        break;
    }
    /* Column-major view: C^T (N x M) = op(B)^T (N x K) * op(A)^T (K x M). */
    cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t s;
    if (g.batch == 1) {
        s = cublasGemmEx(h, opb, opa, (int)N, (int)M, (int)K, alpha, g.B.p, ty, (int)ldb, g.A.p, ty,
                         (int)lda, beta, g.C.p, ty, (int)ldc, ct, CUBLAS_GEMM_DEFAULT);
        return cublas_check(op, s);
    }
    s = cublasGemmStridedBatchedEx(h, opb, opa, (int)N, (int)M, (int)K, alpha, g.B.p, ty, (int)ldb,
                                   (long long)g.bsb, g.A.p, ty, (int)lda, (long long)g.bsa, beta,
                                   g.C.p, ty, (int)ldc, (long long)g.bsc, (int)g.batch, ct,
                                   CUBLAS_GEMM_DEFAULT);
    return cublas_check(op, s);
}

/* C = beta * C for K == 0 (beta == 0 writes zeros, ignoring C's old contents). */
template <typename T>
__global__ void scale_kernel(T *c, int64_t batch, int64_t rows, int64_t cols, int64_t bs,
                             int64_t rs, int64_t cs, double beta)
{
    int64_t n = batch * rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = i / (rows * cols), r = (i / cols) % rows, k = i % cols;
        T *p = c + b * bs + r * rs + k * cs;
        *p = tg__cuda_narrow<T>(beta == 0 ? 0.0 : beta * (double)tg__cuda_widen(*p));
    }
}

/* When t's matrices are not in a layout cuBLAS can read, *tmp becomes a contiguous copy and
 * *m, *bs point into it (else *tmp stays NULL). 0, or -1 + error. */
static int fix_operand(const char *op, tg_tensor *t, int64_t batch_dims, mat *m, int64_t *bs,
                       cudaStream_t st, tg_tensor **tmp)
{
    bool tr;
    int64_t ld;
    *tmp = NULL;
    if (blas_layout(*m, &tr, &ld)) return 0;
    *tmp = tg__cuda_contiguous(op, t, t->dtype);
    if (!*tmp) return -1;
    *m = mat_of(*tmp, batch_dims);
    if (batch_dims) *bs = (*tmp)->strides[0];
    return 0;
}

/* C (res, batch_dims 0 or 1) = alpha * a @ b + beta * C. a, b, res on one device. */
static int gemm(const char *op, tg_tensor *a, tg_tensor *b, tg_tensor *res, int64_t batch_dims,
                double alpha, double beta, cudaStream_t st)
{
    gemm_args g;
    g.dt = res->dtype;
    g.batch = batch_dims ? res->sizes[0] : 1;
    g.K = a->sizes[batch_dims + 1];
    g.A = mat_of(a, batch_dims);
    g.B = mat_of(b, batch_dims);
    g.C = mat_of(res, batch_dims);
    g.bsa = batch_dims ? a->strides[0] : 0;
    g.bsb = batch_dims ? b->strides[0] : 0;
    g.bsc = batch_dims ? res->strides[0] : 0;
    g.alpha = alpha;
    g.beta = beta;
    if (g.batch == 0 || g.C.rows == 0 || g.C.cols == 0) return 0;
    if (g.K == 0) {
        int rc = 0;
        tg__cuda_dispatch_float(g.dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            int64_t n = g.batch * g.C.rows * g.C.cols;
            scale_kernel<T><<<tg__cuda_blocks(n, 256), 256, 0, st>>>(
                (T *)g.C.p, g.batch, g.C.rows, g.C.cols, g.bsc, g.C.rs, g.C.cs, beta);
            rc = tg__cuda_launch_ok(op);
        });
        return rc;
    }
    cublasHandle_t h = tg__cublas_handle(op, res->device.index); /* bound to the stream */
    if (!h) return -1;
    /* C: row-major, column-major (swap roles: C^T = B^T A^T), or a temporary. */
    bool tc;
    int64_t ldc;
    tg_tensor *ctmp = NULL;
    if (!blas_layout(g.C, &tc, &ldc) || (batch_dims && g.bsc == 0 && g.batch > 1)) {
        ctmp = tg__empty(op, res->sizes, res->ndim, res->dtype, res->device);
        if (!ctmp || (beta != 0 && tg__cuda_copy_broadcast(op, ctmp, res) != 0)) {
            tg_release(ctmp);
            return -1;
        }
        g.C = mat_of(ctmp, batch_dims);
        g.bsc = batch_dims ? ctmp->strides[0] : 0;
        tc = false;
    }
    tg_tensor *atmp = NULL, *btmp = NULL;
    int rc = fix_operand(op, a, batch_dims, &g.A, &g.bsa, st, &atmp);
    if (rc == 0) rc = fix_operand(op, b, batch_dims, &g.B, &g.bsb, st, &btmp);
    if (rc == 0 && tc) { /* column-major C: C^T = B^T A^T, all row-major-called */
        mat At = { g.A.p, g.A.cols, g.A.rows, g.A.cs, g.A.rs },
            Bt = { g.B.p, g.B.cols, g.B.rows, g.B.cs, g.B.rs };
        mat Ct = { g.C.p, g.C.cols, g.C.rows, g.C.cs, g.C.rs };
        int64_t bsa = g.bsa;
        g.A = Bt;
        g.B = At;
        g.C = Ct;
        g.bsa = g.bsb;
        g.bsb = bsa;
    }
    if (rc == 0) rc = gemm_call(op, h, g);
    if (rc == 0 && ctmp) rc = tg__cuda_copy_broadcast(op, res, ctmp);
    tg_release(atmp);
    tg_release(btmp);
    tg_release(ctmp);
    return rc;
}

/* ------------------------------------------------------------------ checks */

static int check_dtypes(const char *op, const char *cuda_name, const tg_tensor *a,
                        const tg_tensor *b)
{
    return tg__matmul_check_dtypes(op, a, b, true, cuda_name);
}

/* ------------------------------------------------------------------ kernels */

/* The device and dtype checks of a product a @ b (mm, bmm) or self + a @ b (addmm, baddbmm;
 * self NULL for the former): one device, one dtype. `impl` names the cuBLAS kernel in PyTorch's
 * dtype message. 0, or -1 with the error recorded. */
static int check_operands(const char *op, const char *impl, const tg_tensor *self,
                          const tg_tensor *a, const tg_tensor *b, const tg_tensor *out)
{
    if (tg__cuda_same_device(op, a, b) || tg__cuda_same_device(op, a, self) ||
        tg__cuda_same_device(op, a, out))
        return -1;
    if (check_dtypes(op, impl, a, b) != 0 || (self && check_dtypes(op, impl, self, a) != 0))
        return -1;
    return 0;
}

/* out (shape, ndim 2 or 3: one batch dim) = beta * self + alpha * a @ b once the operands are
 * checked; self NULL (mm, bmm) or out itself (in place) adds nothing. */
static tg_tensor *product_out(const char *op, tg_tensor *self, tg_tensor *a, tg_tensor *b,
                              tg_tensor *out, const int64_t *shape, int64_t ndim, double beta,
                              double alpha)
{
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, a->device, &rc);
    if (rc) return NULL;
    tg_tensor *res = tg__cuda_prepare_out(op, out, shape, ndim, a->dtype, a->device);
    if (!res) return NULL;
    if (self && self != out && beta != 0) rc = tg__cuda_copy_broadcast(op, res, self);
    if (rc == 0) rc = gemm(op, a, b, res, ndim - 2, alpha, beta, st);
    return tg__k_result_out(rc == 0, res, out != NULL);
}

/* mm and bmm once their shapes are checked: out (shape, ndim 2 or 3: one batch dim) =
 * self @ mat2. `impl` names the cuBLAS kernel in PyTorch's dtype message. */
static tg_tensor *matmul_out(const char *op, const char *impl, tg_tensor *self, tg_tensor *mat2,
                             tg_tensor *out, const int64_t *shape, int64_t ndim)
{
    if (check_operands(op, impl, NULL, self, mat2, out) != 0) return NULL;
    return product_out(op, NULL, self, mat2, out, shape, ndim, 0.0, 1.0);
}

/* self is (n, m), mat2 is (m, p), out is (n, p). */
extern "C" tg_tensor *tg__cuda_mm_out(tg_tensor *self, tg_tensor *mat2, tg_tensor *out)
{
    if (tg__mm_check_shapes(self, mat2) != 0) return NULL;
    int64_t shape[2] = { self->sizes[0], mat2->sizes[1] };
    return matmul_out("mm", "addmm_cuda", self, mat2, out, shape, 2);
}

/* self is (b, n, m), mat2 is (b, m, p), out is (b, n, p): one strided-batched call. */
extern "C" tg_tensor *tg__cuda_bmm_out(tg_tensor *self, tg_tensor *mat2, tg_tensor *out)
{
    if (tg__bmm_check_shapes(self, mat2) != 0) return NULL;
    int64_t shape[3] = { self->sizes[0], self->sizes[1], mat2->sizes[2] };
    return matmul_out("bmm", "bmm_cuda", self, mat2, out, shape, 3);
}

/* self broadcasts to (n, p), mat1 is (n, m), mat2 is (m, p), out is (n, p):
 * out = beta * self + alpha * mat1 @ mat2. out == self is the in-place addmm_. */
extern "C" tg_tensor *tg__cuda_addmm_out(tg_tensor *self, tg_tensor *mat1, tg_tensor *mat2,
                                         double beta, double alpha, tg_tensor *out)
{
    const char *op = "addmm";
    if (tg__addmm_check_mats(mat1, mat2) != 0) return NULL;
    if (check_operands(op, "addmm_cuda", self, mat1, mat2, out) != 0) return NULL;
    int64_t shape[2] = { mat1->sizes[0], mat2->sizes[1] };
    if (tg__addmm_check_self(self, mat1, mat2, shape, out == self) != 0) return NULL;
    return product_out(op, self, mat1, mat2, out, shape, 2, beta, alpha);
}

/* self broadcasts to (b, n, p), batch1 is (b, n, m), batch2 is (b, m, p), out is (b, n, p):
 * out = beta * self + alpha * batch1 @ batch2 in one strided-batched call. out == self is the
 * in-place baddbmm_. */
extern "C" tg_tensor *tg__cuda_baddbmm_out(tg_tensor *self, tg_tensor *batch1, tg_tensor *batch2,
                                           double beta, double alpha, tg_tensor *out)
{
    const char *op = "baddbmm";
    int64_t shape[3];
    if (tg__baddbmm_check(self, batch1, batch2, out == self, shape) != 0) return NULL;
    if (check_operands(op, "baddbmm_cuda", self, batch1, batch2, out) != 0) return NULL;
    return product_out(op, self, batch1, batch2, out, shape, 3, beta, alpha);
}
