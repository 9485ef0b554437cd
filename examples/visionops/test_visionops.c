/* visionops' tests: its operators' values against torchvision's (fixtures.h, computed by
 * make_fixtures.py with Debian's torchvision 0.14), their gradients against finite differences
 * (first and second order), calls by name, errors, and, when a GPU is present, the CUDA kernels
 * against the CPU ones. Public API only, as a user's program.
 *   test_visionops PATH_OF_LIBVISIONOPS.so        prints one line per check and a summary */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "tensorgen.h"
#include "visionops_ops.h"

static int passed, failed;

static void check(bool ok, const char *what, const char *detail)
{
    if (ok) passed++;
    else failed++;
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail && *detail ? ": " : "",
           detail ? detail : "");
}

static tg_tensor *tensor(const double *v, const int64_t *sizes, int64_t nd, tg_dtype dt)
{
    tg_tensor *d = tg_tensor_from_data(v, sizes, nd, TG_FLOAT64);
    tg_tensor *t = dt == TG_FLOAT64 ? tg_retain(d) : tg_to(d, dt);
    tg_release(d);
    return t;
}

/* Largest |got - want| / (1 + |want|) over n values; INFINITY when t is not n values. */
static double rel_err(tg_tensor *t, const double *want, int64_t n)
{
    if (!t || tg_tensor_numel(t) != n) return INFINITY;
    double *got = malloc(sizeof(double) * (size_t)n), worst = 0;
    if (tg_tensor_to_doubles(t, got, n)) worst = INFINITY;
    for (int64_t i = 0; i < n && isfinite(worst); i++)
        worst = fmax(worst, fabs(got[i] - want[i]) / (1 + fabs(want[i])));
    free(got);
    return worst;
}

static void check_close(tg_tensor *t, const double *want, int64_t n, double tol, const char *what)
{
    double e = rel_err(t, want, n);
    char detail[256];
    snprintf(detail, sizeof detail, "max relative error %.3g (bound %.0e)%s%s", e, tol,
             t ? "" : ", error: ", t ? "" : tg_last_error());
    check(e <= tol, what, detail);
    tg_clear_error();
}

static void check_error(const char *want, const char *what)
{
    const char *got = tg_last_error();
    char detail[512];
    snprintf(detail, sizeof detail, "got \"%s\"", got ? got : "(no error)");
    check(got && !strcmp(got, want), what, detail);
    tg_clear_error();
}

/* ------------------------------------------------------------------ nms */

static void test_nms(tg_device dev, const char *where)
{
    char what[128];
    for (int f = 0; f < 2; f++) {
        tg_dtype dt = f ? TG_FLOAT32 : TG_FLOAT64;
        tg_tensor *b = tensor(nms_boxes, (int64_t[]){ 12, 4 }, 2, dt);
        tg_tensor *s = tensor(nms_scores, (int64_t[]){ 12 }, 1, dt);
        tg_tensor *bd = tg_to_device(b, dev), *sd = tg_to_device(s, dev);
        const struct {
            double thr;
            const int64_t *keep;
            int64_t n;
        } cases[] = { { 0.3, nms_keep_3, NMS_KEEP_3_N }, { 0.6, nms_keep_6, NMS_KEEP_6_N } };
        for (int c = 0; c < 2; c++) {
            tg_tensor *keep = visionops_nms(bd, sd, cases[c].thr);
            double want[12];
            for (int64_t i = 0; i < cases[c].n; i++) want[i] = (double)cases[c].keep[i];
            snprintf(what, sizeof what, "nms %s %s threshold %.1f (torchvision)", where,
                     tg_dtype_name(dt), cases[c].thr);
            check_close(keep, want, cases[c].n, 0, what);
            if (keep)
                check(tg_tensor_dtype(keep) == TG_INT64 && tg_tensor_device(keep).type == dev.type,
                      "nms indices are int64 on the boxes' device", "");
            tg_release(keep);
        }
        tg_release(bd);
        tg_release(sd);
        tg_release(b);
        tg_release(s);
    }
}

