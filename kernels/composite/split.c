/* Splitting a tensor into a Tensor[] of views: split_with_sizes, split (equal pieces, the last
 * one shorter), unbind (every index of a dim, the dim removed) and chunk (a number of pieces).
 *
 * split_with_sizes, split and unbind are CompositeExplicitAutograd views: each piece is
 * tg__make_view of self (shared storage and version counter), and the autograd formulas in
 * specs/derivatives.yaml put the pieces' gradients back together (cat, stack). chunk is
 * CompositeImplicitAutograd over split / split_with_sizes. Each returns a tg_tensor_list
 * owning its array and a reference per piece (tg_tensor_list_alloc), or { NULL, 0 } with
 * PyTorch's error message; nothing leaks on error paths. */
#include "tg_kutil.h"
/* The public functions of the operators called here. */
#include "ops/split.h"
#include "ops/split_with_sizes.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/chunk.h"
#include "kernels/split.h"
#include "kernels/split_with_sizes.h"
#include "kernels/unbind.h"

#include <stdio.h>
#include <stdlib.h>

#define NO_LIST ((tg_tensor_list){ NULL, 0 })

/* self narrowed to [start, start + length) along dim d (already wrapped). */
static tg_tensor *narrow_view(tg_tensor *self, int64_t d, int64_t start, int64_t length)
{
    int64_t sizes[TG_MAX_DIMS];
    for (int64_t i = 0; i < self->ndim; i++) sizes[i] = self->sizes[i];
    sizes[d] = length;
    return tg__make_view(self, sizes, self->strides, self->ndim,
                         self->storage_offset + start * self->strides[d]);
}

/* "[2, -1, 4]" (PyTorch prints the list the user passed). */
static const char *ints_text(char *buf, size_t cap, tg_int_list l)
{
    return tg__shape_str(buf, cap, l.data, l.len);
}

/* One view per length of `sizes`, consecutive along d; the lengths are already checked. */
static tg_tensor_list pieces(const char *op, tg_tensor *self, int64_t d, const int64_t *sizes,
                             int64_t n)
{
    tg_tensor **items = tg_tensor_list_alloc(op, n);
    if (!items) return NO_LIST;
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(items[i] = narrow_view(self, d, start, sizes[i])))
            return tg_tensor_list_fail(items, i);
        start += sizes[i];
    }
    return (tg_tensor_list){ items, n };
}

/* self: any shape with at least one dim; split_sizes: non-negative, summing to self.size(dim).
 * Piece i is self[..., s_i : s_i + split_sizes[i], ...] along dim. */
tg_tensor_list tg__composite_split_with_sizes(tg_tensor *self, tg_int_list split_sizes, int64_t dim)
{
    const char *op = "split_with_sizes";
    if (self->ndim == 0)
        return tg__error(op, "split expects at least a 1-dimensional tensor"), NO_LIST;
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NO_LIST;
    int64_t total = 0;
    char buf[512];
    for (int64_t i = 0; i < split_sizes.len; i++) {
        if (split_sizes.data[i] < 0) {
            tg__error(
                op,
                "split_with_sizes expects split_sizes have only non-negative entries, but got "
                "split_sizes=%s",
                ints_text(buf, sizeof buf, split_sizes));
            return NO_LIST;
        }
        total += split_sizes.data[i];
    }
    if (total != self->sizes[d]) {
        tg__error(
            op,
            "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
            "dimension %lld), but got split_sizes=%s",
            (long long)self->sizes[d], (long long)dim, ints_text(buf, sizeof buf, split_sizes));
        return NO_LIST;
    }
    return pieces(op, self, d, split_sizes.data, split_sizes.len);
}

/* Pieces of split_size along dim, the last one shorter when split_size does not divide
 * self.size(dim); one (empty) piece when both are 0, one whole piece when split_size is
 * larger than the dim. */
tg_tensor_list tg__composite_split(tg_tensor *self, int64_t split_size, int64_t dim)
{
    const char *op = "split";
    if (self->ndim == 0)
        return tg__error(op, "split expects at least a 1-dimensional tensor"), NO_LIST;
    if (split_size < 0)
        return tg__error(op, "split expects split_size be non-negative, but got split_size=%lld",
                         (long long)split_size),
               NO_LIST;
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NO_LIST;
    int64_t size = self->sizes[d];
    if (split_size == 0 && size != 0)
        return tg__error(
                   op,
                   "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                   (long long)size),
               NO_LIST;
    int64_t n = split_size == 0 ? 1 : (size + split_size - 1) / split_size;
    if (n < 1) n = 1;
    tg_tensor **items = tg_tensor_list_alloc(op, n);
    if (!items) return NO_LIST;
    for (int64_t i = 0; i < n; i++) {
        int64_t start = i * split_size, len = i == n - 1 ? size - start : split_size;
        if (!(items[i] = narrow_view(self, d, start, len))) return tg_tensor_list_fail(items, i);
    }
    return (tg_tensor_list){ items, n };
}

/* self.size(dim) views self[..., i, ...], each without dim. */
tg_tensor_list tg__composite_unbind(tg_tensor *self, int64_t dim)
{
    const char *op = "unbind";
    if (self->ndim == 0)
        return tg__error(op, "Dimension specified as %lld but tensor has no dimensions",
                         (long long)dim),
               NO_LIST;
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NO_LIST;
    int64_t n = self->sizes[d], sizes[TG_MAX_DIMS], strides[TG_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < self->ndim; i++) {
        if (i == d) continue;
        sizes[k] = self->sizes[i];
        strides[k++] = self->strides[i];
    }
    tg_tensor **items = tg_tensor_list_alloc(op, n);
    if (!items) return NO_LIST;
    for (int64_t i = 0; i < n; i++)
        if (!(items[i] = tg__make_view(self, sizes, strides, k,
                                       self->storage_offset + i * self->strides[d])))
            return tg_tensor_list_fail(items, i);
    return (tg_tensor_list){ items, n };
}

/* At most `chunks` pieces of ceil(size / chunks) along dim (fewer when they run out); an
 * empty dim gives `chunks` empty pieces. Implicit composite: autograd flows through split. */
tg_tensor_list tg__composite_chunk(tg_tensor *self, int64_t chunks, int64_t dim)
{
    const char *op = "chunk";
    if (self->ndim == 0)
        return tg__error(op, "chunk expects at least a 1-dimensional tensor"), NO_LIST;
    if (chunks <= 0)
        return tg__error(op, "chunk expects `chunks` to be greater than 0, got: %lld",
                         (long long)chunks),
               NO_LIST;
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NO_LIST;
    int64_t size = self->sizes[d], split_size = (size + chunks - 1) / chunks;
    if (split_size != 0 || size != 0) return tg_split(self, split_size, .dim = d);
    /* split would give one empty piece: PyTorch keeps the number of chunks. */
    int64_t *zeros = calloc((size_t)chunks, sizeof *zeros);
    if (!zeros) return tg__error(op, "out of memory"), NO_LIST;
    tg_tensor_list r =
        tg_split_with_sizes(self, ((tg_int_list){ .len = chunks, .data = zeros }), .dim = d);
    free(zeros);
    return r;
}
