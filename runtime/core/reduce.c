/* Reduction plans: self viewed as [outer, inner], where inner runs over the reduced dims.
 *
 * Both lists hold dims fastest first (the reverse of the user's order), skip dims of size 1
 * and merge neighbours that step through memory as one dim. Because reduced dims keep their
 * relative order, the inner index j of an element is its row-major position among the
 * reduced dims (what argmax/argmin report); because kept dims keep theirs, output element o
 * is the o-th element of the contiguous output. */
#include "core/rt_private.h"

#include <stdlib.h>

/* Appends dim d (size, stride) to a fastest-first list, merging it into the previous entry
 * when that one is contiguous inside it. */
static void push_dim(int64_t *sizes, int64_t *strides, int *n, int64_t size, int64_t stride)
{
    if (size == 1) return;
    if (*n > 0 && strides[*n - 1] * sizes[*n - 1] == stride && sizes[*n - 1] != 0 && size != 0) {
        sizes[*n - 1] *= size;
        return;
    }
    sizes[*n] = size;
    strides[*n] = stride;
    (*n)++;
}

int tg__reduce_plan_make(tg_reduce_plan *p, const char *op, const tg_tensor *self,
                         const int64_t *dims, int64_t ndims, bool keepdim)
{
    p->op = op;
    if (!self) return -1;
    int64_t nd = self->ndim;
    bool all = !dims || ndims == 0;
    for (int64_t d = 0; d < TG_MAX_DIMS; d++) p->reduce_dim[d] = all && d < nd;
    if (!all) {
        for (int64_t i = 0; i < ndims; i++) {
            int64_t w = tg__wrap_dim(op, dims[i], nd);
            if (w < 0) return -1;
            if (nd == 0) continue; /* dim 0 / -1 of a scalar: reduce "all" */
            if (p->reduce_dim[w])
                return tg__fail(op, "dim %lld appears multiple times in the list of dims",
                                (long long)w);
            p->reduce_dim[w] = true;
        }
    }
    p->out_ndim = 0;
    p->outer_numel = p->inner_numel = 1;
    p->outer_ndim = p->inner_ndim = 0;
    for (int64_t d = 0; d < nd; d++) {
        if (!p->reduce_dim[d]) p->out_sizes[p->out_ndim++] = self->sizes[d];
        else if (keepdim) p->out_sizes[p->out_ndim++] = 1;
        if (p->reduce_dim[d]) p->inner_numel *= self->sizes[d];
        else p->outer_numel *= self->sizes[d];
    }
    for (int64_t d = nd - 1; d >= 0; d--) {
        if (p->reduce_dim[d])
            push_dim(p->inner_sizes, p->inner_strides, &p->inner_ndim, self->sizes[d],
                     self->strides[d]);
        else
            push_dim(p->outer_sizes, p->outer_strides, &p->outer_ndim, self->sizes[d],
                     self->strides[d]);
    }
    return 0;
}

static int64_t offset_of(int64_t i, const int64_t *sizes, const int64_t *strides, int n)
{
    int64_t off = 0;
    for (int d = 0; d < n; d++) {
        off += (i % sizes[d]) * strides[d];
        i /= sizes[d];
    }
    return off;
}

int64_t tg__reduce_outer_offset(const tg_reduce_plan *p, int64_t o)
{
    return offset_of(o, p->outer_sizes, p->outer_strides, p->outer_ndim);
}

int64_t tg__reduce_inner_offset(const tg_reduce_plan *p, int64_t j)
{
    return offset_of(j, p->inner_sizes, p->inner_strides, p->inner_ndim);
}

typedef struct reduce_ctx {
    const tg_reduce_plan *p;
    tg_reduce_loop loop;
    void *ctx;
    int64_t inner_stride;
    const int64_t *table;
} reduce_ctx;

static void reduce_range(int64_t b, int64_t e, void *arg)
{
    const reduce_ctx *rc = arg;
    const tg_reduce_plan *p = rc->p;
    for (int64_t o = b; o < e; o++)
        rc->loop(o, tg__reduce_outer_offset(p, o), p->inner_numel, rc->inner_stride, rc->table,
                 rc->ctx);
}

int tg__reduce_for_each(const tg_reduce_plan *p, tg_reduce_loop loop, void *ctx)
{
    if (p->outer_numel == 0) return 0;
    reduce_ctx rc = { p, loop, ctx, 0, NULL };
    int64_t *table = NULL;
    if (p->inner_ndim == 1) {
        rc.inner_stride = p->inner_strides[0];
    } else if (p->inner_ndim > 1 && p->inner_numel > 0) {
        table = malloc((size_t)p->inner_numel * sizeof *table);
        if (!table) return tg__fail(p->op, "out of memory building a reduction table");
        for (int64_t j = 0; j < p->inner_numel; j++) table[j] = tg__reduce_inner_offset(p, j);
        rc.table = table;
    }
    int64_t inner = p->inner_numel > 0 ? p->inner_numel : 1;
    int64_t grain = tg__grain_size() / inner;
    tg__parallel_for(p->outer_numel, grain > 0 ? grain : 1, reduce_range, &rc);
    free(table);
    return 0;
}
