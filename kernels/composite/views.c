/* Views, shape composites and reductions/products built from other operators.
 *
 * The view operators (as_strided, view, transpose, permute, squeeze, unsqueeze, expand, slice,
 * select) are CompositeExplicitAutograd: they only compute a new geometry and make a view with
 * tg__make_view, which shares self's storage and version counter. The others
 * (CompositeImplicitAutograd: reshape, t, flatten, contiguous, stack, to, matmul, prod, max,
 * min, softmax, log_softmax) call public tg_* operators, so dispatch and autograd flow through
 * them. Every function returns a new reference, or NULL with an error recorded; intermediates
 * are released on every path. */
#include "tg_kutil.h"
/* The public functions of the operators called here. */
#include "ops/_log_softmax.h"
#include "ops/_softmax.h"
#include "ops/_to_copy.h"
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/bmm.h"
#include "ops/cat.h"
#include "ops/clone.h"
#include "ops/copy.h"
#include "ops/expand.h"
#include "ops/matmul.h"
#include "ops/mm.h"
#include "ops/prod.h"
#include "ops/reshape.h"
#include "ops/squeeze.h"
#include "ops/to.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_to_copy.h"
#include "kernels/as_strided.h"
#include "kernels/clone.h"
#include "kernels/contiguous.h"
#include "kernels/expand.h"
#include "kernels/flatten.h"
#include "kernels/log_softmax.h"
#include "kernels/matmul.h"
#include "kernels/max.h"
#include "kernels/min.h"
#include "kernels/permute.h"
#include "kernels/prod.h"
#include "kernels/reshape.h"
#include "kernels/select.h"
#include "kernels/slice.h"
#include "kernels/softmax.h"
#include "kernels/squeeze.h"
#include "kernels/stack.h"
#include "kernels/t.h"
#include "kernels/to.h"
#include "kernels/transpose.h"
#include "kernels/unsqueeze.h"
#include "kernels/view.h"
#include "composite_util.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ geometry helpers */

/* PyTorch's infer_size: at most one -1, replaced so that the product is numel. */
static int infer_size(const char *op, tg_int_list shape, int64_t numel, int64_t *out)
{
    int64_t prod = 1, infer = -1;
    if (shape.len > TG_MAX_DIMS)
        return tg__fail(op, "too many dimensions (%lld)", (long long)shape.len);
    for (int64_t i = 0; i < shape.len; i++) {
        out[i] = shape.data[i];
        if (shape.data[i] == -1) {
            if (infer >= 0) return tg__fail(op, "only one dimension can be inferred");
            infer = i;
        } else if (shape.data[i] >= 0) {
            prod *= shape.data[i];
        } else {
            return tg__fail(op, "invalid shape dimension %lld", (long long)shape.data[i]);
        }
    }
    char buf[256];
    if (infer >= 0 && prod == 0) {
        if (numel == 0)
            return tg__fail(op,
                            "cannot reshape tensor of 0 elements into shape %s because the "
                            "unspecified dimension size -1 can be any value and is ambiguous",
                            tg__shape_str(buf, sizeof buf, shape.data, shape.len));
        return tg__fail(op, "shape '%s' is invalid for input of size %lld",
                        tg__shape_str(buf, sizeof buf, shape.data, shape.len), (long long)numel);
    }
    bool ok = infer >= 0 ? numel % prod == 0 : numel == prod;
    if (!ok)
        return tg__fail(op, "shape '%s' is invalid for input of size %lld",
                        tg__shape_str(buf, sizeof buf, shape.data, shape.len), (long long)numel);
    if (infer >= 0) out[infer] = numel / prod;
    return 0;
}

/* PyTorch's view rule (computeStride): the strides of `newshape` over self's memory, or false
 * when some new dim would span two non-contiguous chunks of the old layout. */
