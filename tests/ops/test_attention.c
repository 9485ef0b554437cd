/* scaled_dot_product_attention, its math composite and the fused operators on the CPU.
 *
 *  - against PyTorch 1.13 (tests/fixtures/attention_fixtures.h, from gen_attention.py: the
 *    explicit formula softmax(q k^T * scale + mask) v in float64, gradients by torch.autograd):
 *    the math composite, sdpa (which takes the fused path for these 4-D inputs) and the fused
 *    operator with its backward, in float64 (1e-10) and float32 (1e-5 relative + 1e-5);
 *  - the fused kernels against the math composite on random inputs the fixtures lack: strided
 *    q/k/v (views of one qkv projection, transposed), several query and key tiles with odd sizes,
 *    causal / bool / float / no mask, L != S;
 *  - determinism (the backward gives the same bits with 1 and 2 threads), memory (the fused path
 *    allocates no L x S tensor: the allocator's cache after a T = 1024 run holds no block that
 *    large, where the math path's does) and the errors. */
#include "kt_util.h"
#include "../fixtures/attention_fixtures.h"
#include "core/core.h" /* tg__cpu_allocator_* for the memory test */
#include "tg_cover.h"

TG_COVERS("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
          "_scaled_dot_product_fused_attention", "_scaled_dot_product_fused_attention_backward");

static tg_opt_float scale_of(const fx_attn_case *c)
{
    return isnan(c->scale) ? TG_NONE_FLOAT : c->scale;
}

static tg_tensor *mask_of(const fx_attn_case *c, tg_dtype dt)
{
    if (c->kind < 2) return NULL;
    return kt_tensor(c->mask, c->mshape, c->mdim, c->kind == 2 ? TG_BOOL : dt);
}

/* path 0: math composite, 1: sdpa, 2: the fused operator. Output and gradients vs PyTorch. */
static void run_case(const fx_attn_case *c, tg_dtype dt, int path)
{
    double rt = dt == TG_FLOAT64 ? 1e-10 : 1e-5, at = dt == TG_FLOAT64 ? 1e-12 : 1e-5;
    const int64_t qs[4] = { c->B, c->H, c->L, c->E }, ks[4] = { c->B, c->H, c->S, c->E };
    const int64_t vs[4] = { c->B, c->H, c->S, c->Ev }, ys[4] = { c->B, c->H, c->L, c->Ev };
    static const char *names[3] = { "math", "sdpa", "fused" };
    char what[160];
    tg_scope_begin();
    tg_tensor *q = tg_tensor_set_requires_grad(kt_tensor(c->q, qs, 4, dt), true);
    tg_tensor *k = tg_tensor_set_requires_grad(kt_tensor(c->k, ks, 4, dt), true);
    tg_tensor *v = tg_tensor_set_requires_grad(kt_tensor(c->v, vs, 4, dt), true);
    tg_tensor *m = mask_of(c, dt), *y = NULL;
    bool causal = c->kind == 1;
    if (path == 0) {
        tg_tensors2 r = tg__scaled_dot_product_attention_math(
            q, k, v, .attn_mask = m, .is_causal = causal, .scale = scale_of(c));
        y = r.r0;
    } else if (path == 1) {
        y = tg_scaled_dot_product_attention(q, k, v, .attn_mask = m, .is_causal = causal,
                                            .scale = scale_of(c));
    } else {
        tg_output_logsumexp r = tg__scaled_dot_product_fused_attention(
            q, k, v, .is_causal = causal, .attn_mask = m, .scale = scale_of(c));
        y = r.output;
    }
    snprintf(what, sizeof what, "%s %s %s", names[path], c->name,
             dt == TG_FLOAT64 ? "float64" : "float32");
    cr_assert(y, "%s: %s", what, tg_last_error());
    kt_assert_shape(y, ys, 4);
    kt_assert_close(y, c->y, kt_shape_numel(ys, 4), rt, at, what);
    tg_tensor *g = kt_tensor(c->g, ys, 4, dt);
    cr_assert_eq(tg_backward(y, .grad = g), 0, "%s: %s", what, tg_last_error());
    kt_assert_grad(q, c->gq, kt_shape_numel(qs, 4), rt, at, what);
    kt_assert_grad(k, c->gk, kt_shape_numel(ks, 4), rt, at, what);
    kt_assert_grad(v, c->gv, kt_shape_numel(vs, 4), rt, at, what);
    tg_scope_end();
}

