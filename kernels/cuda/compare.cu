/* CUDA comparison kernels: eq, ne, lt, le, gt, ge, as kernels/cpu/compare.c:
 *
 *   self (any shape), other (broadcastable) -> out (broadcast shape, bool)
 *
 * The inputs are promoted to their common dtype and compared there (integers as int64, exact
 * beyond 2^53; float16/bfloat16/float32 as float, which orders them as the CPU's double
 * comparison does); NaN compares unequal to everything. In place (out == self) the bool result
 * is stored into self's dtype as 0/1. One functor serves the six operators: the operator is a
 * kernel argument (the switch in pointwise_scalar.h's tg__pw_compare, as on the CPU, is
 * uniform across a warp). */
#include "pointwise.cuh"
#include "pointwise_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/eq.h"
#include "kernels/ge.h"
#include "kernels/gt.h"
#include "kernels/le.h"
#include "kernels/lt.h"
#include "kernels/ne.h"

struct tg_cuda_cmp_fn {
    tg_pw_cmp_op op;
    template <class C> __device__ bool operator()(C a, C b) const
    {
        return tg__pw_compare(op, a < b, a == b, b < a);
    }
};

static tg_tensor *cmp_run(const char *name, tg_pw_cmp_op op, tg_tensor *self, tg_tensor *other,
                          tg_tensor *out)
{
    tg_iter it;
    tg_tensor *ins[2] = { self, other };
    if (tg__pw_iter_build(&it, name, TG_ITER_BOOL_OUTPUT | TG_CUDA_ITER_FLAGS, out, self, ins, 2) !=
        0)
        return NULL;
    if (tg__cuda_pw_run<TG_CUDA_ALL_KINDS, 2>(&it, tg_cuda_cmp_fn{ op }) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* eq.Tensor_out ... ge.Tensor_out: out = (self OP other), bool. */
extern "C" tg_tensor *tg__cuda_eq_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("eq", TG_PW_EQ, self, other, out);
}
extern "C" tg_tensor *tg__cuda_ne_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("ne", TG_PW_NE, self, other, out);
}
extern "C" tg_tensor *tg__cuda_lt_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("lt", TG_PW_LT, self, other, out);
}
extern "C" tg_tensor *tg__cuda_le_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("le", TG_PW_LE, self, other, out);
}
extern "C" tg_tensor *tg__cuda_gt_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("gt", TG_PW_GT, self, other, out);
}
extern "C" tg_tensor *tg__cuda_ge_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("ge", TG_PW_GE, self, other, out);
}
