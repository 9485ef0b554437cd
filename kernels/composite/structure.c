/* The composite cumulative and structure operators: the backward helpers of cumsum, cumprod,
 * roll and repeat (FunctionsManual.cpp's cumsum_backward, cumprod_backward, repeat_backward;
 * roll's formula) and repeat_interleave.self_int. Each is written with public tg_* calls, so
 * autograd flows through the operators it calls (their own derivatives give the double
 * backward). Every function returns a new reference, or NULL with an error recorded, and
 * releases its intermediates on every path (the tmp pool below). */
#include "tg_kutil.h"

#include <stdlib.h>
#include <string.h>

#include "ops/add.h"
#include "ops/cat.h"
#include "ops/clone.h"
#include "ops/cumprod.h"
#include "ops/cumsum.h"
#include "ops/cumsum_backward.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/expand.h"
#include "ops/flatten.h"
#include "ops/flip.h"
#include "ops/ge.h"
#include "ops/mul.h"
#include "ops/ne.h"
#include "ops/repeat_interleave.h"
#include "ops/reshape.h"
#include "ops/roll.h"
#include "ops/split.h"
#include "ops/sum.h"
#include "ops/unsqueeze.h"
#include "ops/where.h"
#include "ops/zeros.h"

#include "kernels/cumprod_backward.h"
#include "kernels/cumsum_backward.h"
#include "kernels/repeat_backward.h"
#include "kernels/repeat_interleave.h"
#include "kernels/roll_backward.h"

/* Intermediates of one composite, released together. After the first failed call the
 * remaining ones are skipped (T() gives NULL without calling), so the first error stays the
 * recorded one. */
typedef struct tmp_pool {
    tg_tensor *t[40];
    int n;
    bool bad;
} tmp_pool;

static tg_tensor *pool_keep(tmp_pool *p, tg_tensor *t)
{
    if (t && p->n == (int)(sizeof p->t / sizeof p->t[0])) {
        tg_release(t);
        t = tg__error("structure", "internal: too many intermediates");
    }
    if (!t) {
        p->bad = true;
        return NULL;
    }
    return p->t[p->n++] = t;
}

/* A new reference to r (NULL after a failure), having released the pool. */
static tg_tensor *pool_finish(tmp_pool *p, tg_tensor *r)
{
    if (!p->bad && r) tg_retain(r);
    else r = NULL;
    for (int i = 0; i < p->n; i++) tg_release(p->t[i]);
    return r;
}

#define T(expr) (P.bad ? NULL : pool_keep(&P, (expr)))

/* flip(cumsum(flip(grad, dim), dim), dim): grad summed from the end of dim. */
tg_tensor *tg__composite_cumsum_backward(tg_tensor *grad, int64_t dim)
{
    int64_t d = tg__wrap_dim("cumsum_backward", dim, grad->ndim);
    if (d < 0) return NULL;
    if (tg__numel(grad) <= 1 || grad->sizes[d] == 1) return tg_retain(grad);
    tmp_pool P = { .n = 0 };
    int64_t dd[1] = { d };
    tg_int_list dl = { .len = 1, .data = dd };
    tg_tensor *f = T(tg_flip(grad, dl));
    tg_tensor *c = T(tg_cumsum(f, d));
    tg_tensor *r = T(tg_flip(c, dl));
    return pool_finish(&P, r);
}

/* The gradient of output = cumprod(input, dim) for grad (shapes equal). Along each slice of
 * dim, with z the index of its first zero (none: z = n) and R = the reversed cumsum of
 * grad * cumprod(input with element z set to 1):
 *   k < z:  sum_{j >= k} grad[j] * output[j] / input[k]
 *   k = z:  R[z]        (the products skipping element z)
 *   k > z:  input[z] * R[k] / input[k] where input[k] != 0, else 0
 * The k > z values are 0 (input[z] = 0) but carry the derivative with respect to input[z], so
 * this formula's own gradient (the double backward) is exact for slices with at most one
 * zero. Divisions only ever see nonzero denominators (the others are replaced by 1 and the
 * results masked), so no NaN leaks into either gradient. */