static bool compute_stride(const tg_tensor *t, const int64_t *newshape, int64_t nd, int64_t *ns)
{
    int64_t numel = tg__numel(t);
    if (t->ndim == 0) {
        for (int64_t d = 0; d < nd; d++) ns[d] = 1;
        return true;
    }
    if (numel == 0) {
        if (nd == t->ndim && memcmp(newshape, t->sizes, sizeof(int64_t) * (size_t)nd) == 0) {
            memcpy(ns, t->strides, sizeof(int64_t) * (size_t)nd);
            return true;
        }
        for (int64_t d = nd - 1; d >= 0; d--)
            ns[d] = d == nd - 1 ? 1 : (newshape[d + 1] > 1 ? newshape[d + 1] : 1) * ns[d + 1];
        return true;
    }
    int64_t view_d = nd - 1, chunk_base = t->strides[t->ndim - 1], tnumel = 1, vnumel = 1;
    for (int64_t td = t->ndim - 1; td >= 0; td--) {
        tnumel *= t->sizes[td];
        if (td == 0 || (t->sizes[td - 1] != 1 && t->strides[td - 1] != tnumel * chunk_base)) {
            while (view_d >= 0 && (vnumel < tnumel || newshape[view_d] == 1)) {
                ns[view_d] = vnumel * chunk_base;
                vnumel *= newshape[view_d];
                view_d--;
            }
            if (vnumel != tnumel) return false;
            if (td > 0) {
                chunk_base = t->strides[td - 1];
                tnumel = 1;
                vnumel = 1;
            }
        }
    }
    return view_d == -1;
}

static tg_tensor *view_geom(const tg_tensor *self, const int64_t *sizes, const int64_t *strides,
                            int64_t nd)
{
    return tg__make_view(self, sizes, strides, nd, self->storage_offset);
}

/* ------------------------------------------------------------------ views */

/* A view of self's storage with the given geometry (elements), checked against the storage. */
tg_tensor *tg__composite_as_strided(tg_tensor *self, tg_int_list size, tg_int_list stride,
                                    tg_opt_int storage_offset)
{
    char a[256], b[256];
    if (size.len != stride.len)
        return tg__error("as_strided", "mismatch in length of strides and shape");
    if (size.len > TG_MAX_DIMS) return tg__error("as_strided", "too many dimensions");
    for (int64_t i = 0; i < size.len; i++) {
        if (stride.data[i] < 0)
            return tg__error(
                "as_strided",
                "as_strided: Negative strides are not supported at the moment, got strides: %s",
                tg__shape_str(a, sizeof a, stride.data, stride.len));
        if (size.data[i] < 0)
            return tg__error(
                "as_strided", "Trying to create tensor with negative dimension %lld: %s",
                (long long)size.data[i], tg__shape_str(a, sizeof a, size.data, size.len));
    }
    int64_t off = tg_is_none_int(storage_offset) ? self->storage_offset : storage_offset;
    if (off < 0)
        return tg__error("as_strided", "Tensor: invalid storage offset %lld", (long long)off);
    int64_t need = 1, numel = 1;
    for (int64_t i = 0; i < size.len; i++) {
        numel *= size.data[i];
        need += (size.data[i] - 1) * stride.data[i];
    }
    size_t es = tg_dtype_size(self->dtype);
    int64_t bytes = numel == 0 ? 0 : (need + off) * (int64_t)es;
    if (bytes > (int64_t)self->storage->nbytes)
        return tg__error(
            "as_strided",
            "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %zu "
            "requiring a storage size of %lld are out of bounds for storage of size %zu",
            tg__shape_str(a, sizeof a, size.data, size.len),
            tg__shape_str(b, sizeof b, stride.data, stride.len), (long long)off, es,
            (long long)bytes, self->storage->nbytes);
    return tg__make_view(self, size.data, stride.data, size.len, off);
}

