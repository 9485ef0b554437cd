/* sort and argsort: sort.stable (kernels/cpu/sort.c, kernels/cuda/sort.cu), which is always
 * stable here, so stable=False orders equal elements as stable=True does. */
#include "kernels/argsort.h"
#include "kernels/sort.h"
#include "ops/sort.h"

tg_values_indices tg__composite_sort(tg_tensor *self, int64_t dim, bool descending)
{
    return tg_sort_stable(self, false, .dim = dim, .descending = descending);
}

/* sort's indices; its values are released. */
tg_tensor *tg__composite_argsort(tg_tensor *self, int64_t dim, bool descending)
{
    tg_values_indices r = tg_sort(self, .dim = dim, .descending = descending);
    tg_release(r.values);
    return r.indices;
}