tg_tensor *tg__composite_cumprod_backward(tg_tensor *grad, tg_tensor *input, int64_t dim,
                                          tg_tensor *output)
{
    if (tg__numel(input) <= 1) return tg_retain(grad);
    int64_t d = tg__wrap_dim("cumprod_backward", dim, input->ndim);
    if (d < 0) return NULL;
    if (input->sizes[d] == 1) return tg_retain(grad);
    tmp_pool P = { .n = 0 };
    int64_t dd[1] = { d };
    tg_int_list dl = { .len = 1, .data = dd };
    tg_tensor *iz = T(tg_eq_scalar(input, 0));  /* input == 0 */
    tg_tensor *cz = T(tg_cumsum(iz, d));        /* zeros so far (int64) */
    tg_tensor *before = T(tg_eq_scalar(cz, 0)); /* k < z */
    tg_tensor *cz1 = T(tg_eq_scalar(cz, 1));
    tg_tensor *fz = T(tg_mul(iz, cz1)); /* k == z */
    tg_tensor *nz = T(tg_ne_scalar(input, 0));
    tg_tensor *cz_ge1 = T(tg_ge_scalar(cz, 1));
    tg_tensor *after = T(tg_mul(cz_ge1, nz)); /* k > z, input[k] != 0 */
    /* k < z */
    tg_tensor *w = T(tg_mul(output, grad));
    tg_tensor *wr = T(tg_cumsum_backward(w, d));
    tg_tensor *den = T(tg_where_scalar_other(before, input, 1.0));
    tg_tensor *q = T(tg_div(wr, den));
    tg_tensor *a = T(tg_where_scalar_other(before, q, 0.0));
    /* k == z */
    tg_tensor *x2 = T(tg_where_scalar_self(fz, 1.0, input));
    tg_tensor *out2 = T(tg_cumprod(x2, d));
    tg_tensor *g2 = T(tg_mul(grad, out2));
    tg_tensor *r = T(tg_cumsum_backward(g2, d));
    tg_tensor *b = T(tg_where_scalar_other(fz, r, 0.0));
    /* k > z */
    tg_tensor *xz0 = T(tg_where_scalar_other(fz, input, 0.0));
    tg_tensor *xz = T(tg_sum(xz0, .dim = dl, .keepdim = true));
    tg_tensor *den2 = T(tg_where_scalar_other(after, input, 1.0));
    tg_tensor *q2 = T(tg_div(r, den2));
    tg_tensor *q3 = T(tg_mul(q2, xz));
    tg_tensor *c = T(tg_where_scalar_other(after, q3, 0.0));
    tg_tensor *ab = T(tg_add(a, b));
    tg_tensor *res = T(tg_add(ab, c));
    return pool_finish(&P, res);
}

/* roll(grad, -shifts, dims): the rolls along distinct dims commute, so the order of the
 * (shift, dim) pairs does not matter. */
tg_tensor *tg__composite_roll_backward(tg_tensor *grad, tg_int_list shifts, tg_int_list dims)
{
    if (shifts.len > TG_MAX_DIMS * 4)
        return tg__error("roll_backward", "too many shifts (%lld)", (long long)shifts.len);
    int64_t neg[TG_MAX_DIMS * 4];
    for (int64_t i = 0; i < shifts.len; i++) neg[i] = -shifts.data[i];
    tg_int_list nl = { .len = shifts.len, .data = neg };
    return tg_roll(grad, nl, .dims = dims);
}

/* grad (the repeated shape, repeats.len dims) summed over the tiles to input_shape: viewed as
 * [repeats of the leading dims..., (repeat, size) per input dim (just size where repeat is
 * 1)] and summed over every repeat dim. */
