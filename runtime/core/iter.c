/* The elementwise iteration engine (PyTorch's TensorIterator is the model).
 *
 * tg__iter_build turns (outputs, inputs) into one iteration space:
 *   1. devices agree (a CPU zero-dim tensor may join a CUDA iteration);
 *   2. the broadcast shape (inputs, plus outputs written in place);
 *   3. the computation dtype (flags) and the dtype of allocated outputs;
 *   4. outputs: allocated (contiguous), or checked (shape, castability, no internal overlap)
 *      and, when their dtype differs, replaced by a temporary copied back at finish;
 *   5. inputs of another dtype converted: one-element inputs into a 16-byte buffer inside the
 *      tg_iter (no allocation: the common `tensor + scalar` case), others into temporaries;
 *   6. byte strides in the broadcast shape (0 along broadcast dims), dims reversed to fastest
 *      first, sorted by the operands' strides, then coalesced, so a contiguous problem of any
 *      rank becomes one dim and the kernel gets one long inner loop per thread.
 * Everything is on the caller's stack; a one-element problem costs no allocation besides the
 * output tensor. */
#include "core/rt_private.h"

#include <stdio.h>
#include <string.h>

static int64_t elem_size(tg_dtype t) { return tg__dtype_sizes[t]; }

static const char *device_str(tg_device d, char *buf, size_t cap)
{
    if (d.type == TG_CPU) snprintf(buf, cap, "cpu");
    else snprintf(buf, cap, "%s:%d", tg__device_type_name((tg_device_type)d.type), d.index);
    return buf;
}

/* The iteration's device: the first operand that is not a CPU zero-dim tensor, else CPU.
 * Every other operand must be on it, except CPU zero-dim tensors (scalars travel as values). */
static int check_one_device(tg_iter *it, const tg_tensor *t, const tg_tensor **first)
{
    if (t->device.type == TG_CPU && t->ndim == 0) return 0;
    if (!*first) {
        *first = t;
        return 0;
    }
    tg_device d = (*first)->device;
    if (t->device.type == d.type && t->device.index == d.index) return 0;
    char a[32], b[32];
    return tg__fail(it->op,
                    "Expected all tensors to be on the same device, but found at least two "
                    "devices, %s and %s!",
                    device_str(d, a, sizeof a), device_str(t->device, b, sizeof b));
}

/* Returns 0 and sets *first to the operand that defines the device (NULL: CPU). */
static int check_devices(tg_iter *it, tg_tensor **outputs, tg_tensor *const *inputs,
                         const tg_tensor **first)
{
    *first = NULL;
    for (int i = 0; i < it->noutputs; i++)
        if (outputs[i] && check_one_device(it, outputs[i], first)) return -1;
    for (int i = 0; i < it->ninputs; i++)
        if (check_one_device(it, inputs[i], first)) return -1;
    return 0;
}

/* shape = broadcast(shape, t), PyTorch's infer_size: "a" is what was accumulated so far, "b"
 * the next operand, and the dim in the message counts in the broadcast shape. */