Test(attention, against_pytorch)
{
    kt_live live = kt_live_now();
    for (int64_t i = 0; i < KT_NUMEL(fx_attn_cases); i++)
        for (int path = 0; path < 3; path++) {
            run_case(&fx_attn_cases[i], TG_FLOAT64, path);
            run_case(&fx_attn_cases[i], TG_FLOAT32, path);
        }
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ fused vs math */

static tg_tensor *rand_tensor(const int64_t *shape, int64_t ndim, tg_dtype dt, uint64_t seed)
{
    int64_t n = kt_shape_numel(shape, ndim);
    double *v = malloc(sizeof(double) * (size_t)n);
    kt_fill_random(v, n, seed, -1.5, 1.5);
    tg_tensor *t = kt_tensor(v, shape, ndim, dt);
    free(v);
    return t;
}

/* q, k, v as the GPT makes them: one (B, T, 3 * H * d) projection viewed (B, T, H, d) per part
 * and transposed to (B, H, T, d): last dim contiguous, other strides arbitrary. */
static void strided_qkv(int64_t B, int64_t H, int64_t T, int64_t d, tg_dtype dt, uint64_t seed,
                        tg_tensor **q, tg_tensor **k, tg_tensor **v)
{
    int64_t sh[3] = { B, T, 3 * H * d };
    tg_tensor *p = tg_tensor_set_requires_grad(rand_tensor(sh, 3, dt, seed), true);
    tg_tensor *parts[3];
    for (int i = 0; i < 3; i++) {
        tg_tensor *s = tg_slice(p, .dim = 2, .start = (i * H * d), .end = ((i + 1) * H * d));
        int64_t vsz[4] = { B, T, H, d };
        tg_int_list size = { .len = 4, .data = vsz };
        parts[i] = tg_transpose(tg_view(s, size), 1, 2);
    }
    *q = parts[0];
    *k = parts[1];
    *v = parts[2];
}

/* out, dq, dk, dv of both paths for one configuration; masks: 0 none, 1 causal, 2 bool, 3 float. */
static void compare_paths(tg_tensor *q, tg_tensor *k, tg_tensor *v, int kind, tg_dtype dt,
                          const char *what)
{
    double tol = dt == TG_FLOAT64 ? 1e-11 : 2e-5;
    int64_t L = tg_tensor_sizes(q)[2], S = tg_tensor_sizes(k)[2];
    tg_tensor *m = NULL;
    if (kind == 2) {
        int64_t ms[2] = { L, S };
        tg_tensor *r = rand_tensor(ms, 2, TG_FLOAT64, 99);
        m = tg_gt_scalar(r, -1.0); /* about 5/6 kept */
        /* keep key 0 for every row (no fully masked row, whose math softmax is NaN) */
        tg_tensor *col = tg_select(m, 1, 0);
        tg_fill_(col, 1);
    } else if (kind == 3) {
        int64_t ms[3] = { 1, L, S };
        m = rand_tensor(ms, 3, dt, 98);
    }
    bool causal = kind == 1;
    int64_t ys[4] = { tg_tensor_sizes(q)[0], tg_tensor_sizes(q)[1], L, tg_tensor_sizes(v)[3] };
    tg_tensor *g = rand_tensor(ys, 4, dt, 77);
    tg_tensor *gr[2][3], *out[2];
    for (int path = 0; path < 2; path++) {
        tg_tensor *y;
        if (path == 0) {
            y = tg__scaled_dot_product_attention_math(q, k, v, .attn_mask = m, .is_causal = causal)
                    .r0;
        } else {
            y = tg__scaled_dot_product_fused_attention(q, k, v, .is_causal = causal, .attn_mask = m)
                    .output;
        }
        cr_assert(y, "%s path %d: %s", what, path, tg_last_error());
        out[path] = y;
        tg_tensor *ins[3] = { q, k, v };
        tg_tensor *outs[1] = { y }, *gouts[1] = { g };
        tg_tensor_list ol = { outs, 1 }, il = { ins, 3 }, gl = { gouts, 1 };
        int rc = tg_grad(ol, il, gr[path], .grad_outputs = gl);
        cr_assert_eq(rc, 0, "%s: %s", what, tg_last_error());
    }
    double *want = kt_values(out[0]);
    kt_assert_close(out[1], want, tg_tensor_numel(out[0]), tol, tol, what);
    free(want);
    for (int i = 0; i < 3; i++) {
        want = kt_values(gr[0][i]);
        kt_assert_close(gr[1][i], want, tg_tensor_numel(gr[0][i]), tol, tol, what);
        free(want);
    }
}

Test(attention, fused_matches_math_strided)
{
    kt_live live = kt_live_now();
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = t ? TG_FLOAT32 : TG_FLOAT64;
        for (int kind = 0; kind < 4; kind++) {
            tg_scope_begin();
            tg_tensor *q, *k, *v;
            strided_qkv(2, 3, 131, 16, dt, 5 + (uint64_t)kind, &q, &k, &v);
            char what[96];
            snprintf(what, sizeof what, "strided T=131 kind %d dtype %d", kind, (int)dt);
            compare_paths(q, k, v, kind, dt, what);
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

Test(attention, fused_matches_math_cross_lengths)
{
    kt_live live = kt_live_now();
    const int64_t LS[3][2] = { { 70, 200 }, { 200, 70 }, { 1, 129 } };
    for (int c = 0; c < 3; c++)
        for (int kind = 0; kind < 4; kind++) {
            tg_scope_begin();
            int64_t qs[4] = { 1, 2, LS[c][0], 24 }, ks[4] = { 1, 2, LS[c][1], 24 },
                    vs[4] = { 1, 2, LS[c][1], 9 };
            tg_tensor *q = tg_tensor_set_requires_grad(rand_tensor(qs, 4, TG_FLOAT32, 1), true);
            tg_tensor *k = tg_tensor_set_requires_grad(rand_tensor(ks, 4, TG_FLOAT32, 2), true);
            tg_tensor *v = tg_tensor_set_requires_grad(rand_tensor(vs, 4, TG_FLOAT32, 3), true);
            char what[96];
            snprintf(what, sizeof what, "L=%lld S=%lld kind %d", (long long)LS[c][0],
                     (long long)LS[c][1], kind);
            compare_paths(q, k, v, kind, TG_FLOAT32, what);
            tg_scope_end();
        }
    kt_assert_no_leak(live);
}

/* A head dimension of 0: every score is 0, so each row averages the (unmasked) values. */
Test(attention, fused_matches_math_zero_head_dim)
{
    kt_live live = kt_live_now();
    for (int kind = 0; kind < 4; kind++) {
        tg_scope_begin();
        int64_t qs[4] = { 1, 2, 5, 0 }, ks[4] = { 1, 2, 7, 0 }, vs[4] = { 1, 2, 7, 3 };
        tg_tensor *q = tg_tensor_set_requires_grad(rand_tensor(qs, 4, TG_FLOAT64, 1), true);
        tg_tensor *k = tg_tensor_set_requires_grad(rand_tensor(ks, 4, TG_FLOAT64, 2), true);
        tg_tensor *v = tg_tensor_set_requires_grad(rand_tensor(vs, 4, TG_FLOAT64, 3), true);
        char what[64];
        snprintf(what, sizeof what, "E=0 kind %d", kind);
        compare_paths(q, k, v, kind, TG_FLOAT64, what);
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* The backward's sums have one owner each: the same bits whatever the thread count. */
Test(attention, backward_deterministic)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    int64_t s[4] = { 2, 2, 150, 32 };
    tg_tensor *q = rand_tensor(s, 4, TG_FLOAT32, 11), *k = rand_tensor(s, 4, TG_FLOAT32, 12);
    tg_tensor *v = rand_tensor(s, 4, TG_FLOAT32, 13), *g = rand_tensor(s, 4, TG_FLOAT32, 14);
    tg_output_logsumexp f = tg__scaled_dot_product_fused_attention(q, k, v, .is_causal = true);
    cr_assert(f.output, "%s", tg_last_error());
    int saved = tg_get_num_threads();
    double *first[3] = { NULL, NULL, NULL };
    for (int run = 0; run < 2; run++) {
        tg_set_num_threads(run ? 2 : 1);
        tg_grad_query_grad_key_grad_value r = tg__scaled_dot_product_fused_attention_backward(
            g, q, k, v, f.output, f.logsumexp, 0.0, true);
        cr_assert(r.grad_query, "%s", tg_last_error());
        tg_tensor *gs[3] = { r.grad_query, r.grad_key, r.grad_value };
        for (int i = 0; i < 3; i++) {
            if (!run) {
                first[i] = kt_values(gs[i]);
                continue;
            }
            kt_assert_close(gs[i], first[i], tg_tensor_numel(gs[i]), 0, 0, "deterministic");
            free(first[i]);
        }
    }
    tg_set_num_threads(saved);
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* The fused path never allocates the L x S matrix (T = 1024: 4 MiB in float32); the math path
 * does, which shows the measure can see it. Freed blocks above the thread caches' 64 KiB land in
 * the allocator's global cache, emptied first. */
static size_t cached_after(bool fused)
{
    tg__cpu_allocator_empty_cache();
    tg_scope_begin();
    int64_t s[4] = { 1, 1, 1024, 16 };
    tg_tensor *q = tg_tensor_set_requires_grad(rand_tensor(s, 4, TG_FLOAT32, 21), true);
    tg_tensor *k = tg_tensor_set_requires_grad(rand_tensor(s, 4, TG_FLOAT32, 22), true);
    tg_tensor *v = tg_tensor_set_requires_grad(rand_tensor(s, 4, TG_FLOAT32, 23), true);
    tg_tensor *y = fused ? tg_scaled_dot_product_attention(q, k, v, .is_causal = true)
                         : tg__scaled_dot_product_attention_math(q, k, v, .is_causal = true).r0;
    cr_assert(y, "%s", tg_last_error());
    cr_assert_eq(tg_backward(tg_sum(y)), 0, "%s", tg_last_error());
    tg_scope_end();
    return tg__cpu_allocator_cached_bytes();
}

Test(attention, fused_memory_is_not_quadratic)
{
    kt_live live = kt_live_now();
    size_t fused = cached_after(true), math = cached_after(false);
    cr_assert(math >= (size_t)1024 * 1024 * 4, "math path cached %zu bytes", math);
    cr_assert(fused < (size_t)1024 * 1024, "fused path cached %zu bytes", fused);
    kt_assert_no_leak(live);
}

Test(attention, errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *q = tg_zeros(TG_INTS(1, 2, 4, 8)), *k = tg_zeros(TG_INTS(1, 2, 5, 8));
    tg_tensor *v = tg_zeros(TG_INTS(1, 2, 5, 3)), *m = tg_ones(TG_INTS(4, 5), .dtype = TG_BOOL);
    kt_expect_error(tg_scaled_dot_product_attention(q, k, v, .attn_mask = m, .is_causal = true),
                    "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                    "is_causal=True");
    tg_tensor *kd = tg_zeros(TG_INTS(1, 2, 5, 8), .dtype = TG_FLOAT64);
    kt_expect_error(tg_scaled_dot_product_attention(q, kd, v),
                    "Expected query, key, and value to have the same dtype, but got query.dtype: "
                    "float key.dtype: double and value.dtype: float instead.");
    tg_tensor *k7 = tg_zeros(TG_INTS(1, 2, 5, 7));
    kt_expect_error(tg_scaled_dot_product_attention(q, k7, v),
                    "scaled_dot_product_attention: query and key must have the same head "
                    "dimension (last dim), but got query 8 and key 7");
    tg_tensor *v6 = tg_zeros(TG_INTS(1, 2, 6, 3));
    kt_expect_error(tg_scaled_dot_product_attention(q, k, v6),
                    "key and value must have the same sequence length");
    tg_tensor *q1 = tg_zeros(TG_INTS(8));
    kt_expect_error(tg_scaled_dot_product_attention(q1, k, v),
                    "Expected query, key, and value to all be  at least 2 dimensional, but got "
                    "query.dim: 1 key.dim: 4 and value.dim: 4 instead.");
    tg_tensor *mi = tg_ones(TG_INTS(4, 5), .dtype = TG_INT64);
    kt_expect_error(tg_scaled_dot_product_attention(q, k, v, .attn_mask = mi),
                    "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                    "attn_mask.dtype: long int and  query.dtype: float instead.");
    tg_tensor *m3 = tg_ones(TG_INTS(3, 5), .dtype = TG_BOOL);
    kt_expect_error(tg__scaled_dot_product_fused_attention(q, k, v, .attn_mask = m3).output,
                    "attn_mask of shape [3, 5] is not broadcastable to [1, 2, 4, 5]");
    cr_assert_null(tg_scaled_dot_product_attention(q, k, v, .attn_mask = m3)); /* math path */
    cr_assert(tg_last_error());
    tg_clear_error();
    kt_expect_error(tg__scaled_dot_product_fused_attention(q, k, v, .dropout_p = 0.5).output,
                    "the fused kernel has no dropout");
    tg_tensor *q3 = tg_zeros(TG_INTS(2, 4, 8));
    kt_expect_error(tg__scaled_dot_product_fused_attention(q3, k, v).output,
                    "expected 4-D (batch, heads, seq, head_dim) query, key and value");
    tg_scope_end();
    kt_assert_no_leak(live);
}
