/* Argument checks and geometry of the cumulative and structure operators (cumsum, cumprod,
 * flip, roll, repeat, repeat_interleave.Tensor), shared by the CPU kernels
 * (kernels/cpu/cumulative.c, structure.c) and the CUDA kernels (kernels/cuda/cumulative.cu,
 * structure.cu): PyTorch 1.13's messages in PyTorch's order (ReduceOps.cpp's cum ops,
 * TensorTransformations.cpp, TensorShape.cpp's repeat, Repeat.h). Static inline, C and C++.
 * Each check returns 0, or -1 with the error recorded.
 *
 * flip, roll and repeat are one operation here, a gather (tg_gather_map): output element
 * (i_0, ..., i_{n-1}) (row-major, contiguous) reads self at (src(0, i_0), ..., src(n-1,
 * i_{n-1})), where along each output dim d
 *     src(d, i) = n_d - 1 - i          when flip[d]  (flip)
 *     src(d, i) = (i + shift[d]) % n_d  otherwise    (roll: shift = n_d - s mod n_d; repeat:
 *                                                     i runs over repeats * n_d, shift 0)
 * with n_d self's size along d (1, stride 0, for the leading dims repeat adds). */
#ifndef TG_STRUCTURE_CHECKS_H
#define TG_STRUCTURE_CHECKS_H

#include "tg_kutil.h"

#include <string.h>
#include "tg_hd.h"

/* ------------------------------------------------------------------ cumsum / cumprod */

/* The result dtype of cumsum/cumprod (meta_func_cum_ops): dtype when given, else out's dtype
 * when there is an out (in place: self), else int64 for an integral or bool self and self's
 * dtype otherwise. In place (out == self) with a dtype other than self's is PyTorch's
 * "Bad in-place call" error. Returns 0 or -1 + error. */
static inline int tg__cum_result_dtype(const char *op, const tg_tensor *self, tg_dtype dtype,
                                       const tg_tensor *out, tg_dtype *res)
{
    if (out && out == self && dtype != TG_DTYPE_NONE && dtype != self->dtype)
        return tg__fail(op,
                        "Bad in-place call: input tensor dtype %s and output tensor dtype %s "
                        "should match",
                        tg__k_meta_name(self->dtype), tg__k_meta_name(dtype));
    if (dtype != TG_DTYPE_NONE) *res = dtype;
    else if (out) *res = out->dtype;
    else *res = tg_dtype_is_floating(self->dtype) ? self->dtype : TG_INT64;
    return 0;
}

/* cumsum / cumprod's checks on every backend: dim wrapped into *d, the result dtype into *rt.
 * 0, or -1 with the error recorded. */
static inline int tg__cum_check(const char *op, const tg_tensor *self, int64_t dim, tg_dtype dtype,
                                const tg_tensor *out, int64_t *d, tg_dtype *rt)
{
    *d = tg__wrap_dim(op, dim, self->ndim);
    if (*d < 0) return -1;
    return tg__cum_result_dtype(op, self, dtype, out, rt);
}

/* ------------------------------------------------------------------ the gather of flip/roll/repeat */

typedef struct tg_gather_map {
    int64_t ndim;                     /* of the output */
    int64_t sizes[TG_MAX_DIMS];       /* output sizes (the output is contiguous) */
    int64_t src_sizes[TG_MAX_DIMS];   /* self's size along each output dim (1 for added dims) */
    int64_t src_strides[TG_MAX_DIMS]; /* self's strides in elements (0 for added dims) */
    int64_t shift[TG_MAX_DIMS];       /* in [0, src_size) */
    bool flip[TG_MAX_DIMS];
} tg_gather_map;

/* Self's index along output dim d for output index i (see the top of the file). */
static inline TG_HD int64_t tg__gather_src(const tg_gather_map *m, int64_t d, int64_t i)
{
    int64_t n = m->src_sizes[d];
    if (m->flip[d]) return n - 1 - i;
    int64_t j = i + m->shift[d];
    return j < n ? j : j % n;
}

/* The element offset in self of output element `lin` (row-major). */
static inline TG_HD int64_t tg__gather_offset(const tg_gather_map *m, int64_t lin)
{
    int64_t off = 0;
    for (int64_t d = m->ndim - 1; d >= 0; d--) {
        int64_t s = m->sizes[d], q = lin / s, i = lin - q * s;
        lin = q;
        off += tg__gather_src(m, d, i) * m->src_strides[d];
    }
    return off;
}

/* The identity map of self (then flip/roll/repeat change it). */
static inline void tg__gather_identity(tg_gather_map *m, const tg_tensor *self)
{
    memset(m, 0, sizeof *m);
    m->ndim = self->ndim;
    for (int64_t d = 0; d < self->ndim; d++) {
        m->sizes[d] = m->src_sizes[d] = self->sizes[d];
        m->src_strides[d] = self->strides[d];
    }
}

/* flip's dims: each wrapped, none twice (PyTorch's "dim 0 appears multiple times"). */
static inline int tg__flip_map(const char *op, const tg_tensor *self, tg_int_list dims,
                               tg_gather_map *m)
{
    tg__gather_identity(m, self);
    bool seen[TG_MAX_DIMS] = { false };
    for (int64_t k = 0; k < dims.len; k++) {
        int64_t d = tg__wrap_dim(op, dims.data[k], self->ndim);
        if (d < 0) return -1;
        if (seen[d])
            return tg__fail(op, "dim %lld appears multiple times in the list of dims",
                            (long long)d);
        seen[d] = true;
        /* a 0-dim self accepts dim 0 / -1 and has nothing to flip */
        if (self->ndim) m->flip[d] = true;
    }
    return 0;
}

