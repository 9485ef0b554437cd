/* CUDA factory kernels: fill_, arange (start_out), linspace.out, eye.m_out, as
 * kernels/cpu/factory.c, with its checks and sizes (factory_checks.h).
 *
 * Every kernel writes into an existing CUDA tensor (`self` or `out`) of any dtype and strides
 * and returns a new reference to it. Element i (row-major) is found through the tensor's
 * offset calculator; values are computed per element in PyTorch's accumulation type with the
 * CPU's formulas. Products and sums use the _rn intrinsics so that nvcc does not contract
 * them into fused multiply-adds: the values then equal the CPU's to the bit. */
#include "tg_cuda.cuh"
#include "factory_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/arange.h"
#include "kernels/eye.h"
#include "kernels/fill.h"
#include "kernels/linspace.h"

/* ------------------------------------------------------------------ fill_ */

/* Every element = the same `size` bytes. */
__global__ void tg__cuda_fill_kernel(char *base, tg_cuda_offsets<1> oc, int64_t n, uint64_t bits,
                                     int size)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off[1];
        oc.get(i, off);
        char *p = base + off[0];
        switch (size) {
        case 1: *(uint8_t *)p = (uint8_t)bits; break;
        case 2: *(uint16_t *)p = (uint16_t)bits; break;
        case 4: *(uint32_t *)p = (uint32_t)bits; break;
        default: *(uint64_t *)p = bits; break;
        }
    }
}

/* Contiguous: typed stores of one value. */
template <class U> __global__ void tg__cuda_fill_contig_kernel(U *p, int64_t n, U v)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) p[i] = v;
}

/* Writes `bits` (one element of self's dtype) into every element of self. 0 or -1 + error. */
static int fill_bytes(const char *op, tg_tensor *self, uint64_t bits)
{
    const int64_t n = tg__numel(self);
    if (n == 0) return 0;
    const int device = tg__cuda_device_of(self);
    tg_cuda_device_guard guard(device);
    cudaStream_t s = tg__cuda_stream(device);
    const int size = (int)tg_dtype_size(self->dtype);
    char *base = tg__k_data(self);
    unsigned blocks = tg__cuda_blocks(n, TG_CUDA_THREADS);
    if (tg__is_contiguous(self)) {
        switch (size) {
        case 1:
            tg__cuda_fill_contig_kernel<uint8_t>
                <<<blocks, TG_CUDA_THREADS, 0, s>>>((uint8_t *)base, n, (uint8_t)bits);
            break;
        case 2:
            tg__cuda_fill_contig_kernel<uint16_t>
                <<<blocks, TG_CUDA_THREADS, 0, s>>>((uint16_t *)base, n, (uint16_t)bits);
            break;
        case 4:
            tg__cuda_fill_contig_kernel<uint32_t>
                <<<blocks, TG_CUDA_THREADS, 0, s>>>((uint32_t *)base, n, (uint32_t)bits);
            break;
        default:
            tg__cuda_fill_contig_kernel<uint64_t>
                <<<blocks, TG_CUDA_THREADS, 0, s>>>((uint64_t *)base, n, bits);
            break;
        }
    } else {
        tg__cuda_fill_kernel<<<blocks, TG_CUDA_THREADS, 0, s>>>(
            base, tg__cuda_offsets_from_tensor(self), n, bits, size);
    }
    return tg__cuda_launch_ok(op);
}

/* fill_.Scalar: every element of self = value (converted with PyTorch's overflow check). A
 * zero-dim CPU tensor given here (a CUDA call can carry one) is filled on the host. */
extern "C" tg_tensor *tg__cuda_fill_(tg_tensor *self, double value)
{
    if (tg__pw_check_scalar("fill_", value, self->dtype) != 0) return NULL;
    uint64_t bits = 0;
    tg__pw_store_f64((char *)&bits, self->dtype, value);
    if (self->device.type != TG_CUDA) {
        tg__error(
            "fill_",
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
        return NULL;
    }
    if (fill_bytes("fill_", self, bits) != 0) return NULL;
    tg__bump_version(self);
    return tg_retain(self);
}

/* ------------------------------------------------------------------ arange */

/* out[i] = start + i * step in the accumulation type of the dtype (float for float16 and
 * bfloat16, double for float32/float64, wrapping int64 for integers). */
__global__ void tg__cuda_arange_kernel(char *base, tg_cuda_offsets<1> oc, tg_dtype t,
                                       tg_arange_plan p)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.size; i += step) {
        int64_t off[1];
        oc.get(i, off);
        char *q = base + off[0];
        switch (t) {
        case TG_FLOAT16:
        case TG_BFLOAT16:
            tg__cuda_store(q, t, __fadd_rn((float)p.start, __fmul_rn((float)p.step, (float)i)));
            break;
        case TG_FLOAT32:
        case TG_FLOAT64:
            tg__cuda_store(q, t, __dadd_rn(p.start, __dmul_rn(p.step, (double)i)));
            break;
        default:
            tg__cuda_store(q, t, (int64_t)((uint64_t)p.istart + (uint64_t)p.istep * (uint64_t)i));
            break;
        }
    }
}