/* A view of self with `size` (one -1 inferred); self's strides must allow it. */
tg_tensor *tg__composite_view(tg_tensor *self, tg_int_list size)
{
    int64_t shape[TG_MAX_DIMS], strides[TG_MAX_DIMS];
    if (infer_size("view", size, tg__numel(self), shape) != 0) return NULL;
    if (!compute_stride(self, shape, size.len, strides))
        return tg__error(
            "view", "view size is not compatible with input tensor's size and stride (at least one "
                    "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    return view_geom(self, shape, strides, size.len);
}

/* self with dims dim0 and dim1 swapped (a view). */
tg_tensor *tg__composite_transpose(tg_tensor *self, int64_t dim0, int64_t dim1)
{
    int64_t d0 = tg__wrap_dim("transpose", dim0, self->ndim);
    if (d0 < 0) return NULL;
    int64_t d1 = tg__wrap_dim("transpose", dim1, self->ndim);
    if (d1 < 0) return NULL;
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS];
    memcpy(sz, self->sizes, sizeof sz);
    memcpy(st, self->strides, sizeof st);
    if (self->ndim > 0) {
        sz[d0] = self->sizes[d1];
        sz[d1] = self->sizes[d0];
        st[d0] = self->strides[d1];
        st[d1] = self->strides[d0];
    }
    return view_geom(self, sz, st, self->ndim);
}

/* Dims of self reordered: result dim i is self dim dims[i]. */
tg_tensor *tg__composite_permute(tg_tensor *self, tg_int_list dims)
{
    if (dims.len != self->ndim)
        return tg__error(
            "permute",
            "permute(sparse_coo): number of dimensions in the tensor input does not match "
            "the length of the desired ordering of dimensions i.e. input.dim() = %lld is not "
            "equal to len(dims) = %lld",
            (long long)self->ndim, (long long)dims.len);
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS];
    bool seen[TG_MAX_DIMS] = { false };
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d = tg__wrap_dim("permute", dims.data[i], self->ndim);
        if (d < 0) return NULL;
        if (seen[d]) return tg__error("permute", "permute(): duplicate dims are not allowed.");
        seen[d] = true;
        sz[i] = self->sizes[d];
        st[i] = self->strides[d];
    }
    return view_geom(self, sz, st, self->ndim);
}

/* self without its size-1 dims. */
tg_tensor *tg__composite_squeeze(tg_tensor *self)
{
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS], n = 0;
    for (int64_t d = 0; d < self->ndim; d++)
        if (self->sizes[d] != 1) {
            sz[n] = self->sizes[d];
            st[n] = self->strides[d];
            n++;
        }
    return view_geom(self, sz, st, n);
}

/* self without dim `dim` when its size is 1, else a plain view of self. */
tg_tensor *tg__composite_squeeze_dim(tg_tensor *self, int64_t dim)
{
    int64_t d = tg__wrap_dim("squeeze", dim, self->ndim);
    if (d < 0) return NULL;
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS], n = 0;
    for (int64_t k = 0; k < self->ndim; k++) {
        if (k == d && self->sizes[k] == 1) continue;
        sz[n] = self->sizes[k];
        st[n] = self->strides[k];
        n++;
    }
    return view_geom(self, sz, st, n);
}

/* self with a size-1 dim inserted at `dim` (in [-ndim-1, ndim]). */
tg_tensor *tg__composite_unsqueeze(tg_tensor *self, int64_t dim)
{
    int64_t d = tg__wrap_dim("unsqueeze", dim, self->ndim + 1);
    if (d < 0) return NULL;
    if (self->ndim + 1 > TG_MAX_DIMS) return tg__error("unsqueeze", "too many dimensions");
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS], n = 0;
    for (int64_t k = 0; k <= self->ndim; k++) {
        if (k == d) {
            sz[n] = 1;
            st[n] = d >= self->ndim ? 1 : self->sizes[d] * self->strides[d];
            n++;
        }
        if (k < self->ndim) {
            sz[n] = self->sizes[k];
            st[n] = self->strides[k];
            n++;
        }
    }
    return view_geom(self, sz, st, n);
}

