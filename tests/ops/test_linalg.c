/* mm, bmm, addmm (and matmul's dispatch rules) against reference loops written here in
 * float64, and matmul against PyTorch (tests/fixtures/reduce_linalg_fixtures.h).
 *
 * Metric for float products: max |got - ref| / max |ref| over the result (a normwise error, as
 * a gemm's rounding is relative to the size of the terms): float64 <= 1e-12, float32 <= 1e-5
 * (K <= 300 products of values in [-1, 1] accumulated in float32), float16/bfloat16 <= 1e-2
 * (one rounding of the result to 11 / 8 bits after a float32 product). Integer products exact. */
#include "kt_util.h"
#include "../fixtures/reduce_linalg_fixtures.h"
#include "tg_cover.h"

TG_COVERS("mm", "mm.out", "bmm", "bmm.out", "addmm", "addmm_", "addmm.out", "matmul", "matmul.out");

/* ref (n, p) = a (n, m) @ b (m, p), row-major float64 arrays. */
static void ref_mm(const double *a, const double *b, double *c, int64_t n, int64_t m, int64_t p)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < p; j++) {
            double s = 0;
            for (int64_t k = 0; k < m; k++) s += a[i * m + k] * b[k * p + j];
            c[i * p + j] = s;
        }
}

static void assert_normwise(const tg_tensor *t, const double *ref, int64_t n, double bound,
                            const char *what)
{
    cr_assert_eq(tg_tensor_numel(t), n, "%s: numel", what);
    double *got = kt_values(t), err = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        err = fmax(err, fabs(got[i] - ref[i]));
        mag = fmax(mag, fabs(ref[i]));
    }
    cr_assert(err <= bound * (mag > 0 ? mag : 1), "%s: normwise error %g > %g", what,
              err / (mag > 0 ? mag : 1), bound);
    free(got);
}

static double bound_for(tg_dtype dt)
{
    switch (dt) {
    case TG_FLOAT64: return 1e-12;
    case TG_FLOAT32: return 1e-5;
    case TG_FLOAT16:
    case TG_BFLOAT16: return 1e-2;
    default: return 0;
    }
}

/* Random operands: integers in [-4, 4] for integral dtypes, [-1, 1) otherwise. */
static double *rand_vals(int64_t n, uint64_t seed, tg_dtype dt)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    kt_fill_random(v, n, seed, -1, 1);
    for (int64_t i = 0; i < n; i++) {
        if (tg_dtype_is_integral(dt, false)) v[i] = floor(v[i] * 4.5 + 0.5);
        else if (dt == TG_FLOAT16 || dt == TG_BFLOAT16)
            v[i] = round(v[i] * 64) / 64; /* exact in both */
    }
    return v;
}

/* Layouts of an operand: 0 contiguous, 1 a transpose (t of a contiguous (cols, rows)),
 * 2 every other row and column of a bigger matrix (strides no BLAS accepts). */
static tg_tensor *make_operand(const double *v, int64_t rows, int64_t cols, tg_dtype dt, int layout)
{
    if (layout == 0) return kt_tensor(v, (int64_t[]){ rows, cols }, 2, dt);
    if (layout == 1) {
        double *w = malloc(sizeof(double) * (size_t)(rows * cols));
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) w[j * rows + i] = v[i * cols + j];
        tg_tensor *base = kt_tensor(w, (int64_t[]){ cols, rows }, 2, dt);
        tg_tensor *t = tg_t(base);
        tg_release(base);
        free(w);
        return t;
    }
    double *w = calloc((size_t)(4 * rows * cols), sizeof(double));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) w[(2 * i) * (2 * cols) + 2 * j] = v[i * cols + j];
    tg_tensor *base = kt_tensor(w, (int64_t[]){ 2 * rows, 2 * cols }, 2, dt);
    tg_tensor *a = tg_slice(base, .dim = 0, .step = 2);
    tg_tensor *b = tg_slice(a, .dim = 1, .step = 2);
    kt_release_all(a, base);
    free(w);
    return b;
}

