/* convolution and convolution_backward (CPU): im2col + BLAS, 1 to 3 spatial dims, groups,
 * stride, padding, dilation, transposed, float32 and float64.
 *
 * In the terms of conv_checks.h, everything is one regular convolution from the im side
 * (im_c, iD, iH, iW) to the col side (col_c, oD, oH, oW) with weight W (col_c, im_c / groups,
 * kD, kH, kW). Per sample and group, with K = im_c / groups * kD*kH*kW rows and L = oD*oH*oW
 * columns:
 *
 *   to_col   col_out (col_c/g, L)  = W_g (col_c/g, K) . im2col(im) (K, L)
 *   to_im    im_out                = col2im(W_g^T (K, col_c/g) . col (col_c/g, L))
 *   weight   gW_g (col_c/g, K)    += col (col_c/g, L) . im2col(im)^T (L, K)
 *
 * A convolution is to_col forward, to_im for grad_input and weight for grad_weight; a
 * transposed convolution is to_im forward, to_col for grad_input and weight (with the roles of
 * the tensors swapped) for grad_weight. A 1x1 kernel with stride 1 and no padding needs no
 * im2col: the image is the column matrix.
 *
 * Threads: with at least as many samples as threads and at least 2^20 multiply-adds, samples
 * run in parallel (one column buffer of K x L per task, and OpenBLAS runs single-threaded
 * inside a parallel region); otherwise samples run one after another and BLAS decides. grad_weight sums the samples
 * in min(N, 8) fixed parts merged in order, so its value does not depend on the thread count. */
#include "pointwise_convert.h"
#include "tg_kutil.h"
#include "conv_checks.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/convolution.h"
#include "kernels/convolution_backward.h"

/* ------------------------------------------------------------------ im2col / col2im */

/* Output positions ow in [lo, hi) read an image column inside [0, iw): iw = ow * s + off. */
static void valid_range(int64_t off, int64_t s, int64_t iw, int64_t ow, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = iw - 1 - off >= 0 ? (iw - 1 - off) / s + 1 : 0;
    if (h > ow) h = ow;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* One column row from its image row s (NULL: all padding): zeros outside [lo, hi). */
TG_ALWAYS_INLINE void im2col_row(bool f32, char *d, const char *s, int64_t lo, int64_t hi,
                                 int64_t ow, int64_t stride)
{
    const size_t es = f32 ? 4 : 8;
    if (!s) {
        memset(d, 0, es * (size_t)ow);
        return;
    }
    /* the edges are a padding's few zeros: plain loops, not memset calls */
    for (int64_t i = 0; i < lo; i++) memset(d + (size_t)i * es, 0, es);
    if (stride == 1) memcpy(d + (size_t)lo * es, s + (size_t)lo * es, es * (size_t)(hi - lo));
    else
        for (int64_t i = lo; i < hi; i++)
            memcpy(d + (size_t)i * es, s + (size_t)(i * stride) * es, es);
    for (int64_t i = hi; i < ow; i++) memset(d + (size_t)i * es, 0, es);
}

/* One column row s added into its image row d (NULL: padding, nothing to add). */
TG_ALWAYS_INLINE void col2im_row(bool f32, const char *s, char *d, int64_t lo, int64_t hi,
                                 int64_t stride)
{
    if (!d) return;
    if (f32)
        for (int64_t i = lo; i < hi; i++) ((float *)d)[i * stride] += ((const float *)s)[i];
    else
        for (int64_t i = lo; i < hi; i++) ((double *)d)[i * stride] += ((const double *)s)[i];
}

/* im2col (col = image or 0; add false) and col2im (image += col; add true), float32 or
 * float64: im holds `channels` planes of iD x iH x iW; col is (channels * kD*kH*kW,
 * oD*oH*oW). The column row of each tap (kd, kh, kw) is visited one output row (od, oh) at a
 * time, with its image row (shifted by the tap's column offset), or NULL where that lies in
 * the padding. */
TG_ALWAYS_INLINE void columns(bool f32, bool add, char *im, char *col, const tg__conv_geom *g,
                              int64_t channels)
{
    const int64_t iD = g->im_sp[0], iH = g->im_sp[1], iW = g->im_sp[2];
    const int64_t oD = g->col_sp[0], oH = g->col_sp[1], oW = g->col_sp[2];
    const int64_t es = f32 ? 4 : 8, L = oD * oH * oW;
    for (int64_t c = 0; c < channels; c++)
        for (int64_t kd = 0; kd < g->k[0]; kd++)
            for (int64_t kh = 0; kh < g->k[1]; kh++)
                for (int64_t kw = 0; kw < g->k[2]; kw++, col += L * es) {
                    int64_t off = kw * g->dil[2] - g->pad[2], lo, hi;
                    valid_range(off, g->stride[2], iW, oW, &lo, &hi);
                    for (int64_t od = 0; od < oD; od++) {
                        int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
                        for (int64_t oh = 0; oh < oH; oh++) {
                            int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
                            bool pad = id < 0 || id >= iD || ih < 0 || ih >= iH;
                            char *irow =
                                pad ? NULL : im + (((c * iD + id) * iH + ih) * iW + off) * es;
                            char *crow = col + (od * oH + oh) * oW * es;
                            if (add) col2im_row(f32, crow, irow, lo, hi, g->stride[2]);
                            else im2col_row(f32, crow, irow, lo, hi, oW, g->stride[2]);
                        }
                    }
                }
}

static void im2col(tg_dtype dt, const void *im, void *col, const tg__conv_geom *g, int64_t ch)
{
    if (dt == TG_FLOAT32) columns(true, false, (char *)im, col, g, ch);
    else columns(false, false, (char *)im, col, g, ch);
}

static void col2im(tg_dtype dt, const void *col, void *im, const tg__conv_geom *g, int64_t ch)
{
    if (dt == TG_FLOAT32) columns(true, true, im, (char *)col, g, ch);
    else columns(false, true, im, (char *)col, g, ch);
}

/* Row-major C (m, n) = alpha A (m, k) B (k, n) + beta C, A or B transposed as stored. */
static void gemm(tg_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a,
                 int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
    enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    if (dt == TG_FLOAT32)
        cblas_sgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b, (int)ldb,
                    (float)beta, c, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)k, 1.0, a, (int)lda, b, (int)ldb,
                    beta, c, (int)ldc);
}