/* self broadcast to `size` (-1 keeps a dim; new leading dims and size-1 dims get stride 0). */
tg_tensor *tg__composite_expand(tg_tensor *self, tg_int_list size, bool implicit)
{
    (void)implicit;
    char a[256], b[256];
    if (size.len < self->ndim)
        return tg__error(
            "expand",
            "expand(torch.%sTensor{%s}, size=%s): the number of sizes provided (%lld) must be "
            "greater or equal to the number of dimensions in the tensor (%lld)",
            tg__dtype_torch_name(self->dtype), tg__shape_str(a, sizeof a, self->sizes, self->ndim),
            tg__shape_str(b, sizeof b, size.data, size.len), (long long)size.len,
            (long long)self->ndim);
    if (size.len > TG_MAX_DIMS) return tg__error("expand", "too many dimensions");
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS];
    int64_t lead = size.len - self->ndim;
    for (int64_t i = size.len - 1; i >= 0; i--) {
        int64_t want = size.data[i];
        if (i < lead) {
            if (want < 0)
                return tg__error(
                    "expand",
                    "The expanded size of the tensor (%lld) isn't allowed in a leading, "
                    "non-existing dimension %lld",
                    (long long)want, (long long)i);
            sz[i] = want;
            st[i] = 0;
            continue;
        }
        int64_t have = self->sizes[i - lead];
        if (want == -1) want = have;
        if (have == want) {
            sz[i] = have;
            st[i] = self->strides[i - lead];
            continue;
        }
        if (have != 1)
            return tg__error(
                "expand",
                "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                "non-singleton dimension %lld.  Target sizes: %s.  Tensor sizes: %s",
                (long long)want, (long long)have, (long long)i,
                tg__shape_str(a, sizeof a, size.data, size.len),
                tg__shape_str(b, sizeof b, self->sizes, self->ndim));
        if (want < 0)
            return tg__error("expand", "Trying to create tensor with negative dimension %lld: %s",
                             (long long)want, tg__shape_str(a, sizeof a, size.data, size.len));
        sz[i] = want;
        st[i] = 0;
    }
    return view_geom(self, sz, st, size.len);
}

/* self[start:end:step] along dim; start/end negative count from the end and are clamped. */
tg_tensor *tg__composite_slice(tg_tensor *self, int64_t dim, tg_opt_int start, tg_opt_int end,
                               int64_t step)
{
    if (self->ndim == 0) return tg__error("slice", "slice() cannot be applied to a 0-dim tensor.");
    int64_t d = tg__wrap_dim("slice", dim, self->ndim);
    if (d < 0) return NULL;
    if (step <= 0) return tg__error("slice", "slice step must be positive");
    int64_t n = self->sizes[d];
    int64_t s = tg_is_none_int(start) ? 0 : start, e = tg_is_none_int(end) ? INT64_MAX : end;
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (s < 0) s = 0;
    else if (s > n) s = n;
    if (e < s) e = s;
    else if (e > n) e = n;
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS];
    memcpy(sz, self->sizes, sizeof sz);
    memcpy(st, self->strides, sizeof st);
    sz[d] = (e - s + step - 1) / step;
    st[d] = self->strides[d] * step;
    return tg__make_view(self, sz, st, self->ndim, self->storage_offset + s * self->strides[d]);
}