static int broadcast_into(tg_iter *it, const tg_tensor *t)
{
    int64_t nd = it->shape_ndim > t->ndim ? it->shape_ndim : t->ndim;
    if (t->ndim == it->shape_ndim) { /* common case: same rank, often same shape */
        int64_t i = 0;
        while (i < nd && t->sizes[i] == it->shape[i]) i++;
        if (i == nd) return 0;
    }
    int64_t out[TG_MAX_DIMS];
    for (int64_t i = nd - 1; i >= 0; i--) {
        int64_t off = nd - 1 - i;
        int64_t da = it->shape_ndim - 1 - off, db = t->ndim - 1 - off;
        int64_t sa = da >= 0 ? it->shape[da] : 1, sb = db >= 0 ? t->sizes[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return tg__fail(it->op,
                            "The size of tensor a (%lld) must match the size of tensor b "
                            "(%lld) at non-singleton dimension %lld",
                            (long long)sa, (long long)sb, (long long)i);
        out[i] = sa == 1 ? sb : sa;
    }
    for (int64_t i = 0; i < nd; i++) it->shape[i] = out[i];
    it->shape_ndim = nd;
    return 0;
}

static bool same_shape(const tg_tensor *t, const int64_t *shape, int64_t nd)
{
    if (t->ndim != nd) return false;
    for (int64_t i = 0; i < nd; i++)
        if (t->sizes[i] != shape[i]) return false;
    return true;
}

static bool is_input(const tg_tensor *t, tg_tensor *const *inputs, int ninputs)
{
    for (int i = 0; i < ninputs; i++)
        if (inputs[i] == t) return true;
    return false;
}

static int compute_dtype(tg_iter *it, int flags, tg_tensor **outputs, tg_tensor *const *inputs)
{
    tg_dtype common;
    if ((flags & TG_ITER_KEEP_OUTPUT_DTYPE) && it->noutputs > 0 && outputs[0]) {
        common = outputs[0]->dtype;
    } else if (flags & TG_ITER_PROMOTE_INPUTS) {
        /* Fast path: inputs of one dtype, none a wrapped number, promote to that dtype. */
        common = it->ninputs > 0 ? inputs[0]->dtype : TG_DTYPE_NONE;
        for (int i = 0; i < it->ninputs; i++) {
            if (inputs[i]->dtype != common || inputs[i]->is_wrapped_number) {
                common = tg__result_type(inputs, it->ninputs);
                break;
            }
        }
    } else if (it->ninputs > 0) {
        common = inputs[0]->dtype;
    } else if (it->noutputs > 0 && outputs[0]) {
        common = outputs[0]->dtype;
    } else {
        return tg__fail(it->op, "cannot infer a dtype: no inputs and no outputs given");
    }
    if ((flags & TG_ITER_INT_TO_FLOAT) && !tg__is_float(common)) common = tg_get_default_dtype();
    it->dtype = common;
    it->result_dtype = (flags & TG_ITER_BOOL_OUTPUT) ? TG_BOOL : common;
    return 0;
}

/* Writing through a tensor that has a broadcast (stride 0) dim would race and lose values. */
static bool has_internal_overlap(const tg_tensor *t)
{
    for (int64_t i = 0; i < t->ndim; i++)
        if (t->strides[i] == 0 && t->sizes[i] > 1) return true;
    return false;
}

static inline char *data_ptr(const tg_tensor *t, tg_dtype dt)
{
    return (char *)t->storage->data + t->storage_offset * elem_size(dt);
}

static int setup_output(tg_iter *it, int i, int flags, tg_tensor *out, const tg_tensor *devt,
                        tg_tensor *const *inputs)
{
    tg_device dev = devt ? devt->device : TG_DEVICE_CPU;
    char a[256], b[256];
    if (!out) {
        tg_tensor *t = tg__empty(it->op, it->shape, it->shape_ndim, it->result_dtype, dev);
        if (!t) return -1;
        it->user_outputs[i] = it->operands[i] = t;
        it->owned_user_outputs |= 1u << i;
        it->dtypes[i] = it->result_dtype;
        return 0;
    }
    it->user_outputs[i] = out;
    if (!same_shape(out, it->shape, it->shape_ndim)) {
        bool in_place = (flags & TG_ITER_NO_BROADCAST_OUT) || is_input(out, inputs, it->ninputs);
        if (in_place || tg__numel(out) != 0)
            return tg__fail(it->op, "output with shape %s doesn't match the broadcast shape %s",
                            tg__shape_str(a, sizeof a, out->sizes, out->ndim),
                            tg__shape_str(b, sizeof b, it->shape, it->shape_ndim));
        if (tg__resize_out(it->op, out, it->shape, it->shape_ndim)) return -1;
    }
    if (has_internal_overlap(out))
        return tg__fail(
            it->op, "unsupported operation: more than one element of the written-to "
                    "tensor refers to a single memory location. Please clone() the tensor before "
                    "performing the operation.");
    if (!(flags & TG_ITER_KEEP_OUTPUT_DTYPE) && !tg_can_cast(it->result_dtype, out->dtype))
        return tg__fail(it->op, "result type %s can't be cast to the desired output type %s",
                        tg__dtype_torch_name(it->result_dtype), tg__dtype_torch_name(out->dtype));
    if (out->dtype == it->result_dtype ||
        (flags & (TG_ITER_KEEP_OUTPUT_DTYPE | TG_ITER_NO_OUTPUT_CAST))) {
        it->operands[i] = out;
        it->dtypes[i] = out->dtype;
        return 0;
    }
    tg_tensor *tmp = tg__empty(it->op, it->shape, it->shape_ndim, it->result_dtype, dev);
    if (!tmp) return -1;
    it->operands[i] = tmp;
    it->owned_operands |= 1u << i;
    it->dtypes[i] = it->result_dtype;
    return 0;
}

/* Returns 1 when the input was converted into scalar_buf[k] (data and strides set later). */
static int setup_input(tg_iter *it, int k, int flags, tg_tensor *in)
{
    tg_dtype want = (flags & TG_ITER_NO_INPUT_CAST) ? in->dtype : it->dtype;
    it->dtypes[k] = want;
    it->operands[k] = in;
    if (in->dtype == want) return 0;
    if (in->device.type == TG_CPU && tg__numel(in) == 1) {
        const void *src = tg_tensor_data(in);
        if (tg_dtype_is_integral(in->dtype, true) && tg_dtype_is_integral(want, true))
            tg__store_int64(it->scalar_buf[k], want, tg__load_int64(src, in->dtype));
        else tg__store_double(it->scalar_buf[k], want, tg__load_double(src, in->dtype));
        return 1;
    }
    tg_tensor *tmp = tg__empty(it->op, in->sizes, in->ndim, want, in->device);
    if (!tmp) return -1;
    if (tg__copy_into(it->op, tmp, in)) {
        tg_release(tmp);
        return -1;
    }
    it->operands[k] = tmp;
    it->owned_operands |= 1u << k;
    return 0;
}

/* PyTorch's should_swap: >0 when dim1 should iterate faster than dim0 (it has smaller strides
 * for the first operand that tells them apart), <0 when not, 0 when no operand decides. */
static int compare_dims(const tg_iter *it, int d0, int d1)
{
    for (int k = 0; k < it->nops; k++) {
        int64_t s0 = it->strides[k][d0], s1 = it->strides[k][d1];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) return -1;
        if (s0 > s1) return 1;
        if (it->sizes[d0] > it->sizes[d1]) return 1;
    }
    return 0;
}

