/* Argument checks of the embedding and layer-norm operators (embedding,
 * embedding_dense_backward, native_layer_norm(_backward), and the composites layer_norm and
 * rms_norm), shared by the CPU kernels (kernels/cpu/embedding.c, kernels/cpu/layer_norm.c),
 * the CUDA kernels (kernels/cuda/embedding.cu, kernels/cuda/layer_norm.cu) and the composites
 * (kernels/composite/embnorm.c): PyTorch 1.13's messages in PyTorch's order. Static inline, C
 * and C++. Each check returns 0, or -1 with the error recorded. */
#ifndef TG_EMBNORM_CHECKS_H
#define TG_EMBNORM_CHECKS_H

#include <stdio.h>

#include "tg_kutil.h"

/* "[2, 3]": an int list as PyTorch's ArrayRef printing. */
static inline char *tg__embnorm_list_str(char *buf, size_t cap, tg_int_list l)
{
    return tg__shape_str(buf, cap, l.data, l.len);
}

static inline bool tg__embnorm_sizes_equal(const tg_tensor *t, tg_int_list l)
{
    if (t->ndim != l.len) return false;
    for (int64_t i = 0; i < l.len; i++)
        if (t->sizes[i] != l.data[i]) return false;
    return true;
}

/* A layer norm's weight or bias (`name`), when given, has the shape normalized_shape. */
static inline int tg__layer_norm_param_check(const char *op, const char *name, const tg_tensor *t,
                                             tg_int_list ns)
{
    char s1[256], s2[256];
    if (!t || tg__embnorm_sizes_equal(t, ns)) return 0;
    return tg__fail(op,
                    "Expected %s to be of same shape as normalized_shape, but got %s of shape %s "
                    "and normalized_shape = %s",
                    name, name, tg__shape_str(s1, sizeof s1, t->sizes, t->ndim),
                    tg__embnorm_list_str(s2, sizeof s2, ns));
}

/* _check_layer_norm_inputs (also rms_norm's): normalized_shape non-empty, weight and bias of
 * that shape, input's trailing dims equal to it. On success *m_out is the number of rows
 * (product of the leading dims) and *n_out the row length. `with_bias` false for rms_norm. */