/* self[..., index, ...] at dim: one dim fewer. */
tg_tensor *tg__composite_select(tg_tensor *self, int64_t dim, int64_t index)
{
    if (self->ndim == 0)
        return tg__error("select", "select() cannot be applied to a 0-dim tensor.");
    int64_t d = tg__wrap_dim("select", dim, self->ndim);
    if (d < 0) return NULL;
    int64_t n = self->sizes[d];
    if (index < -n || index >= n) {
        char a[256];
        return tg__error(
            "select", "select(): index %lld out of range for tensor of size %s at dimension %lld",
            (long long)index, tg__shape_str(a, sizeof a, self->sizes, self->ndim), (long long)dim);
    }
    if (index < 0) index += n;
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < self->ndim; i++)
        if (i != d) {
            sz[k] = self->sizes[i];
            st[k] = self->strides[i];
            k++;
        }
    return tg__make_view(self, sz, st, k, self->storage_offset + index * self->strides[d]);
}

/* ------------------------------------------------------------------ shape composites */

/* A view of self with `shape` when the strides allow it, else a contiguous copy viewed so. */
tg_tensor *tg__composite_reshape(tg_tensor *self, tg_int_list shape)
{
    int64_t sz[TG_MAX_DIMS], st[TG_MAX_DIMS];
    if (infer_size("reshape", shape, tg__numel(self), sz) != 0) return NULL;
    tg_int_list l = { .len = shape.len, .data = sz };
    if (compute_stride(self, sz, shape.len, st)) return tg_view(self, l);
    tg_tensor *c = tg_clone(self, .memory_format = TG_CONTIGUOUS_FORMAT);
    if (!c) return NULL;
    tg_tensor *r = tg_view(c, l);
    tg_release(c);
    return r;
}

/* Transpose of a matrix; 0-D and 1-D tensors are returned as views unchanged. */
tg_tensor *tg__composite_t(tg_tensor *self)
{
    if (self->ndim > 2)
        return tg__error("t", "t() expects a tensor with <= 2 dimensions, but self is %lldD",
                         (long long)self->ndim);
    return tg_transpose(self, 0, self->ndim < 2 ? 0 : 1);
}

/* Dims start_dim..end_dim merged into one. */
tg_tensor *tg__composite_flatten(tg_tensor *self, int64_t start_dim, int64_t end_dim)
{
    if (self->ndim == 0) return tg_reshape(self, TG_INTS(1));
    int64_t s = tg__wrap_dim("flatten", start_dim, self->ndim);
    if (s < 0) return NULL;
    int64_t e = tg__wrap_dim("flatten", end_dim, self->ndim);
    if (e < 0) return NULL;
    if (s > e)
        return tg__error("flatten",
                         "flatten() has invalid args: start_dim cannot come after end_dim");
    if (s == e) return tg_retain(self);
    int64_t sz[TG_MAX_DIMS], n = 0, m = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (d < s || d > e) {
            sz[n++] = self->sizes[d];
            continue;
        }
        m *= self->sizes[d];
        if (d == e) sz[n++] = m;
    }
    return tg_reshape(self, ((tg_int_list){ .len = n, .data = sz }));
}

/* self when already contiguous (a new reference), else a contiguous copy. */
tg_tensor *tg__composite_contiguous(tg_tensor *self, tg_memory_format memory_format)
{
    if (memory_format != TG_CONTIGUOUS_FORMAT && memory_format != TG_PRESERVE_FORMAT)
        return tg__error("contiguous", "only contiguous_format is supported");
    if (tg__is_contiguous(self)) return tg_retain(self);
    return tg_clone(self, .memory_format = TG_CONTIGUOUS_FORMAT);
}

/* A contiguous copy of self (every memory format gives the row-major layout). */
tg_tensor *tg__composite_clone(tg_tensor *self, tg_memory_format memory_format)
{
    (void)memory_format;
    tg_tensor *r = tg__empty_like("clone", self, self->dtype);
    if (!r) return NULL;
    return tg__then(r, tg_copy_(r, self)); /* copy_ returns another reference to r */
}

