/* Gradcheck cases of advanced indexing (gradcheck.h): index.Tensor with int64 indices
 * (duplicates), None and non-adjacent indices, bool masks; index_put / index_put_ for self and
 * values, with accumulate (duplicates) and without (fixed distinct indices, since the
 * derivative assumes each position is written once), values broadcast to the indexed shape;
 * masked_select with the mask or self broadcast. In-place operators run on a clone of x[0]. */
#include "gradcheck.h"
#include "kt_util.h"

static int one(tg_tensor *r, tg_tensor **y)
{
    y[0] = r;
    return r ? 1 : -1;
}

static tg_tensor *longs(const int64_t *v, int64_t n)
{
    return tg_tensor_from_data(v, &n, 1, TG_INT64);
}

GC_FN(f_index_rows) { return one(tg_index(x[0], TG_TENSORS(x[1])), y); }
GC_FN(f_index_mask) { return one(tg_index(x[0], TG_TENSORS(x[1])), y); }
GC_FN(f_index_nonadjacent)
{
    static const int64_t a[2] = { 0, 2 }, b[2] = { 1, -1 };
    tg_tensor *i = longs(a, 2), *j = longs(b, 2);
    tg_tensor *r = tg_index(x[0], TG_TENSORS(i, NULL, j));
    kt_release_all(i, j);
    return one(r, y);
}
GC_FN(f_index_none_first) { return one(tg_index(x[0], TG_TENSORS(NULL, x[1])), y); }
GC_FN(f_put_acc) { return one(tg_index_put(x[0], TG_TENSORS(x[1]), x[2], .accumulate = true), y); }
GC_FN(f_put_distinct)
{
    static const int64_t a[3] = { 3, 0, -2 };
    tg_tensor *i = longs(a, 3);
    tg_tensor *r = tg_index_put(x[0], TG_TENSORS(i), x[1]);
    tg_release(i);
    return one(r, y);
}
GC_FN(f_put_mask) { return one(tg_index_put(x[0], TG_TENSORS(NULL, x[1]), x[2]), y); }
GC_FN(f_put_)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_tensor *r = tg_index_put_(s, TG_TENSORS(NULL, x[1]), x[2], .accumulate = true);
    tg_release(s);
    return one(r, y);
}
GC_FN(f_masked_select) { return one(tg_masked_select(x[0], x[1]), y); }

static const gc_case advanced_index_cases[] = {
    GC_CASE("index.Tensor", "rows, duplicates", f_index_rows, { REAL(4, 5), INDEX(4, 2, 3) }, true),
    GC_CASE("index.Tensor", "bool mask", f_index_mask, { REAL_T(3, 4), MASK(3, 4) }, true),
    GC_CASE("index.Tensor", "non-adjacent indices around None", f_index_nonadjacent,
            { REAL(3, 4, 5) }, true),
    GC_CASE("index.Tensor", "None then an index", f_index_none_first, { REAL(3, 4), INDEX(4, 5) }),
    GC_CASE("index_put", "accumulate, duplicates", f_put_acc,
            { REAL(4, 5), INDEX(4, 6), REAL(6, 5) }, true),
    GC_CASE("index_put", "distinct, values broadcast", f_put_distinct, { REAL(4, 5), REAL(5) },
            true),
    GC_CASE("index_put", "mask after None", f_put_mask, { REAL(3, 4), MASK(4), REAL(3, 1) }),
    GC_CASE("index_put_", "in place, accumulate, values broadcast", f_put_,
            { REAL(3, 4), INDEX(4, 5), REAL(1) }),
    GC_CASE("masked_select", "mask broadcast", f_masked_select, { REAL(3, 4), MASK(4) }, true),
    GC_CASE("masked_select", "self broadcast", f_masked_select, { REAL(4), MASK(3, 4) }, true),
};
GC_REGISTER(advanced_index_cases);