static inline int tg__layer_norm_inputs_check(const char *op, const tg_tensor *input,
                                              tg_int_list ns, const tg_tensor *weight,
                                              const tg_tensor *bias, int64_t *m_out, int64_t *n_out)
{
    char s1[256], s2[256];
    if (ns.len < 1)
        return tg__fail(op,
                        "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                        "at least one element, but got normalized_shape = %s",
                        tg__embnorm_list_str(s1, sizeof s1, ns));
    if (tg__layer_norm_param_check(op, "weight", weight, ns) != 0) return -1;
    if (tg__layer_norm_param_check(op, "bias", bias, ns) != 0) return -1;
    bool match = input->ndim >= ns.len;
    for (int64_t i = 0; match && i < ns.len; i++)
        match = input->sizes[input->ndim - ns.len + i] == ns.data[i];
    if (!match) {
        /* "Given normalized_shape=[3], expected input with shape [*, 3], but got input of
         * size[2, 4]" */
        char star[256];
        size_t k = 0;
        k += (size_t)snprintf(star + k, sizeof star - k, "[*");
        for (int64_t i = 0; i < ns.len && k < sizeof star; i++)
            k += (size_t)snprintf(star + k, sizeof star - k, ", %lld", (long long)ns.data[i]);
        if (k < sizeof star) snprintf(star + k, sizeof star - k, "]");
        return tg__fail(op,
                        "Given normalized_shape=%s, expected input with shape %s, but got input "
                        "of size%s",
                        tg__embnorm_list_str(s1, sizeof s1, ns), star,
                        tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    }
    int64_t m = 1, n = 1;
    for (int64_t i = 0; i < input->ndim; i++) {
        if (i < input->ndim - ns.len) m *= input->sizes[i];
        else n *= input->sizes[i];
    }
    *m_out = m;
    *n_out = n;
    return 0;
}

static inline int tg__layer_norm_dtype_check(const char *op, const tg_tensor *input,
                                             const tg_tensor *const *params, int np)
{
    if (input->dtype != TG_FLOAT32 && input->dtype != TG_FLOAT64)
        return tg__fail(op, "\"LayerNormKernelImpl\" not implemented for '%s'",
                        tg__dtype_torch_name(input->dtype));
    for (int i = 0; i < np; i++)
        if (params[i] && params[i]->dtype != input->dtype)
            return tg__fail(op, "expected scalar type %s but found %s",
                            tg__dtype_torch_name(input->dtype),
                            tg__dtype_torch_name(params[i]->dtype));
    return 0;
}

/* native_layer_norm: the input checks, then float32/float64 with parameters of input's dtype. */
static inline int tg__layer_norm_check(const char *op, const tg_tensor *input, tg_int_list ns,
                                       const tg_tensor *weight, const tg_tensor *bias, int64_t *m,
                                       int64_t *n)
{
    if (tg__layer_norm_inputs_check(op, input, ns, weight, bias, m, n) != 0) return -1;
    const tg_tensor *ps[2] = { weight, bias };
    return tg__layer_norm_dtype_check(op, input, ps, 2);
}

/* native_layer_norm_backward: the forward's checks, grad_out of input's shape, mean and rstd
 * of M elements. */
static inline int tg__layer_norm_backward_check(const char *op, const tg_tensor *grad_out,
                                                const tg_tensor *input, tg_int_list ns,
                                                const tg_tensor *mean, const tg_tensor *rstd,
                                                const tg_tensor *weight, const tg_tensor *bias,
                                                int64_t *m, int64_t *n)
{
    char s1[256], s2[256];
    if (tg__layer_norm_inputs_check(op, input, ns, weight, bias, m, n) != 0) return -1;
    bool same = grad_out->ndim == input->ndim;
    for (int64_t i = 0; same && i < input->ndim; i++) same = grad_out->sizes[i] == input->sizes[i];
    if (!same)
        return tg__fail(op, "Expected grad_out of shape %s to match input of shape %s",
                        tg__shape_str(s1, sizeof s1, grad_out->sizes, grad_out->ndim),
                        tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    if (tg__numel(mean) != *m)
        return tg__fail(op, "Expected mean to have %lld elements, but got %lld", (long long)*m,
                        (long long)tg__numel(mean));
    if (tg__numel(rstd) != *m)
        return tg__fail(op, "Expected rstd to have %lld elements, but got %lld", (long long)*m,
                        (long long)tg__numel(rstd));
    const tg_tensor *ps[4] = { grad_out, mean, rstd, weight };
    return tg__layer_norm_dtype_check(op, input, ps, 4);
}

/* checkScalarTypes(fn, {indices, "indices", argno}, {Long, Int}). */
static inline int tg__embedding_indices_check(const char *op, const char *fn,
                                              const tg_tensor *indices, int argno)
{
    if (indices->dtype != TG_INT64 && indices->dtype != TG_INT32)
        return tg__fail(op,
                        "Expected tensor for argument #%d 'indices' to have one of the following "
                        "scalar types: Long, Int; but got torch.%s%sTensor instead (while checking "
                        "arguments for %s)",
                        argno, indices->device.type == TG_CPU ? "" : "cuda.",
                        tg__dtype_torch_name(indices->dtype), fn);
    return 0;
}

/* embedding: 2-D weight, integer indices, no sparse gradient (tensorgen has no sparse
 * tensors). */
static inline int tg__embedding_check(const char *op, const tg_tensor *weight,
                                      const tg_tensor *indices, bool sparse)
{
    if (weight->ndim != 2) return tg__fail(op, "'weight' must be 2-D");
    if (tg__embedding_indices_check(op, "embedding", indices, 1) != 0) return -1;
    if (sparse)
        return tg__fail(op, "sparse=True is not supported (tensorgen has no sparse tensors); use "
                            "sparse=False");
    return 0;
}

/* embedding_dense_backward: grad_output of indices.shape + [D], integer indices. On success
 * *d_out is D. */
static inline int tg__embedding_backward_check(const char *op, const tg_tensor *grad_output,
                                               const tg_tensor *indices, int64_t num_weights,
                                               int64_t *d_out)
{
    char s1[256], s2[256];
    if (tg__embedding_indices_check(op, "embedding_backward", indices, 2) != 0) return -1;
    if (num_weights < 0)
        return tg__fail(op, "num_weights must be non-negative, but got %lld",
                        (long long)num_weights);
    bool ok = grad_output->ndim == indices->ndim + 1;
    for (int64_t i = 0; ok && i < indices->ndim; i++)
        ok = grad_output->sizes[i] == indices->sizes[i];
    if (!ok)
        return tg__fail(op,
                        "Expected grad_output of shape indices.shape + [embedding_dim], but got "
                        "grad_output of shape %s and indices of shape %s",
                        tg__shape_str(s1, sizeof s1, grad_output->sizes, grad_output->ndim),
                        tg__shape_str(s2, sizeof s2, indices->sizes, indices->ndim));
    if (grad_output->dtype != TG_FLOAT32 && grad_output->dtype != TG_FLOAT64)
        return tg__fail(op, "\"embedding_dense_backward\" not implemented for '%s'",
                        tg__dtype_torch_name(grad_output->dtype));
    *d_out = grad_output->sizes[grad_output->ndim - 1];
    return 0;
}

#endif
