/* Matrix products: mm, bmm, addmm, baddbmm, on OpenBLAS.
 *
 * Every product goes through gemm(): C (M, N) = alpha * A (M, K) @ B (K, N) + beta * C, with
 * each matrix given by a data pointer and (row, column) strides in elements.
 *  - float32/float64: cblas_sgemm/dgemm. An operand whose strides are those of a row-major
 *    matrix is passed as NoTrans, one with the strides of a transpose (column-major) as Trans,
 *    with its leading dimension; only other strides (e.g. both > 1) are copied to a contiguous
 *    buffer. A column-major C is computed as C^T = B^T A^T. beta = 0 is passed to BLAS as is, so
 *    C is never zero-filled first (and NaN/inf in an ignored input do not propagate).
 *  - float16/bfloat16: converted to float32 buffers, sgemm, converted back.
 *  - integral dtypes: gemm_ref, the plain reference loop (int64 accumulation, wrap-around).
 */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "linalg_checks.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/addmm.h"
#include "kernels/baddbmm.h"
#include "kernels/bmm.h"
#include "kernels/mm.h"

/* A matrix operand: rows x cols elements at p, strides in elements. */
typedef struct mat {
    char *p;
    int64_t rows, cols, rs, cs;
} mat;

/* ------------------------------------------------------------------ reference path */

/* C = alpha * A @ B + beta * C for any dtype and strides, accumulating in double (floats) or
 * int64 (integral dtypes, wrap-around). beta == 0 ignores C's old contents. */
static void gemm_ref(tg_dtype dt, int64_t K, double alpha, mat A, mat B, double beta, mat C)
{
    size_t e = tg_dtype_size(dt);
    bool integral = tg_dtype_is_integral(dt, true);
    for (int64_t i = 0; i < C.rows; i++) {
        for (int64_t j = 0; j < C.cols; j++) {
            char *c = C.p + (i * C.rs + j * C.cs) * (int64_t)e;
            if (integral) {
                uint64_t s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (uint64_t)tg__pw_load_i64(A.p + (i * A.rs + k * A.cs) * (int64_t)e, dt) *
                         (uint64_t)tg__pw_load_i64(B.p + (k * B.rs + j * B.cs) * (int64_t)e, dt);
                uint64_t r = (uint64_t)(int64_t)alpha * s;
                if (beta != 0) r += (uint64_t)(int64_t)beta * (uint64_t)tg__pw_load_i64(c, dt);
                tg__pw_store_i64(c, dt, (int64_t)r);
            } else {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += tg__pw_load_f64(A.p + (i * A.rs + k * A.cs) * (int64_t)e, dt) *
                         tg__pw_load_f64(B.p + (k * B.rs + j * B.cs) * (int64_t)e, dt);
                double r = alpha * s;
                if (beta != 0) r += beta * tg__pw_load_f64(c, dt);
                tg__pw_store_f64(c, dt, r);
            }
        }
    }
}

/* ------------------------------------------------------------------ BLAS path */

/* How BLAS can read a row-major-called operand: NoTrans with ld = row stride, Trans with
 * ld = column stride, or not at all (returns false). */
static bool blas_layout(const mat *m, CBLAS_TRANSPOSE *tr, int64_t *ld)
{
    int64_t r = m->rows, c = m->cols;
    if ((m->cs == 1 || c == 1) && (r == 1 || m->rs >= (c > 1 ? c : 1))) {
        *tr = CblasNoTrans;
        *ld = r == 1 ? (c > 1 ? c : 1) : m->rs;
        return *ld >= (c > 1 ? c : 1);
    }
    if ((m->rs == 1 || r == 1) && (c == 1 || m->cs >= (r > 1 ? r : 1))) {
        *tr = CblasTrans;
        *ld = c == 1 ? (r > 1 ? r : 1) : m->cs;
        return *ld >= (r > 1 ? r : 1);
    }
    return false;
}

/* Copies (and converts) m into a new contiguous row-major buffer of dtype `to`. */
static char *pack(const mat *m, tg_dtype from, tg_dtype to)
{
    size_t ef = tg_dtype_size(from), et = tg_dtype_size(to);
    size_t n = (size_t)(m->rows * m->cols);
    char *buf = malloc((n ? n : 1) * et);
    if (!buf) return NULL;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) {
            const char *s = m->p + (i * m->rs + j * m->cs) * (int64_t)ef;
            char *d = buf + (i * m->cols + j) * (int64_t)et;
            if (from == to) memcpy(d, s, ef);
            else if (from == TG_FLOAT16) *(float *)d = tg__half_to_float(*(const uint16_t *)s);
            else if (from == TG_BFLOAT16) *(float *)d = tg__bf16_to_float(*(const uint16_t *)s);
            else tg__pw_convert(d, to, s, from);
        }
    return buf;
}