/* ------------------------------------------------------------------ the three passes */

typedef struct conv_job {
    const tg__conv_geom *g;
    tg_dtype dt;
    size_t es;
    const char *im, *w, *col, *bias; /* inputs (bias may be NULL) */
    char *out;                       /* to_col: col side; to_im: im side; weight: partials */
    int64_t K, L, P;                 /* column rows, columns, image plane (iD*iH*iW) */
    int64_t icg, ocg;                /* channels per group: image side, column side */
    int64_t parts;                   /* weight: sample parts */
    bool failed;                     /* a task could not allocate its buffer */
} conv_job;

/* `channels` rows of `len` values: row c set to bias[c], or zeros without a bias. */
static void fill_bias(tg_dtype dt, const char *bias, char *dst, int64_t channels, int64_t len)
{
    size_t es = tg_dtype_size(dt);
    for (int64_t c = 0; c < channels; c++) {
        char *d = dst + c * len * (int64_t)es;
        if (!bias) {
            memset(d, 0, (size_t)len * es);
        } else if (dt == TG_FLOAT32) {
            float v = ((const float *)bias)[c];
            for (int64_t i = 0; i < len; i++) ((float *)d)[i] = v;
        } else {
            double v = ((const double *)bias)[c];
            for (int64_t i = 0; i < len; i++) ((double *)d)[i] = v;
        }
    }
}

/* A task's column buffer (K x L), or NULL for a 1x1 convolution, which reads the image in
 * place. False when it cannot be allocated (the job then fails). */
static bool column_buffer(conv_job *j, char **buf)
{
    *buf = tg__conv_is_pointwise(j->g) ? NULL : malloc((size_t)(j->K * j->L) * j->es + 1);
    if (!*buf && !tg__conv_is_pointwise(j->g)) j->failed = true;
    return !j->failed;
}