/* ------------------------------------------------------------------ roi_align */

typedef struct roi_case {
    double scale;
    int64_t ph, pw, sampling_ratio;
    bool aligned;
    const double *out, *gout, *gin;
} roi_case;
static const roi_case roi_cases[] = {
    { 0.5, 3, 2, 2, false, roi_out_a, roi_gout_a, roi_gin_a },
    { 1.0, 2, 3, -1, true, roi_out_b, roi_gout_b, roi_gin_b },
};
static const int64_t IN_SIZES[] = { 2, 3, 7, 9 }, IN_N = 2 * 3 * 7 * 9, K = 4, C = 3;

static tg_tensor *roi_align_of(tg_tensor *x, tg_tensor *rois, const roi_case *c)
{
    return visionops_roi_align(x, rois, c->scale, c->ph, c->pw, c->sampling_ratio, c->aligned);
}

static void test_roi_align(tg_device dev, const char *where)
{
    char what[160];
    for (int i = 0; i < 2; i++) {
        const roi_case *c = &roi_cases[i];
        int64_t nout = K * C * c->ph * c->pw;
        for (int f = 0; f < 2; f++) {
            tg_dtype dt = f ? TG_FLOAT32 : TG_FLOAT64;
            tg_tensor *x0 = tensor(roi_input, IN_SIZES, 4, dt),
                      *r0 = tensor(roi_rois, (int64_t[]){ 4, 5 }, 2, dt);
            tg_tensor *x = tg_tensor_set_requires_grad(tg_to_device(x0, dev), true);
            tg_tensor *rois = tg_to_device(r0, dev);
            tg_tensor *y = roi_align_of(x, rois, c);
            snprintf(what, sizeof what, "roi_align %s %s case %c forward (torchvision)", where,
                     tg_dtype_name(dt), 'a' + i);
            check_close(y, c->out, nout, f ? 1e-5 : 1e-12, what);
            /* backward: d sum(y * gout) / dx, torchvision's autograd */
            tg_tensor *g0 = tensor(c->gout, (int64_t[]){ K, C, c->ph, c->pw }, 4, dt);
            tg_tensor *g = tg_to_device(g0, dev);
            tg_tensor *yg = y && g ? tg_mul(y, g) : NULL, *loss = yg ? tg_sum(yg) : NULL;
            if (loss) tg_backward(loss);
            tg_release(yg);
            tg_tensor *gin = tg_tensor_grad(x);
            snprintf(what, sizeof what, "roi_align %s %s case %c input gradient (torchvision)",
                     where, tg_dtype_name(dt), 'a' + i);
            check_close(gin, c->gin, IN_N, f ? 1e-5 : 1e-12, what);
            tg_release(gin);
            tg_release(loss);
            tg_release(g);
            tg_release(g0);
            tg_release(y);
            tg_release(rois);
            tg_release(x);
            tg_release(r0);
            tg_release(x0);
        }
    }
}

/* ------------------------------------------------------------------ gradcheck */

/* sum(w * f(v)) for f the map under test. */
typedef tg_tensor *(*map_fn)(tg_tensor *v, tg_tensor *rois, const roi_case *c);
static tg_tensor *map_forward(tg_tensor *v, tg_tensor *rois, const roi_case *c)
{
    return roi_align_of(v, rois, c);
}
static tg_tensor *map_backward(tg_tensor *v, tg_tensor *rois, const roi_case *c)
{
    return visionops__roi_align_backward(v, rois, c->scale, c->ph, c->pw, 2, 3, 7, 9,
                                         c->sampling_ratio, c->aligned);
}
static double weighted_sum(map_fn f, tg_tensor *v, tg_tensor *rois, const roi_case *c, tg_tensor *w)
{
    tg_scope_begin();
    double s = tg_item(tg_sum(tg_mul(f(v, rois, c), w)));
    tg_scope_end();
    return s;
}