tg_tensor *tg__composite_repeat_backward(tg_tensor *grad, tg_int_list repeats,
                                         tg_int_list input_shape)
{
    const char *op = "repeat_backward";
    for (int64_t i = 0; i < repeats.len; i++)
        if (repeats.data[i] == 0)
            return tg_zeros(input_shape, .dtype = grad->dtype, .device = grad->device);
    int64_t lead = repeats.len - input_shape.len;
    if (lead < 0)
        return tg__error(op, "Number of dimensions of repeat dims can not be smaller than "
                             "number of dimensions of tensor");
    int64_t size[2 * TG_MAX_DIMS], sum_dims[2 * TG_MAX_DIMS];
    int64_t ns = 0, nd = 0;
    for (int64_t i = 0; i < repeats.len; i++) {
        if (ns + 2 > 2 * TG_MAX_DIMS) return tg__error(op, "too many dims");
        int64_t rep = repeats.data[i];
        if (i < lead) {
            sum_dims[nd++] = ns;
            size[ns++] = rep;
            continue;
        }
        if (rep != 1) {
            sum_dims[nd++] = ns;
            size[ns++] = rep;
        }
        size[ns++] = input_shape.data[i - lead];
    }
    if (nd == 0) return tg_retain(grad);
    tg_int_list sl = { .len = ns, .data = size }, dl = { .len = nd, .data = sum_dims };
    tg_tensor *g = tg_reshape(grad, sl);
    if (!g) return NULL;
    tg_tensor *r = tg_sum(g, .dim = dl);
    tg_release(g);
    return r;
}

/* repeat_interleave's input, kept in P: self when dim is given, else the flattened self; its
 * wrapped dim in *d. NULL with the error recorded. */
static tg_tensor *ri_input(const char *op, tmp_pool *P, tg_tensor *self, tg_opt_int dim, int64_t *d)
{
    if (!tg_is_none_int(dim) && self->ndim == 0)
        return tg__error(op, "Dimension specified as %lld but tensor has no dimensions",
                         (long long)dim);
    tg_tensor *in = !tg_is_none_int(dim) ? self : pool_keep(P, tg_flatten(self));
    if (!in) return NULL;
    *d = tg__wrap_dim(op, tg_is_none_int(dim) ? 0 : dim, in->ndim);
    return *d < 0 ? NULL : in;
}

/* self's elements (slices along dim; of the flattened self when dim is None) each repeated
 * `repeats` times in a row: unsqueeze(dim + 1), expand it to repeats, merge the two dims. */
tg_tensor *tg__composite_repeat_interleave_self_int(tg_tensor *self, int64_t repeats,
                                                    tg_opt_int dim, tg_opt_int output_size)
{
    const char *op = "repeat_interleave";
    if (repeats < 0) return tg__error(op, "repeats can not be negative");
    tmp_pool P = { .n = 0 };
    int64_t d = 0;
    tg_tensor *in = ri_input(op, &P, self, dim, &d);
    if (!in) return pool_finish(&P, NULL);
    if (in->ndim >= TG_MAX_DIMS) {
        pool_finish(&P, NULL);
        return tg__error(op, "at most %d dims are supported", TG_MAX_DIMS - 1);
    }
    int64_t n = in->sizes[d];
    if (!tg_is_none_int(output_size) && n > 0 && output_size != n * repeats) {
        pool_finish(&P, NULL);
        return tg__error(op, "allocated size does not match required size");
    }
    int64_t esz[TG_MAX_DIMS], osz[TG_MAX_DIMS];
    for (int64_t k = 0, e = 0; k < in->ndim; k++) {
        esz[e++] = in->sizes[k];
        if (k == d) esz[e++] = repeats;
        osz[k] = k == d ? n * repeats : in->sizes[k];
    }
    tg_int_list el = { .len = in->ndim + 1, .data = esz }, ol = { .len = in->ndim, .data = osz };
    tg_tensor *u = T(tg_unsqueeze(in, d + 1));
    tg_tensor *x = T(tg_expand(u, el));
    tg_tensor *r = T(tg_reshape(x, ol));
    return pool_finish(&P, r);
}