/* Byte offsets of sample n, group gr's image block (icg channels of P) and column block (ocg
 * rows of L), and of group gr's weights (ocg rows of K). */
static int64_t im_offset(const conv_job *j, int64_t n, int64_t gr)
{
    return ((n * j->g->im_c + gr * j->icg) * j->P) * (int64_t)j->es;
}
static int64_t col_offset(const conv_job *j, int64_t n, int64_t gr)
{
    return ((n * j->g->col_c + gr * j->ocg) * j->L) * (int64_t)j->es;
}
static int64_t w_offset(const conv_job *j, int64_t gr)
{
    return gr * j->ocg * j->K * (int64_t)j->es;
}

/* The column matrix of one group's image: the image itself for a 1x1 convolution (no buffer,
 * see column_buffer), else its im2col in buf. */
static const char *columns_of(const conv_job *j, const char *im, char *buf)
{
    if (!buf) return im;
    im2col(j->dt, im, buf, j->g, j->icg);
    return buf;
}

/* Samples [b, e): col_out[n] = bias + W . im2col(im[n]). */
static void to_col_task(int64_t b, int64_t e, void *ctx)
{
    conv_job *j = ctx;
    char *buf;
    if (!column_buffer(j, &buf)) return;
    int64_t ocg = j->ocg;
    for (int64_t n = b; n < e; n++)
        for (int64_t gr = 0; gr < j->g->groups; gr++) {
            const char *cols = columns_of(j, j->im + im_offset(j, n, gr), buf);
            char *out = j->out + col_offset(j, n, gr);
            /* out = W . cols, onto the bias when there is one */
            if (j->bias || !j->K)
                fill_bias(j->dt, j->bias ? j->bias + gr * ocg * (int64_t)j->es : NULL, out, ocg,
                          j->L);
            if (j->K)
                gemm(j->dt, false, false, ocg, j->L, j->K, j->w + w_offset(j, gr), j->K, cols, j->L,
                     j->bias ? 1.0 : 0.0, out, j->L);
        }
    free(buf);
}

/* Samples [b, e): im_out[n] = bias + col2im(W^T . col[n]). */
static void to_im_task(int64_t b, int64_t e, void *ctx)
{
    conv_job *j = ctx;
    char *buf;
    if (!column_buffer(j, &buf)) return;
    int64_t icg = j->icg, ocg = j->ocg;
    for (int64_t n = b; n < e; n++)
        for (int64_t gr = 0; gr < j->g->groups; gr++) {
            char *im = j->out + im_offset(j, n, gr);
            const char *col = j->col + col_offset(j, n, gr);
            const char *w = j->w + w_offset(j, gr);
            fill_bias(j->dt, j->bias ? j->bias + gr * icg * (int64_t)j->es : NULL, im, icg, j->P);
            if (!buf) { /* 1x1: the column matrix is the image: accumulate straight into it */
                if (ocg)
                    gemm(j->dt, true, false, j->K, j->L, ocg, w, j->K, col, j->L, 1.0, im, j->L);
                continue;
            }
            if (ocg) gemm(j->dt, true, false, j->K, j->L, ocg, w, j->K, col, j->L, 0.0, buf, j->L);
            else memset(buf, 0, (size_t)(j->K * j->L) * j->es);
            col2im(j->dt, buf, im, j->g, icg);
        }
    free(buf);
}

/* Parts [b, e) of the samples: partial[p] = sum over the part's samples of col . im2col^T. */
static void weight_task(int64_t b, int64_t e, void *ctx)
{
    conv_job *j = ctx;
    const tg__conv_geom *g = j->g;
    char *buf;
    if (!column_buffer(j, &buf)) return;
    int64_t wsize = g->col_c * j->K;
    for (int64_t p = b; p < e; p++) {
        char *part = j->out + p * wsize * (int64_t)j->es;
        memset(part, 0, (size_t)wsize * j->es);
        for (int64_t n = p * g->n / j->parts; n < (p + 1) * g->n / j->parts; n++)
            for (int64_t gr = 0; gr < g->groups; gr++)
                gemm(j->dt, false, true, j->ocg, j->K, j->L, j->col + col_offset(j, n, gr), j->L,
                     columns_of(j, j->im + im_offset(j, n, gr), buf), j->L, 1.0,
                     part + w_offset(j, gr), j->K);
    }
    free(buf);
}