/* roll's checks (roll_common) and map. *flat is set when dims is empty and shifts has one
 * value: the flattened self rolls by shifts[0] (the caller builds that map, on a contiguous
 * self). Otherwise each (shift, dim) pair rolls its dim; rolls along one dim add up. */
static inline int tg__roll_map(const char *op, const tg_tensor *self, tg_int_list shifts,
                               tg_int_list dims, tg_gather_map *m, bool *flat)
{
    *flat = false;
    if (shifts.len == 0) return tg__fail(op, "`shifts` required");
    if (dims.len == 0 && shifts.len == 1) {
        *flat = true;
        return 0;
    }
    if (shifts.len != dims.len)
        return tg__fail(op, "shifts and dimensions must align. shifts: %lld, dims:%lld",
                        (long long)shifts.len, (long long)dims.len);
    if (self->ndim == 0)
        return tg__fail(op, "Dimension specified as %lld but tensor has no dimensions",
                        (long long)dims.data[0]);
    tg__gather_identity(m, self);
    for (int64_t k = 0; k < dims.len; k++) {
        int64_t d = tg__wrap_dim(op, dims.data[k], self->ndim);
        if (d < 0) return -1;
        int64_t n = self->sizes[d];
        if (n == 0) continue;
        /* output i reads input (i - s) mod n = (i + (n - s mod n)) mod n */
        int64_t s = shifts.data[k] % n;
        if (s < 0) s += n;
        m->shift[d] = (m->shift[d] + n - s) % n;
    }
    return 0;
}

/* The map of a flat roll of `numel` contiguous elements by s. */
static inline void tg__roll_flat_map(tg_gather_map *m, int64_t numel, int64_t s)
{
    memset(m, 0, sizeof *m);
    m->ndim = 1;
    m->sizes[0] = m->src_sizes[0] = numel;
    m->src_strides[0] = 1;
    if (numel > 0) {
        s %= numel;
        if (s < 0) s += numel;
        m->shift[0] = (numel - s) % numel;
    }
}

/* repeat's checks and map: the output has repeats.len dims, self's dims aligned with the
 * last ones; output size = repeats[d] * self's size. A negative size is at::empty's error. */
static inline int tg__repeat_map(const char *op, const tg_tensor *self, tg_int_list repeats,
                                 tg_gather_map *m)
{
    if (repeats.len < self->ndim)
        return tg__fail(op, "Number of dimensions of repeat dims can not be smaller than number "
                            "of dimensions of tensor");
    if (repeats.len > TG_MAX_DIMS)
        return tg__fail(op, "repeat: at most %d dims are supported, got %lld", TG_MAX_DIMS,
                        (long long)repeats.len);
    memset(m, 0, sizeof *m);
    m->ndim = repeats.len;
    int64_t lead = repeats.len - self->ndim;
    for (int64_t d = 0; d < repeats.len; d++) {
        int64_t n = d < lead ? 1 : self->sizes[d - lead];
        m->src_sizes[d] = n;
        m->src_strides[d] = d < lead ? 0 : self->strides[d - lead];
        m->sizes[d] = n * repeats.data[d];
    }
    for (int64_t d = 0; d < repeats.len; d++)
        if (m->sizes[d] < 0) {
            char s[256];
            return tg__fail(op, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)m->sizes[d], tg__shape_str(s, sizeof s, m->sizes, m->ndim));
        }
    return 0;
}

/* ------------------------------------------------------------------ repeat_interleave.Tensor */

/* repeats 1-D, int32 or int64 (repeat_interleave_common). */
static inline int tg__repeat_interleave_check(const char *op, const tg_tensor *repeats)
{
    if (repeats->ndim != 1)
        return tg__fail(op, "repeat_interleave only accept 1D vector as repeat");
    if (repeats->dtype != TG_INT64 && repeats->dtype != TG_INT32)
        return tg__fail(op, "\"repeat_interleave_%s\" not implemented for '%s'",
                        repeats->device.type == TG_CUDA ? "cuda" : "cpu",
                        tg__dtype_torch_name(repeats->dtype));
    return 0;
}

/* The total from the host copy of repeats' cumulative sums (n >= 1 of them) and output_size:
 * without output_size every repeat must be >= 0; with it, it must equal the total. */
static inline int tg__repeat_interleave_total(const char *op, const int64_t *repeats,
                                              const int64_t *cum, int64_t n, tg_opt_int output_size,
                                              int64_t *total)
{
    if (tg_is_none_int(output_size)) {
        for (int64_t i = 0; i < n; i++)
            if (repeats[i] < 0) return tg__fail(op, "repeats can not be negative");
        *total = cum[n - 1];
        return 0;
    }
    if (output_size != cum[n - 1])
        return tg__fail(op, "allocated size does not match required size");
    for (int64_t i = 0; i < n; i++)
        if (repeats[i] < 0) return tg__fail(op, "repeats can not be negative");
    *total = output_size;
    return 0;
}

#endif