Test(linalg, mm_dtypes_and_layouts)
{
    kt_live live = kt_live_now();
    tg_dtype dts[] = {
        TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64, TG_INT32, TG_UINT8
    };
    const int64_t n = 37, m = 53, p = 29;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        tg_dtype dt = dts[d];
        double *a = rand_vals(n * m, 1 + d, dt), *b = rand_vals(m * p, 100 + d, dt),
               *c = malloc(sizeof(double) * n * p);
        if (dt == TG_UINT8)
            for (int64_t i = 0; i < n * m; i++) {
                a[i] = fabs(a[i]);
            }
        if (dt == TG_UINT8)
            for (int64_t i = 0; i < m * p; i++) {
                b[i] = fabs(b[i]);
            }
        ref_mm(a, b, c, n, m, p);
        if (dt == TG_UINT8)
            for (int64_t i = 0; i < n * p; i++) c[i] = fmod(c[i], 256);
        for (int la = 0; la < 3; la++)
            for (int lb = 0; lb < 3; lb++) {
                tg_tensor *A = make_operand(a, n, m, dt, la), *B = make_operand(b, m, p, dt, lb);
                tg_tensor *C = tg_mm(A, B);
                cr_assert(C, "mm %s: %s", tg_dtype_name(dt), tg_last_error());
                cr_assert_eq(tg_tensor_dtype(C), dt);
                kt_assert_shape(C, (int64_t[]){ n, p }, 2);
                char what[64];
                snprintf(what, sizeof what, "mm %s layouts %d,%d", tg_dtype_name(dt), la, lb);
                if (tg_dtype_is_integral(dt, false)) kt_assert_close(C, c, n * p, 0, 0, what);
                else assert_normwise(C, c, n * p, bound_for(dt), what);
                /* out= in a transposed (column-major) and in a strided output */
                for (int lo = 1; lo < 3; lo++) {
                    tg_tensor *O = make_operand(c, n, p, dt, lo);
                    tg_tensor *R = tg_mm_out(A, B, O);
                    cr_assert_eq(R, O, "mm out= returns out");
                    if (tg_dtype_is_integral(dt, false)) kt_assert_close(O, c, n * p, 0, 0, what);
                    else assert_normwise(O, c, n * p, bound_for(dt), what);
                    kt_release_all(R, O);
                }
                kt_release_all(A, B, C);
            }
        free(a);
        free(b);
        free(c);
    }
    kt_assert_no_leak(live);
}