static conv_job job_of(const tg__conv_geom *g, tg_dtype dt)
{
    conv_job j = { .g = g, .dt = dt, .es = tg_dtype_size(dt) };
    j.K = tg__conv_col_rows(g);
    j.L = tg__conv_prod3(g->col_sp);
    j.P = tg__conv_prod3(g->im_sp);
    j.icg = g->im_c / g->groups;
    j.ocg = g->col_c / g->groups;
    return j;
}

/* Runs a per-sample pass over g->n samples: in parallel when there are enough of them. */
/* Whether `units` tasks (samples or parts) are worth a parallel region: enough of them for
 * every thread, and enough multiply-adds in all (a tiny convolution runs faster on one thread
 * than it takes to wake the others). */
static bool parallel_worth(const conv_job *j, int64_t units)
{
    int64_t macs = j->g->n * j->g->col_c * j->K * j->L;
    return units >= tg_get_num_threads() && macs >= ((int64_t)1 << 20);
}

static int run_samples(const char *op, conv_job *j, void (*task)(int64_t, int64_t, void *))
{
    if (parallel_worth(j, j->g->n)) tg__parallel_for(j->g->n, 1, task, j);
    else task(0, j->g->n, j);
    return j->failed ? tg__fail(op, "out of memory allocating a column buffer") : 0;
}

/* grad_weight (col_c, K) = sum over samples of col . im2col(im)^T, into w_out (contiguous). */
static int weight_pass(const char *op, conv_job *j, char *w_out)
{
    const tg__conv_geom *g = j->g;
    int64_t wsize = g->col_c * j->K;
    j->parts = g->n < 8 ? g->n : 8;
    if (j->parts == 0 || j->L == 0) {
        memset(w_out, 0, (size_t)wsize * j->es);
        return 0;
    }
    char *partials = malloc((size_t)(j->parts * wsize) * j->es + 1);
    if (!partials) return tg__fail(op, "out of memory");
    j->out = partials;
    if (parallel_worth(j, j->parts)) tg__parallel_for(j->parts, 1, weight_task, j);
    else weight_task(0, j->parts, j);
    if (j->failed) {
        free(partials);
        return tg__fail(op, "out of memory allocating a column buffer");
    }
    memcpy(w_out, partials, (size_t)wsize * j->es);
    for (int64_t p = 1; p < j->parts; p++) {
        const char *src = partials + p * wsize * (int64_t)j->es;
        if (j->dt == TG_FLOAT32)
            for (int64_t i = 0; i < wsize; i++) ((float *)w_out)[i] += ((const float *)src)[i];
        else
            for (int64_t i = 0; i < wsize; i++) ((double *)w_out)[i] += ((const double *)src)[i];
    }
    free(partials);
    return 0;
}

/* ------------------------------------------------------------------ the operators */

/* The operands as contiguous tensors (new references); NULL entries stay NULL. */
static int contiguous_all(const char *op, tg_tensor **dst, tg_tensor *const *src, int n)
{
    for (int i = 0; i < n; i++) {
        dst[i] = src[i] ? tg__contiguous(op, src[i]) : NULL;
        if (src[i] && !dst[i]) {
            for (int k = 0; k < i; k++) tg_release(dst[k]);
            return -1;
        }
    }
    return 0;
}

