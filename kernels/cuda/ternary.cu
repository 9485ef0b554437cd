/* CUDA ternary pointwise kernels: where (select) and clamp (Scalar or Tensor bounds), as
 * kernels/cpu/ternary.c, with its checks (pointwise_checks.h):
 *
 *   where:  condition (bool; uint8 deprecated), self, other (broadcastable)
 *           -> out (broadcast shape, result_type(self, other))
 *   clamp:  self, min?, max? (Scalars, or broadcastable tensors)
 *           -> out (broadcast shape, result type of self and the bounds)
 *
 * where has its own kernel: it moves the chosen element, converted from its dtype to the
 * result dtype and then to out's (the CPU's cast and copy-back), with no arithmetic. clamp
 * runs on the generic launcher with 2 or 3 inputs. */
#include "pointwise.cuh"
#include "pointwise_checks.h"
#include "ufunc/clamp.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/clamp.h"
#include "kernels/where.h"

/* ------------------------------------------------------------------ where */

/* data[0] = out, data[1] = condition, data[2] = self, data[3] = other. A host operand k
 * (1..3) has host[k - 1] set and its value in hv[k - 1]: the condition as one byte 0/1,
 * self/other already converted to the common dtype. */
struct tg_cuda_where_args {
    char *data[4];
    tg_dtype dtypes[4];
    tg_dtype common;
    bool host[3];
    alignas(8) unsigned char hv[3][8];
    int64_t n;
};

__global__ void tg__cuda_where_kernel(tg_cuda_where_args a, tg_cuda_offsets<4> oc)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
        int64_t off[4];
        oc.get(i, off);
        bool c = a.host[0] ? a.hv[0][0] != 0
                           : tg__cuda_load<int64_t>(a.data[1] + off[1], a.dtypes[1]) != 0;
        int k = c ? 2 : 3;
        alignas(8) char v[8]; /* the chosen element in the common dtype */
        if (a.host[k - 1]) {
            for (int b = 0; b < 8; b++) v[b] = (char)a.hv[k - 1][b];
        } else {
            tg__pw_convert(v, a.common, a.data[k] + off[k], a.dtypes[k]);
        }
        tg__pw_convert(a.data[0] + off[0], a.dtypes[0], v, a.common);
    }
}

static int where_launch(tg_iter *it)
{
    if (tg__cuda_check_outputs(it) != 0) return -1;
    if (it->numel == 0) return 0;
    const int device = tg__cuda_iter_device(it);
    tg_cuda_device_guard guard(device);
    tg_cuda_where_args a;
    memset(&a, 0, sizeof a);
    a.common = it->dtype;
    a.n = it->numel;
    for (int k = 0; k < 4; k++) {
        a.data[k] = it->data[k];
        a.dtypes[k] = it->dtypes[k];
    }
    for (int k = 1; k < 4; k++) {
        a.host[k - 1] = tg__cuda_is_host_operand(it, k);
        if (!a.host[k - 1]) continue;
        if (k == 1) a.hv[0][0] = tg__pw_load_i64(it->data[1], it->dtypes[1]) != 0;
        else tg__pw_convert((char *)a.hv[k - 1], it->dtype, it->data[k], it->dtypes[k]);
        a.data[k] = NULL;
    }
    tg_cuda_offsets<4> oc = tg__cuda_offsets_from_iter<4>(it);
    tg__cuda_where_kernel<<<tg__cuda_blocks(a.n, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                            tg__cuda_stream(device)>>>(a, oc);
    return tg__cuda_launch_ok(it->op);
}

/* where.self_out: out = condition ? self : other. */
extern "C" tg_tensor *tg__cuda_where_out(tg_tensor *condition, tg_tensor *self, tg_tensor *other,
                                         tg_tensor *out)
{
    tg_iter it;
    tg_tensor *cond; /* borrowed by the iterator: it lives until the kernel is done */
    if (tg__pw_where_iter_build(&it, TG_CUDA_ITER_FLAGS, condition, self, other, out, &cond) != 0)
        return NULL;
    tg_tensor *r = NULL;
    if (where_launch(&it) != 0) tg__iter_abort(&it);
    else r = tg__iter_finish(&it, 0);
    tg_release(cond);
    return r;
}

/* ------------------------------------------------------------------ clamp */

/* Inputs: self, then min (if has_min), then max (if has_max). A missing bound is the
 * identity of the clamp (-inf/+inf, or the int64 extremes), as on the CPU. */
struct tg_cuda_clamp_fn {
    bool has_min;
    __device__ float operator()(float x, float b) const
    {
        return has_min ? tg__pw_clamp_f32(x, b, INFINITY) : tg__pw_clamp_f32(x, -INFINITY, b);
    }
    __device__ double operator()(double x, double b) const
    {
        return has_min ? tg__pw_clamp_f64(x, b, INFINITY) : tg__pw_clamp_f64(x, -INFINITY, b);
    }
    __device__ int64_t operator()(int64_t x, int64_t b) const
    {
        return has_min ? tg__pw_clamp_i64(x, b, INT64_MAX) : tg__pw_clamp_i64(x, INT64_MIN, b);
    }
    __device__ float operator()(float x, float lo, float hi) const
    {
        return tg__pw_clamp_f32(x, lo, hi);
    }
    __device__ double operator()(double x, double lo, double hi) const
    {
        return tg__pw_clamp_f64(x, lo, hi);
    }
    __device__ int64_t operator()(int64_t x, int64_t lo, int64_t hi) const
    {
        return tg__pw_clamp_i64(x, lo, hi);
    }
};

static tg_tensor *clamp_run(tg_tensor *self, tg_tensor *min, tg_tensor *max, tg_tensor *out,
                            const double *scalar_min, const double *scalar_max)
{
    tg_iter it;
    int nin = tg__pw_clamp_iter_build(&it, TG_CUDA_ITER_FLAGS, "cuda", self, min, max, out,
                                      scalar_min, scalar_max);
    if (nin < 0) return NULL;
    tg_cuda_clamp_fn f = { min != NULL };
    int rc = nin == 3 ? tg__cuda_pw_run<TG_CUDA_ALL_KINDS, 3>(&it, f)
                      : tg__cuda_pw_run<TG_CUDA_ALL_KINDS, 2>(&it, f);
    if (rc != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* clamp.out: out = min(max(self, min), max) with Scalar bounds (either may be None). */
extern "C" tg_tensor *tg__cuda_clamp_out(tg_tensor *self, tg_opt_scalar min, tg_opt_scalar max,
                                         tg_tensor *out)
{
    return tg__pw_clamp_scalar_bounds(clamp_run, self, min, max, out);
}

/* clamp.Tensor_out: the bounds are tensors broadcast against self (either may be NULL). */
extern "C" tg_tensor *tg__cuda_clamp_tensor_out(tg_tensor *self, tg_tensor *min, tg_tensor *max,
                                                tg_tensor *out)
{
    if (tg__pw_check_clamp_bounds(min != NULL, max != NULL) != 0) return NULL;
    return clamp_run(self, min, max, out, NULL, NULL);
}
