/* The bounds of the value table (kt_case.h), one per kind of computation, each a bound per
 * dtype with its reason above it. Metric (kt_assert_same_values): every element |got - want| <=
 * atol + rtol * |want|, NaN only against NaN, infinities equal; integer and bool results
 * exact. Each rule is { rtol }, { atol }, for float64, float32, float16, bfloat16. */
#include "kt_case.h"

void kt_tol_of(const kt_tol *tol, tg_dtype dt, double *rtol, double *atol)
{
    int i = dt == TG_FLOAT64 ? 0 : dt == TG_FLOAT32 ? 1 : dt == TG_FLOAT16 ? 2 : 3;
    *rtol = *atol = 0;
    if (!tol || !tg_dtype_is_floating(dt)) return;
    *rtol = tol->rtol[i];
    *atol = tol->atol[i];
}

/* Copies, gathers, selections, integer arithmetic. */
const kt_tol kt_exact = { { 0 }, { 0 } };

/* The same scalar functions over two libms (CUDA's and glibc's, each within 1-2 ulp), and nvcc
 * may contract a multiply and an add into one FMA (exp polynomials, hardswish_backward);
 * float32's atol covers sin/cos near their zeros and exp(x) - 1 near 0; float16 and bfloat16
 * compute in float and round once: one unit in the last place. */
const kt_tol kt_tol_libm = { { 1e-12, 1e-5, 1e-2, 1e-2 }, { 1e-12, 1e-6, 1e-2, 1e-2 } };

/* Sums, means and products accumulate in double on both sides in different orders, then round
 * once to the storage type (float32: the rounding plus the order of ~1e4 additions). */
const kt_tol kt_tol_sum = { { 1e-12, 1e-6, 2e-3, 1e-2 }, { 1e-12, 1e-6, 2e-3, 1e-2 } };

/* var and std: Welford on CUDA against two passes on the CPU, both in double. */
const kt_tol kt_tol_var = { { 1e-10, 1e-5, 2e-3, 1e-2 }, { 1e-10, 1e-5, 2e-3, 1e-2 } };

/* cuBLAS against OpenBLAS, TF32 off: float32 accumulates in float32 in different orders, error
 * ~ sqrt(K) * 6e-8 * sum|a||b| for K <= 300; float16/bfloat16 accumulate in float32 and round
 * once on both sides, differing by about one unit of the output's rounding. */
const kt_tol kt_tol_gemm = { { 1e-12, 2e-5, 1e-2, 1e-2 }, { 1e-12, 2e-5, 1e-2, 1e-2 } };

/* Both sides sum the same products in different orders (BLAS and cuBLAS blocking, cuDNN;
 * grad_bias in double): sums of up to a few hundred O(1) products. */
const kt_tol kt_tol_conv = { { 1e-11, 1e-4, 0, 0 }, { 1e-11, 1e-4, 0, 0 } };

/* Normalization statistics: sums in different orders rounded to the storage type. */
const kt_tol kt_tol_norm = { { 1e-10, 1e-5, 0, 0 }, { 1e-10, 1e-5, 0, 0 } };

/* Normalization backward: ten times the forward's bound (three reductions chained). */
const kt_tol kt_tol_norm_backward = { { 1e-9, 1e-4, 0, 0 }, { 1e-9, 1e-4, 0, 0 } };

/* Softmax computes in float (float64: double) on both sides with different exp implementations
 * (CUDA expf within 2 ulp, the CPU's polynomial within a few) and sums in different orders; its
 * values are in [0, 1]: atol a hundredth of rtol. */
const kt_tol kt_tol_softmax = { { 1e-12, 1e-5, 2e-3, 1e-2 }, { 1e-14, 1e-7, 2e-5, 1e-4 } };

/* Softmax of rows with NaN and -inf: only a few finite terms per row. */
const kt_tol kt_tol_softmax_special = { { 1e-12, 1e-6, 0, 0 }, { 1e-14, 1e-7, 0, 0 } };

/* Log_softmax and the softmax backward data operators: as softmax; values are O(10), so the
 * relative bound covers the log of the sum. */
const kt_tol kt_tol_log_softmax = { { 1e-12, 1e-5, 2e-3, 1e-2 }, { 1e-12, 1e-5, 2e-3, 1e-2 } };

/* Accumulations (scatter_add, index_put with accumulate, embedding_dense_backward, nll_loss,
 * norms) run in the CPU's order or in double; the bound allows the compiler to contract a
 * multiply-add differently. */
const kt_tol kt_tol_scatter = { { 1e-12, 1e-6, 0, 0 }, { 1e-12, 1e-6, 0, 0 } };

/* Norms sum in double in another order and round once: relative error only. */
const kt_tol kt_tol_relative = { { 1e-12, 1e-6, 0, 0 }, { 0, 0, 0, 0 } };

/* Gradient sums a device accumulates with atomics in another order (embedding and upsampling
 * backward), the same formulas in the storage type otherwise. */
const kt_tol kt_tol_atomic = { { 1e-12, 1e-5, 0, 0 }, { 1e-12, 1e-5, 0, 0 } };

/* Averages and gradient sums add the same terms in another order; bfloat16 computes in float
 * and rounds once. */
const kt_tol kt_tol_pool = { { 1e-12, 1e-5, 0, 1e-2 }, { 1e-12, 1e-6, 0, 1e-2 } };

/* baddbmm and the fused attention add the same terms in another order (cuBLAS against OpenBLAS,
 * the CUDA attention's per-row loops against the CPU's tiles). */
const kt_tol kt_tol_attention = { { 1e-12, 1e-5, 0, 0 }, { 1e-12, 1e-5, 0, 0 } };

/* Optimizer steps: the same formulas in float; FMA contraction may differ by an ulp per
 * operation, over 3 steps. */
const kt_tol kt_tol_optim = { { 1e-12, 1e-5, 2e-3, 1e-2 }, { 1e-12, 1e-5, 2e-3, 1e-2 } };

/* ------------------------------------------------------------------ against PyTorch 1.13
 * (tests/fixtures) */

/* Batch and group norm, upsampling: PyTorch accumulates float32 statistics and gradient sums in
 * float, in its own order. */
const kt_tol kt_tol_fx_norm = { { 1e-10, 1e-4, 0, 0 }, { 1e-10, 1e-4, 0, 0 } };

/* Float64: the same operations, exp is glibc's on both sides; float32: elu's exp is
 * tg__pw_exp_f32, within 1 ulp of glibc's expf that PyTorch's scalar path calls, and exp(x) - 1
 * near 0 turns that ulp into an absolute error. */
const kt_tol kt_tol_fx_activation = { { 1e-14, 1e-6, 0, 0 }, { 0, 4e-7, 0, 0 } };

/* The same formulas as PyTorch's scalar definitions; float32 through the vectorised erf, tanh,
 * exp and log1p (within 2 ulp of glibc's). */
const kt_tol kt_tol_fx_activation_lm = { { 1e-14, 1e-6, 0, 0 }, { 4e-15, 4e-7, 0, 0 } };
