/* Shape and dtype checks of the matrix products (mm, bmm, addmm), shared by the CPU kernels
 * (kernels/cpu/linalg.c) and the CUDA kernels (kernels/cuda/linalg.cu): PyTorch's messages,
 * in PyTorch's order. Static inline, C and C++. Each returns 0, or -1 with the error recorded. */
#ifndef TG_LINALG_CHECKS_H
#define TG_LINALG_CHECKS_H

#include "tg_kutil.h"

/* Two matrices (n, m) @ (m', p): m must equal m' (mm's and addmm's message). */
static inline int tg__matmul_check_inner(const char *op, const tg_tensor *a, const tg_tensor *b)
{
    if (a->sizes[1] == b->sizes[0]) return 0;
    return tg__fail(op, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                    (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0],
                    (long long)b->sizes[1]);
}

/* self (n, m) @ mat2 (m, p). */
static inline int tg__mm_check_shapes(const tg_tensor *self, const tg_tensor *mat2)
{
    if (self->ndim != 2) return tg__fail("mm", "self must be a matrix");
    if (mat2->ndim != 2) return tg__fail("mm", "mat2 must be a matrix");
    return tg__matmul_check_inner("mm", self, mat2);
}

/* self (b, n, m) @ mat2 (b, m, p). */
static inline int tg__bmm_check_shapes(const tg_tensor *self, const tg_tensor *mat2)
{
    if (self->ndim != 3) return tg__fail("bmm", "batch1 must be a 3D tensor");
    if (mat2->ndim != 3) return tg__fail("bmm", "batch2 must be a 3D tensor");
    if (self->sizes[0] != mat2->sizes[0])
        return tg__fail("bmm",
                        "batch1 and batch2 must have same number of batches, got %lld and %lld",
                        (long long)self->sizes[0], (long long)mat2->sizes[0]);
    if (self->sizes[2] != mat2->sizes[1])
        return tg__fail("bmm", "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)",
                        (long long)self->sizes[1], (long long)self->sizes[2],
                        (long long)mat2->sizes[1], (long long)mat2->sizes[2]);
    return 0;
}

/* addmm's mat1 (n, m) @ mat2 (m, p). */
static inline int tg__addmm_check_mats(const tg_tensor *mat1, const tg_tensor *mat2)
{
    if (mat1->ndim != 2)
        return tg__fail("addmm", "mat1 must be a matrix, got %lld-D tensor", (long long)mat1->ndim);
    if (mat2->ndim != 2)
        return tg__fail("addmm", "mat2 must be a matrix, got %lld-D tensor", (long long)mat2->ndim);
    return tg__matmul_check_inner("addmm", mat1, mat2);
}

/* self (at most k dims) expands to the product's shape (k dims): PyTorch's expand message. */
static inline int tg__linalg_expand_check(const char *op, const tg_tensor *self,
                                          const int64_t *shape, int64_t k)
{
    for (int64_t d = 0; d < self->ndim; d++) {
        int64_t want = shape[k - self->ndim + d];
        if (self->sizes[d] != want && self->sizes[d] != 1) {
            char a[96], b[96];
            return tg__fail(op,
                            "The expanded size of the tensor (%lld) must match the existing "
                            "size (%lld) at non-singleton dimension %lld.  Target sizes: %s.  "
                            "Tensor sizes: %s",
                            (long long)want, (long long)self->sizes[d],
                            (long long)(k - self->ndim + d), tg__shape_str(a, sizeof a, shape, k),
                            tg__shape_str(b, sizeof b, self->sizes, self->ndim));
        }
    }
    return 0;
}

/* addmm's self against the product's shape (n, p): exactly that shape in place (out == self),
 * else broadcastable to it. */
static inline int tg__addmm_check_self(const tg_tensor *self, const tg_tensor *mat1,
                                       const tg_tensor *mat2, const int64_t *shape, bool inplace)
{
    if (inplace) {
        if (self->ndim != 2 || self->sizes[0] != shape[0] || self->sizes[1] != shape[1])
            return tg__fail("addmm",
                            "input shape is incompatible with matrix multiplication "
                            "(%lldx%lld @ %lldx%lld != %lldx%lld)",
                            (long long)mat1->sizes[0], (long long)mat1->sizes[1],
                            (long long)mat2->sizes[0], (long long)mat2->sizes[1],
                            (long long)(self->ndim > 0 ? self->sizes[0] : 1),
                            (long long)(self->ndim > 1 ? self->sizes[1] : 1));
        return 0;
    }
    if (self->ndim > 2) return tg__fail("addmm", "self must be a matrix");
    return tg__linalg_expand_check("addmm", self, shape, 2);
}

/* Both operands of one dtype, and a dtype the backend implements: `impl` names the backend's
 * kernel in PyTorch's message ("addmm_impl_cpu_", "addmm_cuda", "bmm_cuda"). The CPU rejects
 * bool only; CUDA (cuBLAS) every non-floating dtype. */
static inline int tg__matmul_check_dtypes(const char *op, const tg_tensor *a, const tg_tensor *b,
                                          bool floating_only, const char *impl)
{
    if (a->dtype != b->dtype)
        return tg__fail(op, "expected scalar type %s but found %s", tg__dtype_torch_name(a->dtype),
                        tg__dtype_torch_name(b->dtype));
    if (floating_only ? !tg_dtype_is_floating(a->dtype) : a->dtype == TG_BOOL)
        return tg__fail(op, "\"%s\" not implemented for '%s'", impl,
                        tg__dtype_torch_name(a->dtype));
    return 0;
}

/* baddbmm's batch1 (b, n, m) @ batch2 (b, m, p) and self against the product's shape (b, n, p):
 * broadcastable to it, exactly it in place (out == self). shape receives (b, n, p). */
static inline int tg__baddbmm_check(const tg_tensor *self, const tg_tensor *batch1,
                                    const tg_tensor *batch2, bool inplace, int64_t shape[3])
{
    if (batch1->ndim != 3) return tg__fail("baddbmm", "batch1 must be a 3D tensor");
    if (batch2->ndim != 3) return tg__fail("baddbmm", "batch2 must be a 3D tensor");
    if (batch2->sizes[0] != batch1->sizes[0] || batch2->sizes[1] != batch1->sizes[2])
        return tg__fail("baddbmm",
                        "Expected size for first two dimensions of batch2 tensor to be: "
                        "[%lld, %lld] but got: [%lld, %lld].",
                        (long long)batch1->sizes[0], (long long)batch1->sizes[2],
                        (long long)batch2->sizes[0], (long long)batch2->sizes[1]);
    shape[0] = batch1->sizes[0];
    shape[1] = batch1->sizes[1];
    shape[2] = batch2->sizes[2];
    char a[96], b[96];
    if (self->ndim > 3) return tg__fail("baddbmm", "self must be at most a 3D tensor");
    if (tg__linalg_expand_check("baddbmm", self, shape, 3) != 0) return -1;
    if (inplace && (self->ndim != 3 || self->sizes[0] != shape[0] || self->sizes[1] != shape[1] ||
                    self->sizes[2] != shape[2]))
        return tg__fail("baddbmm", "output with shape %s doesn't match the broadcast shape %s",
                        tg__shape_str(b, sizeof b, self->sizes, self->ndim),
                        tg__shape_str(a, sizeof a, shape, 3));
    return 0;
}

#endif