/* tensors (equal shapes) joined along a new dim. */
static tg_tensor **unsqueeze_all(const char *op, tg_tensor_list tensors, int64_t dim, int64_t *pd)
{
    if (tensors.len == 0) {
        tg__error(op, "stack expects a non-empty TensorList");
        return NULL;
    }
    const tg_tensor *t0 = tensors.data[0];
    for (int64_t i = 1; i < tensors.len; i++) {
        const tg_tensor *t = tensors.data[i];
        if (t->ndim != t0->ndim ||
            memcmp(t->sizes, t0->sizes, sizeof(int64_t) * (size_t)t0->ndim) != 0) {
            char a[256], b[256];
            tg__error(
                op,
                "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %lld",
                tg__shape_str(a, sizeof a, t0->sizes, t0->ndim),
                tg__shape_str(b, sizeof b, t->sizes, t->ndim), (long long)i);
            return NULL;
        }
    }
    int64_t d = tg__wrap_dim(op, dim, t0->ndim + 1);
    if (d < 0) return NULL;
    *pd = d;
    tg_tensor **u = calloc((size_t)tensors.len, sizeof *u);
    if (!u) {
        tg__error(op, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < tensors.len; i++) {
        u[i] = tg_unsqueeze(tensors.data[i], d);
        if (!u[i]) {
            for (int64_t k = 0; k < i; k++) tg_release(u[k]);
            free(u);
            return NULL;
        }
    }
    return u;
}

static void release_all(tg_tensor **u, int64_t n)
{
    for (int64_t i = 0; i < n; i++) tg_release(u[i]);
    free(u);
}

tg_tensor *tg__composite_stack(tg_tensor_list tensors, int64_t dim)
{
    int64_t d;
    tg_tensor **u = unsqueeze_all("stack", tensors, dim, &d);
    if (!u) return NULL;
    tg_tensor *r = tg_cat(((tg_tensor_list){ u, tensors.len }), .dim = d);
    release_all(u, tensors.len);
    return r;
}

tg_tensor *tg__composite_stack_out(tg_tensor_list tensors, int64_t dim, tg_tensor *out)
{
    int64_t d;
    tg_tensor **u = unsqueeze_all("stack", tensors, dim, &d);
    if (!u) return NULL;
    tg_tensor *r = tg_cat_out(((tg_tensor_list){ u, tensors.len }), out, .dim = d);
    release_all(u, tensors.len);
    return r;
}

/* ------------------------------------------------------------------ conversions */

/* self itself when it already has dtype and no copy is asked for, else a converted copy. */
tg_tensor *tg__composite_to_dtype(tg_tensor *self, tg_dtype dtype, bool non_blocking, bool copy,
                                  tg_memory_format memory_format)
{
    (void)non_blocking;
    (void)memory_format;
    if (dtype == self->dtype && !copy) return tg_retain(self);
    return tg__to_copy(self, .dtype = dtype);
}

/* self on `device` (and dtype, when given): self itself when nothing changes and no copy is
 * asked for, else _to_copy (which autograd differentiates back to self's device). */
tg_tensor *tg__composite_to_device(tg_tensor *self, tg_device device, tg_dtype dtype,
                                   bool non_blocking, bool copy, tg_memory_format memory_format)
{
    (void)memory_format;
    if (device.type == TG_CUDA && device.index < 0) device.index = 0;
    if (device.type == TG_CPU) device.index = 0;
    tg_dtype dt = dtype == TG_DTYPE_NONE ? self->dtype : dtype;
    if (!copy && dt == self->dtype && device.type == self->device.type &&
        device.index == self->device.index)
        return tg_retain(self);
    return tg__to_copy(self, .dtype = dt, .device = device, .non_blocking = non_blocking);
}

/* A new contiguous tensor with self's values converted to dtype (default: self's), on device
 * (default: self's). */
tg_tensor *tg__composite_to_copy(tg_tensor *self, tg_dtype dtype, tg_layout layout,
                                 tg_device device, tg_opt_bool pin_memory, bool non_blocking,
                                 tg_memory_format memory_format)
{
    (void)layout;
    (void)pin_memory;
    (void)non_blocking;
    (void)memory_format;
    tg_device dev = device.type == TG_DEVICE_NONE ? self->device : device;
    if (dev.type == TG_CUDA && dev.index < 0) dev.index = 0; /* "cuda": device 0 */
    if (dev.type == TG_CPU) dev.index = 0;
    /* On another device the copy_ below moves the bytes (tg__copy_into) and converts there. */
    tg_tensor *r = tg__empty("_to_copy", self->sizes, self->ndim,
                             dtype == TG_DTYPE_NONE ? self->dtype : dtype, dev);
    if (!r) return NULL;
    return tg__then(r, tg_copy_(r, self)); /* copy_ returns another reference to r */
}

/* ------------------------------------------------------------------ matmul */

/* Drops the dims that matmul added for 1-D operands. `r` is consumed. */
static tg_tensor *squeeze_added(tg_tensor *r, bool drop_row, bool drop_col)
{
    tg_tensor *t = r;
    if (t && drop_col) {
        tg_tensor *u = tg_squeeze_dim(t, -1);
        tg_release(t);
        t = u;
    }
    if (t && drop_row) {
        tg_tensor *u = tg_squeeze_dim(t, -1 - (drop_col ? 0 : 1));
        tg_release(t);
        t = u;
    }
    return t;
}

/* Broadcast batched product: a is (..., n, m), b is (..., m, p), both at least 2-D. */
static tg_tensor *matmul_batched(tg_tensor *a, tg_tensor *b)
{
    int64_t na = a->ndim - 2, nb = b->ndim - 2, nbatch = na > nb ? na : nb;
    int64_t batch[TG_MAX_DIMS], B = 1;
    for (int64_t i = 0; i < nbatch; i++) {
        int64_t ia = i - (nbatch - na), ib = i - (nbatch - nb);
        int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return tg__error(
                "matmul",
                "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                "non-singleton dimension %lld",
                (long long)sa, (long long)sb, (long long)i);
        batch[i] = sa == 1 ? sb : sa;
        B *= batch[i];
    }
    int64_t n = a->sizes[a->ndim - 2], m = a->sizes[a->ndim - 1];
    int64_t m2 = b->sizes[b->ndim - 2], p = b->sizes[b->ndim - 1];
    int64_t ea[TG_MAX_DIMS], eb[TG_MAX_DIMS];
    memcpy(ea, batch, sizeof(int64_t) * (size_t)nbatch);
    memcpy(eb, batch, sizeof(int64_t) * (size_t)nbatch);
    ea[nbatch] = n;
    ea[nbatch + 1] = m;
    eb[nbatch] = m2;
    eb[nbatch + 1] = p;
    tg_tensor *xa = tg_expand(a, ((tg_int_list){ .len = nbatch + 2, .data = ea }));
    tg_tensor *xb = xa ? tg_expand(b, ((tg_int_list){ .len = nbatch + 2, .data = eb })) : NULL;
    tg_tensor *ra = xb ? tg_reshape(xa, TG_INTS(B, n, m)) : NULL;
    tg_tensor *rb = ra ? tg_reshape(xb, TG_INTS(B, m2, p)) : NULL;
    tg_tensor *c = rb ? tg_bmm(ra, rb) : NULL;
    tg_tensor *r = NULL;
    if (c) {
        batch[nbatch] = n;
        batch[nbatch + 1] = p;
        r = tg_view(c, ((tg_int_list){ .len = nbatch + 2, .data = batch }));
    }
    tg_release(xa);
    tg_release(xb);
    tg_release(ra);
    tg_release(rb);
    tg_release(c);
    return r;
}

/* PyTorch's matmul: 1-D x 1-D dot, 2-D x 2-D mm, 1-D operands get a dim added (and removed
 * from the result), (..., n, m) x 2-D folds the batch into the rows of one mm, anything else
 * broadcasts the batch dims and uses bmm. */
tg_tensor *tg__composite_matmul(tg_tensor *self, tg_tensor *other)
{
    int64_t d1 = self->ndim, d2 = other->ndim;
    if (d1 == 0 || d2 == 0)
        return tg__error(
            "matmul",
            "both arguments to matmul need to be at least 1D, but they are %lldD and %lldD",
            (long long)d1, (long long)d2);
    if (d1 == 1 && d2 == 1 && self->sizes[0] != other->sizes[0])
        return tg__error(
            "matmul",
            "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same "
            "number of elements, but got %lld and %lld elements respectively",
            (long long)self->sizes[0], (long long)other->sizes[0], (long long)self->sizes[0],
            (long long)other->sizes[0]);
    tg_tensor *a = d1 == 1 ? tg_unsqueeze(self, 0) : tg_retain(self);
    tg_tensor *b = d2 == 1 ? tg_unsqueeze(other, 1) : tg_retain(other);
    tg_tensor *r = NULL;
    if (a && b) {
        if (a->ndim == 2 && b->ndim == 2) {
            r = tg_mm(a, b);
        } else if (b->ndim == 2) { /* fold the batch of a into mm's rows */
            int64_t m = a->sizes[a->ndim - 1], p = b->sizes[1];
            tg_tensor *f = tg_reshape(a, TG_INTS(-1, m));
            tg_tensor *c = f ? tg_mm(f, b) : NULL;
            if (c) {
                int64_t shape[TG_MAX_DIMS];
                memcpy(shape, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
                shape[a->ndim - 1] = p;
                r = tg_view(c, ((tg_int_list){ .len = a->ndim, .data = shape }));
            }
            tg_release(f);
            tg_release(c);
        } else {
            r = matmul_batched(a, b);
        }
    }
    tg_release(a);
    tg_release(b);
    return squeeze_added(r, d1 == 1, d2 == 1);
}

tg_tensor *tg__composite_matmul_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    tg_tensor *r = tg_matmul(self, other);
    if (!r) return NULL;
    tg_tensor *o = tg_copy_to_out("matmul", out, r);
    tg_release(r);
    return o;
}

/* ------------------------------------------------------------------ reductions built on others */

/* Product of all elements (0-dim result). */
tg_tensor *tg__composite_prod(tg_tensor *self, tg_dtype dtype)
{
    tg_tensor *f = tg_reshape(self, TG_INTS(-1));
    if (!f) return NULL;
    tg_tensor *r = tg_prod_dim(f, 0, .dtype = dtype);
    tg_release(f);
    return r;
}

static tg_tensor *full_extreme(const char *op, tg_tensor *self, bool mx)
{
    if (tg__numel(self) == 0)
        return tg__error(
            op,
            "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.",
            op);
    return mx ? tg_amax(self) : tg_amin(self);
}

tg_tensor *tg__composite_max(tg_tensor *self) { return full_extreme("max", self, true); }
tg_tensor *tg__composite_min(tg_tensor *self) { return full_extreme("min", self, false); }

/* softmax / log_softmax: with dtype, self is converted first. */
static tg_tensor *softmax_dtype(tg_tensor *self, int64_t dim, tg_dtype dtype, bool lg)
{
    tg_tensor *x = dtype == TG_DTYPE_NONE ? tg_retain(self) : tg_to(self, dtype);
    if (!x) return NULL;
    tg_tensor *r = lg ? tg__log_softmax(x, dim, false) : tg__softmax(x, dim, false);
    tg_release(x);
    return r;
}

tg_tensor *tg__composite_softmax(tg_tensor *self, int64_t dim, tg_dtype dtype)
{
    return softmax_dtype(self, dim, dtype, false);
}

tg_tensor *tg__composite_log_softmax(tg_tensor *self, int64_t dim, tg_dtype dtype)
{
    return softmax_dtype(self, dim, dtype, true);
}