static void unpack(const mat *m, const char *buf, tg_dtype from, tg_dtype to)
{
    size_t ef = tg_dtype_size(from), et = tg_dtype_size(to);
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) {
            const char *s = buf + (i * m->cols + j) * (int64_t)ef;
            char *d = m->p + (i * m->rs + j * m->cs) * (int64_t)et;
            if (from == to) memcpy(d, s, ef);
            else if (to == TG_FLOAT16) *(uint16_t *)d = tg__float_to_half(*(const float *)s);
            else if (to == TG_BFLOAT16) *(uint16_t *)d = tg__float_to_bf16(*(const float *)s);
            else tg__pw_convert(d, to, s, from);
        }
}

static mat contiguous_mat(char *p, int64_t rows, int64_t cols)
{
    return (mat){ p, rows, cols, cols, 1 };
}

/* float32/float64 gemm through cblas; A, B, C any strides. Returns 0 or -1 (out of memory). */
static int gemm_blas(tg_dtype dt, int64_t K, double alpha, mat A, mat B, double beta, mat C)
{
    CBLAS_TRANSPOSE tc = CblasNoTrans;
    int64_t ldc = 1;
    if (!blas_layout(&C, &tc, &ldc)) { /* C unusable: compute into a buffer */
        char *buf = pack(&C, dt, dt);
        if (!buf) return -1;
        mat T = contiguous_mat(buf, C.rows, C.cols);
        int rc = gemm_blas(dt, K, alpha, A, B, beta, T);
        if (rc == 0) unpack(&C, buf, dt, dt);
        free(buf);
        return rc;
    }
    if (tc == CblasTrans) { /* column-major C: C^T = B^T A^T */
        mat At = { A.p, A.cols, A.rows, A.cs, A.rs }, Bt = { B.p, B.cols, B.rows, B.cs, B.rs };
        mat Ct = { C.p, C.cols, C.rows, C.cs, C.rs };
        return gemm_blas(dt, K, alpha, Bt, At, beta, Ct);
    }
    char *abuf = NULL, *bbuf = NULL;
    CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
    int64_t lda = 1, ldb = 1;
    if (!blas_layout(&A, &ta, &lda)) {
        if (!(abuf = pack(&A, dt, dt))) return -1;
        A = contiguous_mat(abuf, A.rows, A.cols);
        blas_layout(&A, &ta, &lda);
    }
    if (!blas_layout(&B, &tb, &ldb)) {
        if (!(bbuf = pack(&B, dt, dt))) {
            free(abuf);
            return -1;
        }
        B = contiguous_mat(bbuf, B.rows, B.cols);
        blas_layout(&B, &tb, &ldb);
    }
    if (dt == TG_FLOAT32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)C.rows, (int)C.cols, (int)K, (float)alpha,
                    (const float *)A.p, (int)lda, (const float *)B.p, (int)ldb, (float)beta,
                    (float *)C.p, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)C.rows, (int)C.cols, (int)K, alpha,
                    (const double *)A.p, (int)lda, (const double *)B.p, (int)ldb, beta,
                    (double *)C.p, (int)ldc);
    free(abuf);
    free(bbuf);
    return 0;
}

/* C (M, N) = alpha * A (M, K) @ B (K, N) + beta * C, any dtype and strides. */
static int gemm(const char *op, tg_dtype dt, int64_t K, double alpha, mat A, mat B, double beta,
                mat C)
{
    if (C.rows == 0 || C.cols == 0) return 0;
    if (K == 0 || tg_dtype_is_integral(dt, true)) { /* also the empty-K case for floats */
        gemm_ref(dt, K, alpha, A, B, beta, C);
        return 0;
    }
    if (dt == TG_FLOAT32 || dt == TG_FLOAT64) {
        if (gemm_blas(dt, K, alpha, A, B, beta, C) == 0) return 0;
        return tg__fail(op, "out of memory");
    }
    /* float16 / bfloat16: through float32 */
    char *a = pack(&A, dt, TG_FLOAT32), *b = pack(&B, dt, TG_FLOAT32);
    char *c =
        beta != 0 ? pack(&C, dt, TG_FLOAT32) : malloc((size_t)(C.rows * C.cols) * sizeof(float));
    int rc = -1;
    if (a && b && c) {
        rc = gemm_blas(TG_FLOAT32, K, alpha, contiguous_mat(a, A.rows, A.cols),
                       contiguous_mat(b, B.rows, B.cols), beta, contiguous_mat(c, C.rows, C.cols));
        if (rc == 0) unpack(&C, c, TG_FLOAT32, dt);
    }
    free(a);
    free(b);
    free(c);
    if (rc != 0) tg__error(op, "out of memory");
    return rc;
}