Test(linalg, mm_empty_and_errors)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *a = kt_tensor(NULL, (int64_t[]){ 0, 3 }, 2, TG_FLOAT32);
    tg_tensor *b = kt_tensor((double[]){ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
                             (int64_t[]){ 3, 4 }, 2, TG_FLOAT32);
    tg_tensor *c = tg_mm(a, b);
    kt_assert_shape(c, (int64_t[]){ 0, 4 }, 2);
    tg_tensor *k0a = kt_tensor(NULL, (int64_t[]){ 2, 0 }, 2, TG_FLOAT32);
    tg_tensor *k0b = kt_tensor(NULL, (int64_t[]){ 0, 3 }, 2, TG_FLOAT32);
    tg_tensor *z = tg_mm(k0a, k0b);
    kt_assert_close(z, (double[]){ 0, 0, 0, 0, 0, 0 }, 6, 0, 0, "K = 0 gives zeros");

    tg_tensor *v = kt_tensor((double[]){ 1, 2, 3 }, (int64_t[]){ 3 }, 1, TG_FLOAT32);
    kt_expect_error(tg_mm(v, b), "self must be a matrix");
    kt_expect_error(tg_mm(b, v), "mat2 must be a matrix");
    tg_tensor *x23 = kt_tensor((double[]){ 1, 2, 3, 4, 5, 6 }, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *y45 = kt_tensor(NULL, (int64_t[]){ 4, 5 }, 2, TG_FLOAT32);
    kt_expect_error(tg_mm(x23, y45), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    tg_tensor *d34 = kt_tensor(NULL, (int64_t[]){ 3, 4 }, 2, TG_FLOAT64);
    kt_expect_error(tg_mm(x23, d34), "expected scalar type Float but found Double");
    tg_tensor *o = kt_tensor(NULL, (int64_t[]){ 2, 4 }, 2, TG_FLOAT64);
    kt_expect_error(tg_mm_out(x23, b, o),
                    "Expected out tensor to have dtype float, but got double instead");
    tg_tensor *bad = kt_tensor(NULL, (int64_t[]){ 3, 3 }, 2, TG_FLOAT32);
    cr_assert_null(tg_mm_out(x23, b, bad));
    tg_clear_error();
    kt_release_all(a, b, c, k0a, k0b, z, v, x23, y45, d34, o, bad);
    kt_assert_no_leak(live);
}

Test(linalg, bmm)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_dtype dts[] = { TG_FLOAT32, TG_FLOAT64, TG_INT64 };
    for (int small = 0; small < 2; small++) {
        const int64_t B = small ? 64 : 3, n = small ? 5 : 150, m = small ? 7 : 140,
                      p = small ? 3 : 130;
        for (size_t d = 0; d < 3; d++) {
            tg_dtype dt = dts[d];
            double *a = rand_vals(B * n * m, 7 + d, dt), *b = rand_vals(B * m * p, 70 + d, dt);
            double *c = malloc(sizeof(double) * (size_t)(B * n * p));
            for (int64_t i = 0; i < B; i++)
                ref_mm(a + i * n * m, b + i * m * p, c + i * n * p, n, m, p);
            tg_tensor *A = kt_tensor(a, (int64_t[]){ B, n, m }, 3, dt);
            /* b as the transpose of a (B, p, m) tensor: a batch of column-major matrices */
            double *bt = malloc(sizeof(double) * (size_t)(B * m * p));
            for (int64_t i = 0; i < B; i++)
                for (int64_t r = 0; r < m; r++)
                    for (int64_t q = 0; q < p; q++)
                        bt[i * m * p + q * m + r] = b[i * m * p + r * p + q];
            tg_tensor *Bb = kt_tensor(bt, (int64_t[]){ B, p, m }, 3, dt);
            tg_tensor *Bt = tg_transpose(Bb, 1, 2);
            tg_tensor *C = tg_bmm(A, Bt);
            cr_assert(C, "%s", tg_last_error());
            kt_assert_shape(C, (int64_t[]){ B, n, p }, 3);
            if (dt == TG_INT64) kt_assert_close(C, c, B * n * p, 0, 0, "bmm int64");
            else assert_normwise(C, c, B * n * p, bound_for(dt), "bmm");
            kt_release_all(A, Bb, Bt, C);
            free(a);
            free(b);
            free(bt);
            free(c);
        }
    }
    tg_tensor *x = kt_tensor(NULL, (int64_t[]){ 2, 3, 4 }, 3, TG_FLOAT32);
    tg_tensor *y = kt_tensor(NULL, (int64_t[]){ 3, 4, 5 }, 3, TG_FLOAT32);
    tg_tensor *z = kt_tensor(NULL, (int64_t[]){ 2, 5, 5 }, 3, TG_FLOAT32);
    tg_tensor *m2 = kt_tensor(NULL, (int64_t[]){ 4, 5 }, 2, TG_FLOAT32);
    kt_expect_error(tg_bmm(x, y),
                    "batch1 and batch2 must have same number of batches, got 2 and 3");
    kt_expect_error(tg_bmm(x, m2), "batch2 must be a 3D tensor");
    kt_expect_error(tg_bmm(x, z), "Incompatible matrix sizes for bmm (3x4 and 5x5)");
    kt_release_all(x, y, z, m2);
    kt_assert_no_leak(live);
}

Test(linalg, addmm)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    const int64_t n = 20, m = 30, p = 10;
    for (int dd = 0; dd < 2; dd++) {
        tg_dtype dt = dd ? TG_FLOAT64 : TG_FLOAT32;
        double *a = rand_vals(n * m, 11, dt), *b = rand_vals(m * p, 12, dt),
               *s = rand_vals(n * p, 13, dt);
        double *c = malloc(sizeof(double) * n * p), *want = malloc(sizeof(double) * n * p);
        ref_mm(a, b, c, n, m, p);
        tg_tensor *A = make_operand(a, n, m, dt, 1), *B = make_operand(b, m, p, dt, 0);
        /* full self, beta/alpha */
        tg_tensor *S = kt_tensor(s, (int64_t[]){ n, p }, 2, dt);
        for (int64_t i = 0; i < n * p; i++) want[i] = 0.5 * s[i] + 2 * c[i];
        tg_tensor *R = tg_addmm(S, A, B, .beta = 0.5, .alpha = 2);
        cr_assert(R, "%s", tg_last_error());
        assert_normwise(R, want, n * p, bound_for(dt), "addmm");
        /* broadcast self (p,) */
        tg_tensor *bias = kt_tensor(s, (int64_t[]){ p }, 1, dt);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < p; j++) want[i * p + j] = s[j] + c[i * p + j];
        tg_tensor *R2 = tg_addmm(bias, A, B);
        assert_normwise(R2, want, n * p, bound_for(dt), "addmm broadcast bias");
        /* beta = 0 ignores self, NaN included */
        double *nans = malloc(sizeof(double) * n * p);
        for (int64_t i = 0; i < n * p; i++) nans[i] = NAN;
        tg_tensor *SN = kt_tensor(nans, (int64_t[]){ n, p }, 2, dt);
        tg_tensor *R3 = tg_addmm(SN, A, B, .beta = 0);
        assert_normwise(R3, c, n * p, bound_for(dt), "addmm beta=0 ignores NaN");
        /* in place, on a transposed self (column-major C) */
        tg_tensor *ST = make_operand(s, n, p, dt, 1);
        tg_tensor *R4 = tg_addmm_(ST, A, B);
        cr_assert_eq(R4, ST);
        for (int64_t i = 0; i < n * p; i++) want[i] = s[i] + c[i];
        assert_normwise(ST, want, n * p, bound_for(dt), "addmm_ in place");
        tg_release(R4);
        /* in place with a shape that does not match */
        cr_assert_null(tg_addmm_(bias, A, B));
        tg_clear_error();
        kt_release_all(A, B, S, R, bias, R2, SN, R3, ST);
        free(a);
        free(b);
        free(s);
        free(c);
        free(want);
        free(nans);
    }
    tg_tensor *x = kt_tensor(NULL, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *bad = kt_tensor(NULL, (int64_t[]){ 3 }, 1, TG_FLOAT32);
    tg_tensor *y = kt_tensor(NULL, (int64_t[]){ 3, 4 }, 2, TG_FLOAT32);
    kt_expect_error(
        tg_addmm(bad, x, y),
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
    kt_expect_error(tg_addmm(bad, bad, y), "mat1 must be a matrix, got 1-D tensor");
    kt_release_all(x, bad, y);
    kt_assert_no_leak(live);
}

Test(linalg, matmul_fixture_table)
{
    kt_live live = kt_live_now();
    for (size_t i = 0; i < sizeof fx_matmul_cases / sizeof fx_matmul_cases[0]; i++) {
        const fx_matmul_case *c = &fx_matmul_cases[i];
        for (int dd = 0; dd < 2; dd++) {
            tg_dtype dt = dd ? TG_FLOAT32 : TG_FLOAT64;
            tg_tensor *a = kt_tensor(c->a, c->a_shape, c->a_ndim, dt),
                      *b = kt_tensor(c->b, c->b_shape, c->b_ndim, dt);
            tg_tensor *r = tg_matmul(a, b);
            cr_assert(r, "matmul case %zu: %s", i, tg_last_error());
            kt_assert_shape(r, c->r_shape, c->r_ndim);
            int64_t n = 1;
            for (int64_t k = 0; k < c->r_ndim; k++) n *= c->r_shape[k];
            char what[64];
            snprintf(what, sizeof what, "matmul case %zu %s", i, tg_dtype_name(dt));
            /* metric: |got - want| <= tol (1 + |want|); values are sums of <= 4 products of N(0,1) */
            kt_assert_close(r, c->r, n, dd ? 1e-5 : 1e-12, dd ? 1e-5 : 1e-12, what);
            tg_tensor *out = kt_tensor(NULL, (int64_t[]){ 0 }, 1, dt);
            tg_tensor *ro = tg_matmul_out(a, b, out);
            cr_assert_eq(ro, out, "matmul out= returns out");
            kt_assert_shape(out, c->r_shape, c->r_ndim);
            kt_assert_close(out, c->r, n, dd ? 1e-5 : 1e-12, dd ? 1e-5 : 1e-12, what);
            kt_release_all(ro, out, r, a, b);
        }
    }
    kt_assert_no_leak(live);
}

Test(linalg, matmul_errors)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *s = kt_tensor((double[]){ 1 }, NULL, 0, TG_FLOAT32);
    tg_tensor *m = kt_tensor(NULL, (int64_t[]){ 2, 2 }, 2, TG_FLOAT32);
    tg_tensor *v3 = kt_tensor(NULL, (int64_t[]){ 3 }, 1, TG_FLOAT32);
    tg_tensor *v4 = kt_tensor(NULL, (int64_t[]){ 4 }, 1, TG_FLOAT32);
    kt_expect_error(tg_matmul(s, m),
                    "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
    kt_expect_error(
        tg_matmul(v3, v4),
        "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively");
    tg_tensor *b1 = kt_tensor(NULL, (int64_t[]){ 2, 2, 2 }, 3, TG_FLOAT32);
    tg_tensor *b2 = kt_tensor(NULL, (int64_t[]){ 3, 2, 2 }, 3, TG_FLOAT32);
    cr_assert_null(tg_matmul(b1, b2));
    tg_clear_error();
    kt_release_all(s, m, v3, v4, b1, b2);
    kt_assert_no_leak(live);
}

Test(linalg, bmm_out_and_addmm_out)
{
    kt_live live = kt_live_now();
    tg_tensor *a =
        kt_tensor((double[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, (int64_t[]){ 2, 2, 2 }, 3, TG_FLOAT32);
    tg_tensor *o = kt_tensor(NULL, (int64_t[]){ 0 }, 1, TG_FLOAT32);
    tg_tensor *r = tg_bmm_out(a, a, o);
    cr_assert_eq(r, o);
    kt_assert_close(o, (double[]){ 7, 10, 15, 22, 67, 78, 91, 106 }, 8, 0, 0, "bmm.out");
    tg_release(r);
    tg_tensor *m = kt_tensor((double[]){ 1, 2, 3, 4 }, (int64_t[]){ 2, 2 }, 2, TG_FLOAT32);
    tg_tensor *bias = kt_tensor((double[]){ 1, -1 }, (int64_t[]){ 2 }, 1, TG_FLOAT32);
    tg_tensor *o2 = kt_tensor(NULL, (int64_t[]){ 2, 2 }, 2, TG_FLOAT32);
    r = tg_addmm_out(bias, m, m, o2, .beta = 2);
    cr_assert_eq(r, o2);
    kt_assert_close(o2, (double[]){ 9, 8, 17, 20 }, 4, 0, 0, "addmm.out");
    kt_release_all(r, a, o, m, bias, o2);
    kt_assert_no_leak(live);
}