static void reorder_dims(tg_iter *it)
{
    int nd = it->ndim, perm[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = i;
    bool moved = false;
    for (int i = 1; i < nd; i++) {
        int d1 = i;
        for (int d0 = i - 1; d0 >= 0; d0--) {
            int c = compare_dims(it, perm[d0], perm[d1]);
            if (c > 0) {
                int tmp = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = tmp;
                d1 = d0;
                moved = true;
            } else if (c < 0) {
                break;
            }
        }
    }
    if (!moved) return;
    int64_t sizes[TG_MAX_DIMS], strides[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++) sizes[i] = it->sizes[perm[i]];
    memcpy(it->sizes, sizes, (size_t)nd * sizeof(int64_t));
    for (int k = 0; k < it->nops; k++) {
        for (int i = 0; i < nd; i++) strides[i] = it->strides[k][perm[i]];
        memcpy(it->strides[k], strides, (size_t)nd * sizeof(int64_t));
    }
}

static bool can_coalesce(const tg_iter *it, int d0, int d1)
{
    if (it->sizes[d0] == 1 || it->sizes[d1] == 1) return true;
    for (int k = 0; k < it->nops; k++)
        if (it->strides[k][d0] * it->sizes[d0] != it->strides[k][d1]) return false;
    return true;
}

/* Merges neighbouring dims (fastest first) wherever every operand steps through them as one. */
static void coalesce_dims(tg_iter *it)
{
    int nd = it->ndim, prev = 0;
    for (int d = 1; d < nd; d++) {
        if (can_coalesce(it, prev, d)) {
            if (it->sizes[prev] == 1)
                for (int k = 0; k < it->nops; k++) it->strides[k][prev] = it->strides[k][d];
            it->sizes[prev] *= it->sizes[d];
        } else {
            prev++;
            if (prev != d) {
                it->sizes[prev] = it->sizes[d];
                for (int k = 0; k < it->nops; k++) it->strides[k][prev] = it->strides[k][d];
            }
        }
    }
    it->ndim = prev + 1;
}

static void release_owned(tg_iter *it)
{
    if (!(it->owned_operands | it->owned_user_outputs)) return;
    for (int k = 0; k < it->nops; k++)
        if (it->owned_operands & (1u << k)) tg_release(it->operands[k]);
    for (int k = 0; k < it->noutputs; k++)
        if (it->owned_user_outputs & (1u << k)) tg_release(it->user_outputs[k]);
    it->owned_operands = it->owned_user_outputs = 0;
}

/* The common case in one pass: CPU operands of one shape, all contiguous, inputs of one dtype
 * (no wrapped numbers), given outputs already of the result dtype. Then no broadcasting,
 * promotion, conversion or dim sorting is needed: the iteration is one contiguous dim.
 * Returns 1 when it built the iteration, 0 when the general path must run (nothing was
 * touched that it would not overwrite), -1 on an allocation error. */
static int build_fast(tg_iter *it, int flags, tg_tensor **outputs, tg_tensor *const *inputs)
{
    if (it->ninputs == 0 || (flags & TG_ITER_KEEP_OUTPUT_DTYPE)) return 0;
    const tg_tensor *t0 = inputs[0];
    tg_dtype dt = t0->dtype;
    for (int i = 0; i < it->ninputs; i++) {
        const tg_tensor *t = inputs[i];
        if (!t || t->device.type != TG_CPU || t->is_wrapped_number || t->dtype != dt ||
            (t != t0 && !tg__same_sizes(t, t0)) || !tg__is_contiguous_fast(t))
            return 0;
    }
    if ((flags & TG_ITER_INT_TO_FLOAT) && !tg__is_float(dt)) return 0;
    tg_dtype rdt = (flags & TG_ITER_BOOL_OUTPUT) ? TG_BOOL : dt;
    for (int i = 0; i < it->noutputs; i++) {
        const tg_tensor *o = outputs[i];
        if (o && (o->device.type != TG_CPU || o->dtype != rdt || !tg__same_sizes(o, t0) ||
                  !tg__is_contiguous_fast(o)))
            return 0;
    }
    it->dtype = dt;
    it->result_dtype = rdt;
    it->shape_ndim = t0->ndim;
    int64_t numel = 1;
    for (int64_t d = 0; d < t0->ndim; d++) {
        it->shape[d] = t0->sizes[d];
        numel *= t0->sizes[d];
    }
    for (int i = 0; i < it->noutputs; i++) {
        tg_tensor *o = outputs[i];
        if (!o) {
            o = tg__empty(it->op, t0->sizes, t0->ndim, rdt, TG_DEVICE_CPU);
            if (!o) {
                release_owned(it);
                return -1;
            }
            it->owned_user_outputs |= 1u << i;
        }
        it->user_outputs[i] = it->operands[i] = o;
        it->dtypes[i] = rdt;
        it->data[i] = data_ptr(o, rdt);
        it->strides[i][0] = elem_size(rdt);
    }
    for (int i = 0; i < it->ninputs; i++) {
        int k = it->noutputs + i;
        it->operands[k] = inputs[i];
        it->dtypes[k] = dt;
        it->data[k] = data_ptr(inputs[i], dt);
        it->strides[k][0] = elem_size(dt);
    }
    it->ndim = 1;
    it->sizes[0] = numel;
    it->numel = numel;
    it->is_contiguous = true;
    return 1;
}

int tg__iter_build(tg_iter *it, const char *op, int flags, tg_tensor **outputs, int noutputs,
                   tg_tensor *const *inputs, int ninputs)
{
    it->op = op;
    it->noutputs = noutputs;
    it->ninputs = ninputs;
    it->nops = noutputs + ninputs;
    it->owned_operands = it->owned_user_outputs = 0;
    if (noutputs < 0 || ninputs < 0 || it->nops > TG_ITER_MAX_OPERANDS || it->nops == 0)
        return tg__fail(op, "an iteration takes 1 to %d operands, got %d outputs and %d inputs",
                        TG_ITER_MAX_OPERANDS, noutputs, ninputs);
    int fast = build_fast(it, flags, outputs, inputs);
    if (fast) return fast > 0 ? 0 : -1;
    for (int i = 0; i < ninputs; i++)
        if (!inputs[i]) return tg__fail(op, "expected a tensor, got NULL");
    const tg_tensor *devt;
    if (check_devices(it, outputs, inputs, &devt)) return -1;

    /* Broadcast shape: inputs, plus outputs that must keep their shape (in place). */
    it->shape_ndim = 0;
    for (int i = 0; i < noutputs; i++) {
        tg_tensor *o = outputs[i];
        if (o &&
            ((flags & TG_ITER_NO_BROADCAST_OUT) || is_input(o, inputs, ninputs) || ninputs == 0) &&
            broadcast_into(it, o))
            return -1;
    }
    for (int i = 0; i < ninputs; i++)
        if (broadcast_into(it, inputs[i])) return -1;
    if (compute_dtype(it, flags, outputs, inputs)) return -1;

    uint32_t in_buf = 0; /* inputs converted into scalar_buf */
    for (int i = 0; i < noutputs; i++)
        if (setup_output(it, i, flags, outputs[i], devt, inputs)) goto fail;
    for (int i = 0; i < ninputs; i++) {
        int r = setup_input(it, noutputs + i, flags, inputs[i]);
        if (r < 0) goto fail;
        if (r) in_buf |= 1u << (noutputs + i);
    }

    /* Byte strides in the broadcast shape, fastest dim first. */
    int64_t nd = it->shape_ndim;
    it->numel = 1;
    for (int64_t d = 0; d < nd; d++) {
        it->sizes[d] = it->shape[nd - 1 - d];
        it->numel *= it->sizes[d];
    }
    for (int k = 0; k < it->nops; k++) {
        const tg_tensor *t = it->operands[k];
        int64_t es = elem_size(it->dtypes[k]);
        bool zero = (in_buf >> k) & 1;
        it->data[k] = zero ? (char *)it->scalar_buf[k] : data_ptr(t, t->dtype);
        for (int64_t d = 0; d < nd; d++) {
            int64_t td = t->ndim - 1 - d; /* t's dim aligned with broadcast dim nd-1-d */
            it->strides[k][d] = (zero || td < 0 || t->sizes[td] == 1) ? 0 : t->strides[td] * es;
        }
    }
    if (nd == 0) { /* zero-dim: one element, one dim of size 1 */
        it->sizes[0] = 1;
        for (int k = 0; k < it->nops; k++) it->strides[k][0] = 0;
        nd = 1;
    }
    it->ndim = (int)nd;
    if (it->ndim > 1) {
        reorder_dims(it);
        coalesce_dims(it);
    }
    it->is_contiguous = it->ndim == 1;
    for (int k = 0; it->is_contiguous && k < it->nops; k++)
        if (it->strides[k][0] != elem_size(it->dtypes[k]) && it->sizes[0] > 1)
            it->is_contiguous = false;
    return 0;

fail:
    release_owned(it);
    return -1;
}

/* ------------------------------------------------------------------ running the loop */

typedef struct loop_ctx {
    tg_iter *it;
    tg_iter_loop1d loop;
    void *ctx;
} loop_ctx;

/* Runs the loop over the flattened range [b, e): finds the multi-dim position of b, then one
 * call per (part of an) innermost row. */
static void run_range(int64_t b, int64_t e, void *p)
{
    const loop_ctx *lc = p;
    const tg_iter *it = lc->it;
    int nops = it->nops, nd = it->ndim;
    char *ptr[TG_ITER_MAX_OPERANDS];
    int64_t inner[TG_ITER_MAX_OPERANDS], idx[TG_MAX_DIMS];
    for (int k = 0; k < nops; k++) {
        ptr[k] = it->data[k];
        inner[k] = it->strides[k][0];
    }
    int64_t rem = b;
    for (int d = 0; d < nd; d++) {
        idx[d] = rem % it->sizes[d];
        rem /= it->sizes[d];
        for (int k = 0; k < nops; k++) ptr[k] += idx[d] * it->strides[k][d];
    }
    int64_t pos = b;
    for (;;) {
        int64_t n = it->sizes[0] - idx[0];
        if (n > e - pos) n = e - pos;
        lc->loop(ptr, inner, n, lc->ctx);
        pos += n;
        if (pos >= e) break;
        for (int k = 0; k < nops; k++) ptr[k] -= idx[0] * it->strides[k][0];
        idx[0] = 0;
        for (int d = 1; d < nd; d++) { /* odometer step over the outer dims */
            idx[d]++;
            for (int k = 0; k < nops; k++) ptr[k] += it->strides[k][d];
            if (idx[d] < it->sizes[d]) break;
            for (int k = 0; k < nops; k++) ptr[k] -= it->strides[k][d] * it->sizes[d];
            idx[d] = 0;
        }
    }
}

void tg__iter_for_each(tg_iter *it, tg_iter_loop1d loop, void *ctx)
{
    if (it->numel == 0) return;
    if (it->ndim == 1 && it->numel <= tg__grain_size()) {
        int64_t inner[TG_ITER_MAX_OPERANDS];
        for (int k = 0; k < it->nops; k++) inner[k] = it->strides[k][0];
        loop(it->data, inner, it->numel, ctx);
        return;
    }
    loop_ctx lc = { it, loop, ctx };
    tg__parallel_for(it->numel, tg__grain_size(), run_range, &lc);
}

/* ------------------------------------------------------------------ finishing */

static int copy_back(tg_iter *it)
{
    int rc = 0;
    for (int j = 0; j < it->noutputs; j++) {
        tg_tensor *user = it->user_outputs[j];
        if (it->owned_user_outputs & (1u << j)) continue; /* allocated: nothing to do */
        if (it->operands[j] != user) {
            if (rc == 0 && tg__copy_into(it->op, user, it->operands[j])) rc = -1;
        } else {
            tg__bump_version(user);
        }
    }
    return rc;
}

tg_tensor *tg__iter_finish(tg_iter *it, int i)
{
    tg_tensor *r = NULL;
    if (copy_back(it) == 0 && i >= 0 && i < it->noutputs) {
        if (it->owned_user_outputs & (1u << i)) {
            r = it->user_outputs[i]; /* hand over build's reference */
            it->owned_user_outputs &= ~(1u << i);
        } else {
            r = tg_retain(it->user_outputs[i]);
        }
    }
    release_owned(it);
    return r;
}

int tg__iter_finish_all(tg_iter *it, tg_tensor **outs)
{
    int rc = copy_back(it);
    for (int j = 0; j < it->noutputs; j++) {
        if (rc) {
            outs[j] = NULL;
            continue;
        }
        if (it->owned_user_outputs & (1u << j)) {
            outs[j] = it->user_outputs[j];
            it->owned_user_outputs &= ~(1u << j);
        } else {
            outs[j] = tg_retain(it->user_outputs[j]);
        }
    }
    release_owned(it);
    return rc;
}

void tg__iter_abort(tg_iter *it) { release_owned(it); }