tg_tensor *tg__cpu_convolution(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                               tg_int_list stride, tg_int_list padding, tg_int_list dilation,
                               bool transposed, tg_int_list output_padding, int64_t groups)
{
    const char *op = "convolution";
    tg__conv_geom g;
    if (tg__conv_prepare(op, &g, input, weight, bias ? 1 : -1, bias ? bias->sizes : NULL,
                         bias ? bias->ndim : 0, stride, padding, dilation, transposed,
                         output_padding, groups) != 0)
        return NULL;
    if (bias && bias->dtype != input->dtype)
        return tg__error(op, "Input type (%s) and bias type (%s) should be the same",
                         tg__k_meta_name(input->dtype), tg__k_meta_name(bias->dtype));
    tg_tensor *out = tg__empty(op, g.out_sizes, 2 + g.nsp, input->dtype, TG_DEVICE_CPU);
    tg_tensor *c[3];
    tg_tensor *src[3] = { input, weight, bias };
    if (!out || contiguous_all(op, c, src, 3) != 0) {
        tg_release(out);
        return NULL;
    }
    conv_job j = job_of(&g, input->dtype);
    j.w = tg__k_data(c[1]);
    j.bias = c[2] ? tg__k_data(c[2]) : NULL;
    int rc;
    if (!transposed) {
        j.im = tg__k_data(c[0]);
        j.out = tg__k_data(out);
        rc = run_samples(op, &j, to_col_task);
    } else {
        j.col = tg__k_data(c[0]);
        j.out = tg__k_data(out);
        rc = run_samples(op, &j, to_im_task);
    }
    tg__k_release_all(c, 3);
    if (rc != 0) {
        tg_release(out);
        return NULL;
    }
    return out;
}

/* grad_bias[c] = sum of grad_output over the samples and positions of channel c (in double). */
static void bias_grad(const tg_tensor *go, tg_tensor *gb, const tg__conv_geom *g)
{
    int64_t C = g->out_sizes[1], L = 1;
    for (int i = 0; i < g->nsp; i++) L *= g->out_sizes[2 + i];
    const char *d = tg__k_data(go);
#pragma omp parallel for if (C * L * g->n > 65536)
    for (int64_t c = 0; c < C; c++) {
        double s = 0;
        for (int64_t n = 0; n < g->n; n++) {
            int64_t base = (n * C + c) * L;
            if (go->dtype == TG_FLOAT32)
                for (int64_t i = 0; i < L; i++) s += ((const float *)d)[base + i];
            else
                for (int64_t i = 0; i < L; i++) s += ((const double *)d)[base + i];
        }
        tg__pw_store_f64(tg__k_data(gb) + c * (int64_t)tg_dtype_size(gb->dtype), gb->dtype, s);
    }
}

tg_tensors3 tg__cpu_convolution_backward(tg_tensor *grad_output, tg_tensor *input,
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
    tg_tensor *c[3];
    tg_tensor *src[3] = { grad_output, input, weight };
    if (contiguous_all(op, c, src, 3) != 0) return r;
    tg_tensor *go = c[0], *in = c[1], *w = c[2];
    int rc = 0;
    if (want[0]) {
        r.r0 = tg__empty(op, input->sizes, input->ndim, input->dtype, TG_DEVICE_CPU);
        rc = r.r0 ? 0 : -1;
        conv_job j = job_of(&g, input->dtype);
        j.w = tg__k_data(w);
        j.out = r.r0 ? tg__k_data(r.r0) : NULL;
        if (rc == 0 && !transposed) { /* the input is the im side: col2im of W^T . grad */
            j.col = tg__k_data(go);
            rc = run_samples(op, &j, to_im_task);
        } else if (rc == 0) { /* the input is the col side: a forward convolution of grad */
            j.im = tg__k_data(go);
            rc = run_samples(op, &j, to_col_task);
        }
    }
    if (rc == 0 && want[1]) {
        r.r1 = tg__empty(op, weight->sizes, weight->ndim, weight->dtype, TG_DEVICE_CPU);
        rc = r.r1 ? 0 : -1;
        conv_job j = job_of(&g, input->dtype);
        j.im = tg__k_data(transposed ? go : in);
        j.col = tg__k_data(transposed ? in : go);
        if (rc == 0) rc = weight_pass(op, &j, tg__k_data(r.r1));
    }
    if (rc == 0 && want[2]) {
        int64_t bsz = g.out_sizes[1];
        r.r2 = tg__empty(op, &bsz, 1, input->dtype, TG_DEVICE_CPU);
        if (r.r2) bias_grad(go, r.r2, &g);
        else rc = -1;
    }
    tg__k_release_all(c, 3);
    if (rc != 0) {
        tg_release(r.r0);
        tg_release(r.r1);
        tg_release(r.r2);
        r = (tg_tensors3){ NULL, NULL, NULL };
    }
    return r;
}
