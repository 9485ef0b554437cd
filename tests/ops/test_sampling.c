/* multinomial and multinomial.out on the CPU: statistical checks of the frequencies, the
 * without-replacement guarantees, reproducibility from a seed, and PyTorch 1.13's messages.
 *
 * The samples cannot be compared with PyTorch's: tensorgen draws from its own generator
 * (xoshiro256** on the CPU), not PyTorch's mt19937, so a seed gives other numbers. Instead,
 * with a fixed seed (so the test is deterministic), the frequencies over many draws must pass
 * a chi-square test against the normalised weights at the 0.1% level (critical values of the
 * chi-square distribution for the stated degrees of freedom, from tables), zero-weight
 * categories must never be drawn, and without replacement a row's samples are distinct. */
#include "kt_util.h"
#include "tg_cover.h"

TG_COVERS("multinomial", "multinomial.out");

/* chi-square critical values at p = 0.001 for 1..7 degrees of freedom */
static const double CHI2_999[8] = { 0, 10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322 };

/* Chi-square of the counts of categories 0..n-1 among samples s[0], s[stride], ... (m of
 * them) against weights w; asserts zero-weight categories never appear and returns the
 * statistic, with *dof the degrees of freedom. */
static double chi2(const double *s, int64_t m, int64_t stride, const double *w, int n, int *dof)
{
    double counts[16] = { 0 }, total = 0;
    for (int j = 0; j < n; j++) total += w[j];
    for (int64_t i = 0; i < m; i++) {
        int64_t c = (int64_t)s[i * stride];
        cr_assert(c >= 0 && c < n, "sample %lld out of range: %lld", (long long)i, (long long)c);
        cr_assert(w[c] > 0, "zero-weight category %lld drawn", (long long)c);
        counts[c]++;
    }
    double x = 0;
    *dof = -1;
    for (int j = 0; j < n; j++) {
        if (w[j] == 0) continue;
        double e = m * w[j] / total;
        x += (counts[j] - e) * (counts[j] - e) / e;
        (*dof)++;
    }
    return x;
}

Test(multinomial, with_replacement_frequencies)
{
    kt_live base = kt_live_now();
    tg_manual_seed(1234);
    const double w[6] = { 1, 0, 2, 3, 0, 4 }; /* not normalised */
    const tg_dtype dts[2] = { TG_FLOAT64, TG_FLOAT32 };
    for (int k = 0; k < 2; k++) {
        tg_tensor *p = kt_tensor(w, (int64_t[]){ 6 }, 1, dts[k]);
        tg_tensor *s = tg_multinomial(p, 20000, .replacement = true);
        cr_assert(s, "%s", tg_last_error());
        cr_expect_eq(tg_tensor_dtype(s), TG_INT64);
        kt_assert_shape(s, (int64_t[]){ 20000 }, 1);
        double *v = kt_values(s);
        int dof;
        double x = chi2(v, 20000, 1, w, 6, &dof);
        cr_expect_lt(x, CHI2_999[dof], "chi-square %g with %d dof", x, dof);
        free(v);
        kt_release_all(s, p);
    }
    /* 2-D: every row its own distribution; a transposed (strided) weight tensor */
    const double w2[3 * 4] = { 5, 1, 0, 0, 0, 1, 1, 1, 2, 0, 0, 7 };
    tg_tensor *pt = kt_tensor(w2, (int64_t[]){ 3, 4 }, 2, TG_FLOAT64);
    tg_tensor *ptt = tg_transpose(pt, 0, 1);
    tg_tensor *p2 = tg_contiguous(ptt);    /* (4, 3) */
    tg_tensor *p = tg_transpose(p2, 0, 1); /* (3, 4) strided, = w2 */
    tg_tensor *s = tg_multinomial(p, 6000, .replacement = true);
    cr_assert(s, "%s", tg_last_error());
    kt_assert_shape(s, (int64_t[]){ 3, 6000 }, 2);
    double *v = kt_values(s);
    for (int r = 0; r < 3; r++) {
        int dof;
        double x = chi2(v + r * 6000, 6000, 1, w2 + r * 4, 4, &dof);
        cr_expect_lt(x, CHI2_999[dof], "row %d: chi-square %g with %d dof", r, x, dof);
    }
    free(v);
    kt_release_all(s, p, p2, ptt, pt);
    kt_assert_no_leak(base);
}