static mat mat_of(const tg_tensor *t, int64_t batch_dims)
{
    return (mat){ tg__k_data(t), t->sizes[batch_dims], t->sizes[batch_dims + 1],
                  t->strides[batch_dims], t->strides[batch_dims + 1] };
}

static int check_dtypes(const char *op, const tg_tensor *a, const tg_tensor *b)
{
    return tg__matmul_check_dtypes(op, a, b, false, "addmm_impl_cpu_");
}

/* ------------------------------------------------------------------ kernels */

/* self is (n, m), mat2 is (m, p), out is (n, p). */
tg_tensor *tg__cpu_mm_out(tg_tensor *self, tg_tensor *mat2, tg_tensor *out)
{
    if (tg__mm_check_shapes(self, mat2) != 0) return NULL;
    if (check_dtypes("mm", self, mat2) != 0) return NULL;
    int64_t shape[2] = { self->sizes[0], mat2->sizes[1] };
    tg_tensor *res = tg__k_prepare_out("mm", out, shape, 2, self->dtype);
    if (!res) return NULL;
    int rc = gemm("mm", self->dtype, self->sizes[1], 1.0, mat_of(self, 0), mat_of(mat2, 0), 0.0,
                  mat_of(res, 0));
    return tg__k_result_out(rc == 0, res, out != NULL);
}

/* One gemm per batch of a (b, n, m) @ (b, m, p) product into c (b, n, p): bmm and baddbmm. A
 * failed gemm sets rc. */
typedef struct bgemm_job {
    const char *op;
    tg_dtype dt;
    tg_tensor *a, *b, *c;
    int64_t K;
    double alpha, beta;
    int rc;
} bgemm_job;

static void bgemm_task(int64_t lo, int64_t hi, void *ctx)
{
    bgemm_job *j = ctx;
    size_t e = tg_dtype_size(j->dt);
    mat A = mat_of(j->a, 1), B = mat_of(j->b, 1), C = mat_of(j->c, 1);
    for (int64_t i = lo; i < hi; i++) {
        mat Ai = A, Bi = B, Ci = C;
        Ai.p += i * j->a->strides[0] * (int64_t)e;
        Bi.p += i * j->b->strides[0] * (int64_t)e;
        Ci.p += i * j->c->strides[0] * (int64_t)e;
        if (gemm(j->op, j->dt, j->K, j->alpha, Ai, Bi, j->beta, Ci) != 0) j->rc = -1;
    }
}

/* Runs j's shape[0] batches: in parallel when the matrices are too small for BLAS's own
 * threading to pay off. Returns j->rc. */
static int run_batches(bgemm_job *j, const int64_t shape[3])
{
    int64_t work = shape[1] * shape[2] * (j->K > 0 ? j->K : 1);
    bool small = work <= 128 * 128 * 128;
    tg__parallel_for(shape[0], small ? 1 : shape[0] + 1, bgemm_task, j);
    return j->rc;
}

/* self is (b, n, m), mat2 is (b, m, p), out is (b, n, p). One gemm per batch (OpenBLAS 0.3.21
 * has no cblas_?gemm_batch); batches run in parallel when the matrices are too small for
 * BLAS's own threading to pay off. */
tg_tensor *tg__cpu_bmm_out(tg_tensor *self, tg_tensor *mat2, tg_tensor *out)
{
    if (tg__bmm_check_shapes(self, mat2) != 0) return NULL;
    if (check_dtypes("bmm", self, mat2) != 0) return NULL;
    int64_t shape[3] = { self->sizes[0], self->sizes[1], mat2->sizes[2] };
    tg_tensor *res = tg__k_prepare_out("bmm", out, shape, 3, self->dtype);
    if (!res) return NULL;
    bgemm_job j = { "bmm", self->dtype, self, mat2, res, self->sizes[2], 1.0, 0.0, 0 };
    (void)run_batches(&j, shape); /* bmm keeps its result when a gemm fails (error recorded) */
    if (out) tg__bump_version(res);
    return res;
}

