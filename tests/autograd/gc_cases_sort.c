/* Gradcheck cases of sort and topk (gradcheck.h). Inputs are GC_DISTINCT (no ties, so the
 * finite differences never reorder the elements). First derivatives only: their backward,
 * sort_backward, has no derivative of its own yet (double backward is not supported). */
#include "gradcheck.h"

GC_FN(f_sort_last) { return gc_y_vi(y, tg_sort_stable(x[0], true)); }
GC_FN(f_sort_dim0_desc)
{
    return gc_y_vi(y, tg_sort_stable(x[0], false, .dim = 0, .descending = true));
}
GC_FN(f_sort_composite)
{
    tg_values_indices r = tg_sort(x[0], .dim = 1);
    y[0] = r.values;
    tg_release(r.indices);
    return 1;
}
GC_FN(f_topk3) { return gc_y_vi(y, tg_topk(x[0], 3)); }
GC_FN(f_topk_dim0_smallest) { return gc_y_vi(y, tg_topk(x[0], 2, .dim = 0, .largest = false)); }

static const gc_case sort_cases[] = {
    GC_CASE("sort.stable", "(3, 5) last dim", f_sort_last, { DISTINCT(3, 5) }),
    GC_CASE("sort.stable", "(4, 3) transposed, dim 0, descending", f_sort_dim0_desc,
            { DISTINCT_T(4, 3) }),
    GC_CASE("sort", "(2, 4, 3) dim 1", f_sort_composite, { DISTINCT(2, 4, 3) }),
    GC_CASE("topk", "(4, 10) k 3", f_topk3, { DISTINCT(4, 10) }),
    GC_CASE("topk", "(5, 4) dim 0, k 2, smallest", f_topk_dim0_smallest, { DISTINCT(5, 4) }),
};
GC_REGISTER(sort_cases);