/* Central differences (eps 1e-6) of sum(w * f(v)) against autograd's gradient, float64:
 * |analytical - numerical| <= 1e-5 + 1e-3 |numerical| everywhere (PyTorch's gradcheck). */
static void gradcheck(map_fn f, const int64_t *vsizes, const int64_t *wsizes, const roi_case *c,
                      const char *what)
{
    int64_t nv = vsizes[0] * vsizes[1] * vsizes[2] * vsizes[3];
    int64_t nw = wsizes[0] * wsizes[1] * wsizes[2] * wsizes[3];
    double *v = malloc(sizeof(double) * (size_t)nv), *w = malloc(sizeof(double) * (size_t)nw);
    double *an = malloc(sizeof(double) * (size_t)nv);
    srand(7);
    for (int64_t i = 0; i < nv; i++) v[i] = rand() / (double)RAND_MAX * 2 - 1;
    for (int64_t i = 0; i < nw; i++) w[i] = rand() / (double)RAND_MAX * 2 - 1;
    tg_tensor *vt = tg_tensor_set_requires_grad(tensor(v, vsizes, 4, TG_FLOAT64), true);
    tg_tensor *wt = tensor(w, wsizes, 4, TG_FLOAT64);
    tg_tensor *rois = tensor(roi_rois, (int64_t[]){ 4, 5 }, 2, TG_FLOAT64);
    tg_scope_begin();
    tg_tensor *loss = tg_sum(tg_mul(f(vt, rois, c), wt));
    bool ok = loss && tg_backward(loss) == 0;
    tg_scope_end();
    tg_tensor *g = tg_tensor_grad(vt);
    ok = ok && g && tg_tensor_to_doubles(g, an, nv) == 0;
    double worst = 0;
    for (int64_t i = 0; ok && i < nv; i++) {
        double keep = v[i], h = 1e-6;
        v[i] = keep + h;
        tg_tensor *p = tensor(v, vsizes, 4, TG_FLOAT64);
        v[i] = keep - h;
        tg_tensor *m = tensor(v, vsizes, 4, TG_FLOAT64);
        v[i] = keep;
        double num = (weighted_sum(f, p, rois, c, wt) - weighted_sum(f, m, rois, c, wt)) / (2 * h);
        double excess = fabs(an[i] - num) - (1e-5 + 1e-3 * fabs(num));
        worst = fmax(worst, excess);
        tg_release(p);
        tg_release(m);
    }
    char detail[256];
    snprintf(detail, sizeof detail, "%s",
             ok ? (worst <= 0 ? "within bounds" : "outside bounds") : tg_last_error());
    check(ok && worst <= 0, what, detail);
    tg_clear_error();
    tg_release(g);
    tg_release(rois);
    tg_release(wt);
    tg_release(vt);
    free(v);
    free(w);
    free(an);
}

/* ------------------------------------------------------------------ calls by name, errors */

static void test_by_name(const char *library_path)
{
    check(tg_load_library(library_path) == 0, "tg_load_library of the linked library (no-op)",
          tg_last_error());
    tg_clear_error();
    tg_tensor *x = tensor(roi_input, IN_SIZES, 4, TG_FLOAT64),
              *rois = tensor(roi_rois, (int64_t[]){ 4, 5 }, 2, TG_FLOAT64);
    tg_boxed_stack s = { .n = 0 };
    tg_boxed_push_tensor(&s, x);
    tg_boxed_push_tensor(&s, rois);
    tg_boxed_push_double(&s, 0.5);
    tg_boxed_push_int(&s, 3);
    tg_boxed_push_int(&s, 2);
    tg_boxed_push_int(&s, 2);
    tg_boxed_push_bool(&s, false);
    int rc = tg_call_boxed("visionops::roi_align", &s);
    check_close(rc == 0 ? s.v[0].v.t : NULL, roi_out_a, K * C * 3 * 2, 1e-12,
                "roi_align by name (tg_call_boxed)");
    tg_boxed_clear(&s);
    tg_release(x);
    tg_release(rois);
}