/* self's slices along dim (of the flattened self when dim is None) each repeated by its count
 * in repeats: a 0-dim or 1-element repeats is one count for every slice (the self_int path),
 * a 1-D one has a count per slice. The counts are read on the host, after
 * repeat_interleave.Tensor has checked them (dtype, sign, output_size) exactly as PyTorch's
 * index path does; then split into size-1 slices, expand slice i to repeats[i], cat. */
tg_tensor *tg__composite_repeat_interleave_self_tensor(tg_tensor *self, tg_tensor *repeats,
                                                       tg_opt_int dim, tg_opt_int output_size)
{
    const char *op = "repeat_interleave";
    tmp_pool P = { .n = 0 };
    int64_t d = 0;
    tg_tensor *in = ri_input(op, &P, self, dim, &d);
    if (!in) return pool_finish(&P, NULL);
    int64_t n = in->sizes[d];
    bool one = repeats->ndim == 0 || (repeats->ndim == 1 && repeats->sizes[0] == 1);
    if (!one && repeats->ndim != 1) {
        pool_finish(&P, NULL);
        return tg__error(op, "repeats must be 0-dim or 1-dim tensor");
    }
    if (!one && repeats->sizes[0] != n) {
        pool_finish(&P, NULL);
        return tg__error(op, "repeats must have the same size as input along dim");
    }
    /* the per-slice counts (expanded when one), checked by the index operator */
    int64_t one_shape[1] = { 1 }, n_shape[1] = { n };
    tg_int_list one_l = { .len = 1, .data = one_shape }, n_l = { .len = 1, .data = n_shape };
    tg_tensor *r1 = one ? T(tg_reshape(repeats, one_l)) : repeats;
    tg_tensor *rs = one && r1 ? T(tg_expand(r1, n_l)) : r1;
    tg_tensor *idx = rs ? T(tg_repeat_interleave(rs, .output_size = output_size)) : NULL;
    if (!idx) return pool_finish(&P, NULL);
    /* host copies of the counts */
    int64_t *cnt = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    tg_tensor *host = tg__empty(op, n_shape, 1, TG_INT64, TG_DEVICE_CPU);
    if (!cnt || !host || tg__copy_into(op, host, rs) != 0) {
        if (!cnt || !host) tg__error(op, "out of memory");
        free(cnt);
        tg_release(host);
        return pool_finish(&P, NULL);
    }
    memcpy(cnt, tg__k_data(host), sizeof(int64_t) * (size_t)n);
    tg_release(host);
    tg_tensor *res = NULL;
    if (n == 0) {
        res = T(tg_clone(in));
    } else {
        tg_tensor_list parts = tg_split(in, 1, .dim = d);
        tg_tensor **ex = calloc((size_t)n, sizeof *ex);
        bool ok = parts.data && ex;
        if (!ex) tg__error(op, "out of memory");
        int64_t esz[TG_MAX_DIMS];
        for (int64_t k = 0; k < in->ndim; k++) esz[k] = in->sizes[k];
        tg_int_list el = { .len = in->ndim, .data = esz };
        for (int64_t i = 0; ok && i < n; i++) {
            esz[d] = cnt[i];
            ok = (ex[i] = tg_expand(parts.data[i], el)) != NULL;
        }
        tg_tensor_list exl = { ex, n };
        if (ok) res = T(tg_cat(exl, .dim = d));
        else P.bad = true;
        for (int64_t i = 0; ex && i < n; i++) tg_release(ex[i]);
        free(ex);
        tg_tensor_list_release(parts);
    }
    free(cnt);
    return pool_finish(&P, res);
}
