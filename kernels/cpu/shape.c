/* cat: concatenation along a dim, PyTorch's rules.
 *
 * Every input is viewed as [outer, inner_i] where outer is the product of the sizes before
 * `dim` and inner_i = size_i(dim) * (product of the sizes after dim); out is [outer, inner]
 * with inner = sum of inner_i, and input i lands at column offset sum_{k<i} inner_k.
 * Reference path: element by element with dtype conversion (copy_any). Fast path: same dtype
 * and both sides contiguous, one memcpy per (input, outer row), parallel over rows. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "shape_checks.h"

#include <stdlib.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/cat.h"

/* Copies src (any strides, any dtype) into dst region of out: src element with row-major
 * index (o, c) (as [outer, inner_src]) goes to out's (o, col0 + c). */
typedef struct cat_piece {
    const tg_tensor *src;
    tg_tensor *out;
    int64_t inner_src, inner_out, col0;
    bool fast;
} cat_piece;

static void copy_any(const cat_piece *p, int64_t o)
{
    tg_dtype sd = p->src->dtype, od = p->out->dtype;
    size_t se = tg_dtype_size(sd), oe = tg_dtype_size(od);
    const char *sb = tg__k_data(p->src);
    char *ob = tg__k_data(p->out);
    for (int64_t c = 0; c < p->inner_src; c++) {
        const char *s = sb + tg__k_offset(p->src, o * p->inner_src + c) * (int64_t)se;
        char *d = ob + tg__k_offset(p->out, o * p->inner_out + p->col0 + c) * (int64_t)oe;
        if (sd == od) memcpy(d, s, se);
        else tg__pw_convert(d, od, s, sd);
    }
}

typedef struct cat_job {
    cat_piece *pieces;
    int64_t npieces;
} cat_job;

static void cat_rows(int64_t b, int64_t e, void *ctx)
{
    const cat_job *j = ctx;
    for (int64_t k = 0; k < j->npieces; k++) {
        const cat_piece *p = &j->pieces[k];
        size_t es = tg_dtype_size(p->out->dtype);
        for (int64_t o = b; o < e; o++) {
            if (!p->fast) {
                copy_any(p, o);
                continue;
            }
            memcpy(tg__k_data(p->out) + (o * p->inner_out + p->col0) * (int64_t)es,
                   tg__k_data(p->src) + o * p->inner_src * (int64_t)es, (size_t)p->inner_src * es);
        }
    }
}

/* tensors: n tensors of equal shape except along dim (legacy 1-D empty ones ignored);
 * out has their shape with the dim sizes summed, and the promoted dtype (or out's, castable). */
tg_tensor *tg__cpu_cat_out(tg_tensor_list tensors, int64_t dim, tg_tensor *out)
{
    if (tensors.len == 0)
        return tg__error("cat", "torch.cat(): expected a non-empty list of Tensors");
    int64_t shape[TG_MAX_DIMS], ndim = 0;
    if (tg__cat_shape(tensors, &dim, shape, &ndim) != 0) return NULL;
    tg_dtype dt = tensors.data[0]->dtype;
    for (int64_t i = 1; i < tensors.len; i++) dt = tg_promote_types(dt, tensors.data[i]->dtype);
    tg_tensor *res = tg__cat_result(tensors, dt, shape, ndim, out, TG_DEVICE_CPU);
    if (!res) return NULL;
    int64_t outer = 1, after = 1;
    for (int64_t k = 0; k < dim; k++) outer *= shape[k];
    for (int64_t k = dim + 1; k < ndim; k++) after *= shape[k];
    cat_piece pieces[64],
        *pp = tensors.len <= 64 ? pieces : malloc(sizeof(cat_piece) * (size_t)tensors.len);
    if (!pp) {
        tg_release(res);
        return tg__error("cat", "out of memory");
    }
    int64_t np = 0, col = 0;
    bool out_contig = tg__is_contiguous(res);
    for (int64_t i = 0; i < tensors.len; i++) {
        const tg_tensor *t = tensors.data[i];
        if (tg__cat_skipped(t) || tg__numel(t) == 0) continue;
        int64_t inner = t->sizes[dim] * after;
        pp[np++] =
            (cat_piece){ t,     res,
                         inner, shape[dim] * after,
                         col,   out_contig && t->dtype == res->dtype && tg__is_contiguous(t) };
        col += inner;
    }
    cat_job j = { pp, np };
    if (outer > 0 && np > 0) {
        int64_t row = shape[dim] * after;
        tg__parallel_for(outer, row >= tg__grain_size() ? 1 : tg__grain_size() / (row ? row : 1),
                         cat_rows, &j);
    }
    if (pp != pieces) free(pp);
    if (out) tg__bump_version(res);
    return res;
}
