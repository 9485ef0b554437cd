/* The host-side plan of advanced indexing (index.Tensor, index_put_), shared by the CPU kernels
 * (kernels/cpu/advanced_index.c) and the CUDA kernels (kernels/cuda/advanced_index.cu), with
 * PyTorch 1.13's checks and messages (aten/src/ATen/native/IndexingUtils.h,
 * TensorAdvancedIndexing.cpp). Static inline, C and C++.
 *
 * self[indices] is laid out as three nested ranges: A positions of the self dims placed before
 * the index block, P positions of the broadcast index shape, B positions of the self dims
 * after it. Element (a, p, b) of the result (row-major [A, P, B], i.e. the result's shape
 * flattened in that order) is self's element at aoff[a] + poff[p] + boff[b] (offsets in
 * elements from self's first element). When the indexed dims are adjacent, A covers the
 * non-indexed dims before them and B those after; otherwise the index shape goes first (A = 1)
 * and B covers every non-indexed dim (numpy's rule).
 *
 * Index values are read on the host (device indices and masks are copied back first), wrapped
 * when negative and bounds-checked while poff is built: nothing is read or written with a bad
 * index on either device. Bool / uint8 masks become the coordinates of their nonzero elements
 * (tg__nonzero_host), one index column per mask dim.
 *
 * Host code, compiled once (advanced_index.c); C and C++. */
#ifndef TG_ADVANCED_INDEX_H
#define TG_ADVANCED_INDEX_H

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_adv_plan {
    int64_t A, P, B;
    int64_t *buf;                /* malloc'd: aoff (A), poff (P), boff (B), one block */
    int64_t *aoff, *poff, *boff; /* into buf */
    bool b_unit;                 /* boff[b] == b: the after dims are one contiguous run */
    int64_t ndim;                /* the result's shape */
    int64_t sizes[TG_MAX_DIMS];
} tg_adv_plan;

/* Builds the plan of self[indices]; 0, or -1 with the error recorded (nothing allocated). */
int tg__adv_plan_build(const char *op, const tg_tensor *self, tg_tensor_list indices,
                       tg_adv_plan *pl);
void tg__adv_plan_free(tg_adv_plan *pl);

/* index_put_'s values: same dtype as self (PyTorch's check), broadcastable to the indexing
 * result's shape; returns a contiguous copy of values expanded to that shape, on self's
 * device, in the plan's [A, P, B] order (a new reference; NULL + error). */
tg_tensor *tg__adv_values(const char *op, const tg_tensor *self, const tg_tensor *values,
                          const tg_adv_plan *pl);

/* The checks index_put_ shares on both devices: self written must not alias values. */
int tg__adv_put_check(const char *op, const tg_tensor *self, const tg_tensor *values);

#ifdef __cplusplus
}
#endif

#endif