/* arange.start_out: out = [start, start + step, ...) up to end (exclusive). */
extern "C" tg_tensor *tg__cuda_arange_out(double start, double end, double step, tg_tensor *out)
{
    tg_arange_plan p;
    if (tg__arange_plan_make(&p, start, end, step, out->dtype) != 0) return NULL;
    if (tg__arange_resize_out(out, p.size) != 0) return NULL;
    if (p.size > 0) {
        const int device = tg__cuda_device_of(out);
        tg_cuda_device_guard guard(device);
        tg__cuda_arange_kernel<<<tg__cuda_blocks(p.size, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                                 tg__cuda_stream(device)>>>(
            tg__k_data(out), tg__cuda_offsets_from_tensor(out), out->dtype, p);
        if (tg__cuda_launch_ok("arange") != 0) return NULL;
    }
    tg__bump_version(out);
    return tg_retain(out);
}

/* ------------------------------------------------------------------ linspace */

/* The values the CPU computes (see tg__cpu_linspace_out): the first half counts up from the
 * start, the second half down from the end. kind: 0 integers (double arithmetic, truncated),
 * 1 float16/bfloat16/float32 (float arithmetic), 2 float64. */
struct tg_cuda_linspace_args {
    tg_dtype t;
    int kind;
    int64_t steps, halfway;
    double ds, de, dstep; /* kinds 0 and 2 */
    float fs, fe, fstep;  /* kind 1 */
};

__global__ void tg__cuda_linspace_kernel(char *base, tg_cuda_offsets<1> oc, tg_cuda_linspace_args a)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.steps; i += step) {
        int64_t off[1];
        oc.get(i, off);
        char *q = base + off[0];
        const bool up = i < a.halfway;
        const int64_t j = up ? i : a.steps - i - 1;
        if (a.kind == 1) {
            float d = __fmul_rn(a.fstep, (float)j);
            tg__cuda_store(q, a.t, up ? __fadd_rn(a.fs, d) : __fsub_rn(a.fe, d));
        } else {
            double d = __dmul_rn(a.dstep, (double)j);
            double v = up ? __dadd_rn(a.ds, d) : __dsub_rn(a.de, d);
            if (a.kind == 0) tg__cuda_store(q, a.t, tg__pw_float_to_int(v, a.t));
            else tg__cuda_store(q, a.t, v);
        }
    }
}

/* linspace.out: `steps` values from start to end inclusive. */
extern "C" tg_tensor *tg__cuda_linspace_out(double start, double end, int64_t steps, tg_tensor *out)
{
    if (tg__linspace_check(steps, out) != 0) return NULL;
    if (steps == 1) return tg__cuda_fill_(out, start); /* PyTorch: start, not end */
    const tg_dtype t = out->dtype;
    tg_cuda_linspace_args a;
    memset(&a, 0, sizeof a);
    a.t = t;
    a.steps = steps;
    a.halfway = steps / 2;
    switch (tg__pw_kind(t)) {
    case TG_PW_I64: {
        /* start/end as the dtype holds them (e.g. int8 wraps), as on the CPU */
        char sb[8], eb[8];
        tg__pw_store_i64(sb, t, tg__pw_float_to_int(start, t));
        tg__pw_store_i64(eb, t, tg__pw_float_to_int(end, t));
        a.kind = 0;
        a.ds = (double)tg__pw_load_i64(sb, t);
        a.de = (double)tg__pw_load_i64(eb, t);
        a.dstep = steps > 1 ? (a.de - a.ds) / (double)(steps - 1) : 0;
        break;
    }
    case TG_PW_F32: {
        char sb[4], eb[4];
        tg__pw_store_f64(sb, t, start);
        tg__pw_store_f64(eb, t, end);
        a.kind = 1;
        a.fs = tg__pw_load_f32(sb, t);
        a.fe = tg__pw_load_f32(eb, t);
        a.fstep = steps > 1 ? (a.fe - a.fs) / (float)(steps - 1) : 0;
        if (t != TG_FLOAT32) { /* the step is a scalar_t too */
            char stb[4];
            tg__pw_store_f32(stb, t, a.fstep);
            a.fstep = tg__pw_load_f32(stb, t);
        }
        break;
    }
    case TG_PW_F64:
        a.kind = 2;
        a.ds = start;
        a.de = end;
        a.dstep = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
        break;
    }
    if (steps > 0) {
        const int device = tg__cuda_device_of(out);
        tg_cuda_device_guard guard(device);
        tg__cuda_linspace_kernel<<<tg__cuda_blocks(steps, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                                   tg__cuda_stream(device)>>>(tg__k_data(out),
                                                              tg__cuda_offsets_from_tensor(out), a);
        if (tg__cuda_launch_ok("linspace") != 0) return NULL;
    }
    tg__bump_version(out);
    return tg_retain(out);
}

/* ------------------------------------------------------------------ eye */

/* Diagonal element i of a (n, m) tensor: one at base + i * (s0 + s1) bytes. */
__global__ void tg__cuda_eye_diag_kernel(char *base, int64_t diag, int64_t stride_bytes, tg_dtype t)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < diag; i += step)
        tg__cuda_store(base + i * stride_bytes, t, (int64_t)1);
}

/* eye.m_out: out (n, m) = 1 on the diagonal, 0 elsewhere. */
extern "C" tg_tensor *tg__cuda_eye_out(int64_t n, int64_t m, tg_tensor *out)
{
    if (tg__eye_check(n, m, out) != 0) return NULL;
    tg_tensor *r = tg__cuda_fill_(out, 0);
    if (!r) return NULL;
    tg_release(r);
    const int64_t diag = n < m ? n : m;
    if (diag > 0) {
        const int64_t es = (int64_t)tg_dtype_size(out->dtype);
        const int device = tg__cuda_device_of(out);
        tg_cuda_device_guard guard(device);
        tg__cuda_eye_diag_kernel<<<tg__cuda_blocks(diag, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                                   tg__cuda_stream(device)>>>(
            tg__k_data(out), diag, (out->strides[0] + out->strides[1]) * es, out->dtype);
        if (tg__cuda_launch_ok("eye") != 0) return NULL;
    }
    return tg_retain(out);
}