/* Writes self (broadcast to C's shape) into C, the beta term's starting value. */
static void copy_broadcast(mat C, const tg_tensor *self, size_t e)
{
    int64_t rs = 0, cs = 0;
    if (self->ndim == 2) {
        rs = self->sizes[0] == 1 ? 0 : self->strides[0];
        cs = self->sizes[1] == 1 ? 0 : self->strides[1];
    } else if (self->ndim == 1) {
        cs = self->sizes[0] == 1 ? 0 : self->strides[0];
    }
    const char *s = tg__k_data(self);
    if (cs == 1 && C.cs == 1) { /* rows of self contiguous (linear's bias): row copies */
        for (int64_t i = 0; i < C.rows; i++)
            memcpy(C.p + i * C.rs * (int64_t)e, s + i * rs * (int64_t)e, (size_t)C.cols * e);
        return;
    }
    for (int64_t i = 0; i < C.rows; i++)
        for (int64_t j = 0; j < C.cols; j++)
            memcpy(C.p + (i * C.rs + j * C.cs) * (int64_t)e, s + (i * rs + j * cs) * (int64_t)e, e);
}

/* self broadcasts to (n, p), mat1 is (n, m), mat2 is (m, p), out is (n, p):
 * out = beta * self + alpha * mat1 @ mat2. out == self is the in-place addmm_. */
tg_tensor *tg__cpu_addmm_out(tg_tensor *self, tg_tensor *mat1, tg_tensor *mat2, double beta,
                             double alpha, tg_tensor *out)
{
    if (tg__addmm_check_mats(mat1, mat2) != 0) return NULL;
    if (check_dtypes("addmm", mat1, mat2) != 0 || check_dtypes("addmm", self, mat1) != 0)
        return NULL;
    int64_t shape[2] = { mat1->sizes[0], mat2->sizes[1] };
    bool inplace = out == self;
    if (tg__addmm_check_self(self, mat1, mat2, shape, inplace) != 0) return NULL;
    tg_tensor *res = tg__k_prepare_out("addmm", out, shape, 2, mat1->dtype);
    if (!res) return NULL;
    mat C = mat_of(res, 0);
    if (!inplace && beta != 0) copy_broadcast(C, self, tg_dtype_size(self->dtype));
    int rc = gemm("addmm", mat1->dtype, mat1->sizes[1], alpha, mat_of(mat1, 0), mat_of(mat2, 0),
                  beta, C);
    return tg__k_result_out(rc == 0, res, out != NULL);
}

/* self broadcasts to (b, n, p), batch1 is (b, n, m), batch2 is (b, m, p), out is (b, n, p):
 * out = beta * self + alpha * batch1 @ batch2, one gemm per batch as bmm (out == self is the
 * in-place baddbmm_). self is first copied into out (broadcast) unless beta == 0. */
tg_tensor *tg__cpu_baddbmm_out(tg_tensor *self, tg_tensor *batch1, tg_tensor *batch2, double beta,
                               double alpha, tg_tensor *out)
{
    int64_t shape[3];
    bool inplace = out == self;
    if (tg__baddbmm_check(self, batch1, batch2, inplace, shape) != 0) return NULL;
    if (check_dtypes("baddbmm", batch1, batch2) != 0 || check_dtypes("baddbmm", self, batch1) != 0)
        return NULL;
    tg_tensor *res = tg__k_prepare_out("baddbmm", out, shape, 3, batch1->dtype);
    if (!res) return NULL;
    if (!inplace && beta != 0 && tg__copy_into("baddbmm", res, self) != 0) {
        tg_release(res);
        return NULL;
    }
    bgemm_job j = {
        "baddbmm", batch1->dtype, batch1, batch2, res, batch1->sizes[2], alpha, beta, 0
    };
    if (run_batches(&j, shape) != 0) {
        if (!tg__has_error()) tg__error("baddbmm", "out of memory");
        tg_release(res);
        return NULL;
    }
    if (out) tg__bump_version(res);
    return res;
}