static void test_errors(void)
{
    tg_tensor *b = tensor(nms_boxes, (int64_t[]){ 12, 4 }, 2, TG_FLOAT64);
    tg_tensor *s = tensor(nms_scores, (int64_t[]){ 12 }, 1, TG_FLOAT64);
    tg_tensor *flat = tg_reshape(b, TG_INTS(48)), *s3 = tg_reshape(b, TG_INTS(16, 3));
    check(!visionops_nms(flat, s, 0.5), "nms refuses 1-D boxes", "");
    check_error("visionops::nms: boxes should be a 2d tensor, got 1D", "nms error (boxes 1-D)");
    check(!visionops_nms(s3, s, 0.5), "nms refuses boxes of 3 coordinates", "");
    check_error("visionops::nms: boxes should have 4 elements in dimension 1, got 3",
                "nms error (boxes (16, 3))");
    tg_tensor *s5 = tg_slice(s, .end = 5);
    check(!visionops_nms(b, s5, 0.5), "nms refuses 12 boxes with 5 scores", "");
    check_error(
        "visionops::nms: boxes and scores should have same number of elements in dimension 0, got 12 and 5",
        "nms error (counts)");
    tg_tensor *empty_b = tg_empty(TG_INTS(0, 4), .dtype = TG_FLOAT64),
              *empty_s = tg_empty(TG_INTS(0), .dtype = TG_FLOAT64);
    tg_tensor *none = visionops_nms(empty_b, empty_s, 0.5);
    check(none && tg_tensor_numel(none) == 0, "nms of no boxes keeps none", tg_last_error());
    tg_clear_error();
    tg_tensor *x = tensor(roi_input, IN_SIZES, 4, TG_FLOAT64);
    check(!visionops_roi_align(x, b, 1.0, 2, 2, 2, false), "roi_align refuses rois of 4 columns",
          "");
    check_error("visionops::roi_align: rois must have shape as Tensor[K, 5]",
                "roi_align error (rois (12, 4))");
    tg_tensor *bad = tensor((double[]){ 2, 0, 0, 1, 1 }, (int64_t[]){ 1, 5 }, 2, TG_FLOAT64);
    check(!visionops_roi_align(x, bad, 1.0, 2, 2, 2, false),
          "roi_align refuses an image index past the batch", "");
    check_error("visionops::roi_align: rois[0, 0] = 2 is not the index of an image (there are 2)",
                "roi_align error (batch index)");
    tg_release(bad);
    tg_release(x);
    tg_release(none);
    tg_release(empty_b);
    tg_release(empty_s);
    tg_release(s5);
    tg_release(flat);
    tg_release(s3);
    tg_release(b);
    tg_release(s);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH_OF_LIBVISIONOPS.so\n", argv[0]);
        return 2;
    }
    test_nms(TG_DEVICE_CPU, "cpu");
    test_roi_align(TG_DEVICE_CPU, "cpu");
    const int64_t wa[] = { K, C, 3, 2 }, wb[] = { K, C, 2, 3 };
    gradcheck(map_forward, IN_SIZES, wa, &roi_cases[0], "roi_align gradcheck, case a");
    gradcheck(map_forward, IN_SIZES, wb, &roi_cases[1], "roi_align gradcheck, case b");
    /* second order: the backward's own derivative (roi_align again) */
    gradcheck(map_backward, wa, IN_SIZES, &roi_cases[0],
              "_roi_align_backward gradcheck (double backward), case a");
    test_by_name(argv[1]);
    test_errors();
    if (tg_cuda_is_available()) {
        test_nms(TG_DEVICE_CUDA(0), "cuda");
        test_roi_align(TG_DEVICE_CUDA(0), "cuda");
    } else {
        printf("skip no CUDA device: the CUDA kernels were not run\n");
    }
    check(tg_live_tensors() == 0, "no tensor leaked", "");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