Test(multinomial, without_replacement)
{
    kt_live base = kt_live_now();
    tg_manual_seed(99);
    /* 4000 identical rows, 2 samples each: the first follows the weights, the second
     * differs from it; zero weights never appear while positive ones remain */
    enum { R = 4000, N = 6 };
    const double w[N] = { 1, 0, 2, 3, 0, 4 };
    double *rows = malloc(sizeof(double) * R * N);
    for (int r = 0; r < R; r++) memcpy(rows + r * N, w, sizeof w);
    tg_tensor *p = kt_tensor(rows, (int64_t[]){ R, N }, 2, TG_FLOAT32);
    free(rows);
    tg_tensor *s = tg_multinomial(p, 2);
    cr_assert(s, "%s", tg_last_error());
    double *v = kt_values(s);
    int dof;
    double x = chi2(v, R, 2, w, N, &dof);
    cr_expect_lt(x, CHI2_999[dof], "first samples: chi-square %g with %d dof", x, dof);
    for (int r = 0; r < R; r++) {
        cr_assert_neq(v[2 * r], v[2 * r + 1], "row %d drew %g twice", r, v[2 * r]);
        cr_assert(w[(int)v[2 * r + 1]] > 0, "row %d drew a zero weight", r);
    }
    free(v);
    kt_release_all(s, p);
    /* all categories: every row is a permutation */
    double big[3 * 50];
    kt_fill_random(big, 150, 5, 0.01, 1);
    p = kt_tensor(big, (int64_t[]){ 3, 50 }, 2, TG_FLOAT64);
    s = tg_multinomial(p, 50);
    cr_assert(s, "%s", tg_last_error());
    v = kt_values(s);
    for (int r = 0; r < 3; r++) {
        bool seen[50] = { false };
        for (int t = 0; t < 50; t++) {
            int c = (int)v[r * 50 + t];
            cr_assert(c >= 0 && c < 50 && !seen[c], "row %d: sample %d repeated or bad", r, c);
            seen[c] = true;
        }
    }
    free(v);
    kt_release_all(s, p);
    kt_assert_no_leak(base);
}

Test(multinomial, seeded_and_out)
{
    kt_live base = kt_live_now();
    const double w[5] = { 0.1, 0.2, 0.3, 0.2, 0.2 };
    tg_tensor *p = kt_tensor(w, (int64_t[]){ 5 }, 1, TG_FLOAT64);
    for (int repl = 0; repl < 2; repl++) {
        tg_generator *g = tg_generator_new(42);
        tg_tensor *a = tg_multinomial(p, repl ? 50 : 5, .replacement = repl, .generator = g);
        tg_generator_manual_seed(g, 42);
        tg_tensor *o = tg_empty(TG_INTS(0), .dtype = TG_INT64);
        tg_tensor *b = tg_multinomial_out(p, repl ? 50 : 5, o, .replacement = repl, .generator = g);
        cr_assert_eq(b, o, "%s", tg_last_error());
        double *va = kt_values(a);
        kt_assert_close(b, va, repl ? 50 : 5, 0, 0, "same seed");
        /* the default generator: tg_manual_seed makes it reproducible too */
        tg_manual_seed(7);
        tg_tensor *c = tg_multinomial(p, 20, .replacement = true);
        tg_manual_seed(7);
        tg_tensor *d = tg_multinomial(p, 20, .replacement = true);
        double *vc = kt_values(c);
        kt_assert_close(d, vc, 20, 0, 0, "tg_manual_seed");
        free(vc);
        free(va);
        kt_release_all(a, b, o, c, d);
        tg_generator_free(g);
    }
    tg_release(p);
    kt_assert_no_leak(base);
}

Test(multinomial, errors)
{
    kt_live base = kt_live_now();
    tg_tensor *s0 = tg_ones(TG_NO_INTS), *s3 = tg_ones(TG_INTS(2, 2, 2));
    cr_expect_null(tg_multinomial(s0, 1));
    kt_assert_error("multinomial: prob_dist must be 1 or 2 dim");
    cr_expect_null(tg_multinomial(s3, 1));
    kt_assert_error("prob_dist must be 1 or 2 dim");
    tg_tensor *il = tg_ones(TG_INTS(3), .dtype = TG_INT64);
    cr_expect_null(tg_multinomial(il, 1));
    kt_assert_error("multinomial only supports floating-point dtypes for input, got: Long");
    tg_tensor *p = tg_ones(TG_INTS(2, 3));
    cr_expect_null(tg_multinomial(p, 0));
    kt_assert_error("cannot sample n_sample <= 0 samples");
    cr_expect_null(tg_multinomial(p, 4));
    kt_assert_error("cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    tg_tensor *o = tg_empty(TG_INTS(2, 3));
    cr_expect_null(tg_multinomial_out(p, 2, o));
    kt_assert_error("multinomial expects Long tensor out, got: Float");
    tg_tensor *wide = tg_ones(TG_INTS((1 << 24) + 1));
    cr_expect_null(tg_multinomial(wide, 1, .replacement = true));
    kt_assert_error("number of categories cannot exceed 2^24");
    const double bad[4][3] = { { 1, -1, 1 }, { 1, NAN, 1 }, { 1, INFINITY, 1 }, { 0, 0, 0 } };
    for (int i = 0; i < 4; i++) {
        for (int repl = 0; repl < 2; repl++) {
            tg_tensor *b = kt_tensor(bad[i], (int64_t[]){ 3 }, 1, TG_FLOAT32);
            cr_expect_null(tg_multinomial(b, 2, .replacement = repl));
            kt_assert_error(i < 3 ? "probability tensor contains either `inf`, `nan` or element < 0"
                                  : "invalid multinomial distribution (sum of probabilities <= 0)");
            tg_release(b);
        }
    }
    kt_release_all(wide, o, p, il, s3, s0);
    kt_assert_no_leak(base);
}
