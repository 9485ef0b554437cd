/* The generic elementwise launcher of the CUDA pointwise kernels (the generated ones through
 * ufunc.cuh, ternary.cu, threshold.cu): out = f(in_0, ..., in_{N-1}) over a built tg_iter
 * (one output, N = 1..3 inputs), with the functor f holding the scalar function of
 * kernels/common/ufunc/ (shared with the CPU kernels, so both compute the same thing).
 *
 * What the CPU kernels do, and this reproduces element for element: every input is converted
 * to the iteration's common dtype (it->dtype) and widened to the compute type (float for
 * float16/bfloat16/float32, double for float64, int64_t for integers and bool; a functor may
 * choose otherwise through tg_cuda_compute_for), f runs in the compute type, the result is
 * rounded to the common dtype and then converted to the output's dtype. The iterator is
 * built with TG_ITER_NO_INPUT_CAST | TG_ITER_NO_OUTPUT_CAST, so no temporaries exist: the
 * conversions happen in registers (tg__cuda_load_as, tg__cuda_store_as).
 *
 * Paths:
 *   - contiguous: every device operand is contiguous (1-D after coalescing), inputs hold the
 *     common dtype and the output the common dtype or bool. Typed loads; when every pointer is
 *     aligned, each thread moves 16 bytes of every input per step (VEC elements: 4 floats,
 *     8 halves, 2 doubles, ...), and the tail (n % VEC) is done element by element.
 *   - strided: anything else (broadcast, transposed, mixed dtypes): per element, the offset
 *     calculator turns the linear index into byte offsets, loads convert dynamically.
 * Both are grid-stride loops with int64 indices, so any numel works with any grid size.
 * Host operands (zero-dim CPU tensors, wrapped Scalars) are read on the host and passed by
 * value in the kernel's argument struct.
 *
 * Template parameters: NIN inputs, KINDS (which compute kinds the operator can meet; the
 * others are not instantiated: a float-only operator never sees integers because the
 * iterator promotes them). */
#ifndef TG_CUDA_POINTWISE_CUH
#define TG_CUDA_POINTWISE_CUH

#include "tg_cuda.cuh"

/* Compute kinds an operator accepts (template argument KINDS). */
#define TG_CUDA_KIND_F32 1u
#define TG_CUDA_KIND_F64 2u
#define TG_CUDA_KIND_I64 4u
#define TG_CUDA_FLOATING (TG_CUDA_KIND_F32 | TG_CUDA_KIND_F64)
#define TG_CUDA_ALL_KINDS (TG_CUDA_KIND_F32 | TG_CUDA_KIND_F64 | TG_CUDA_KIND_I64)

/* The iterator flags every CUDA pointwise kernel adds: operands are read and written in their
 * own dtypes (no host-side cast temporaries). */
#define TG_CUDA_ITER_FLAGS (TG_ITER_NO_INPUT_CAST | TG_ITER_NO_OUTPUT_CAST)

/* The compute type functor F uses for storage type T: tg_cuda_compute_of by default. A functor
 * that computes differently (threshold_backward computes in double except for float32, as its
 * CPU kernel does) specialises this. */
template <class F, class T> struct tg_cuda_compute_for {
    using type = typename tg_cuda_compute_of<T>::type;
};

template <class C> struct tg_cuda_kind_of;
template <> struct tg_cuda_kind_of<float> {
    static constexpr unsigned value = TG_CUDA_KIND_F32;
};
template <> struct tg_cuda_kind_of<double> {
    static constexpr unsigned value = TG_CUDA_KIND_F64;
};
template <> struct tg_cuda_kind_of<int64_t> {
    static constexpr unsigned value = TG_CUDA_KIND_I64;
};

/* ------------------------------------------------------------------ conversions */

/* An input element of dtype st, as the CPU sees it: converted to the common dtype ct (the
 * iterator's cast), then widened to the compute type C. */
template <class C>
__device__ __forceinline__ C tg__cuda_load_as(const char *p, tg_dtype st, tg_dtype ct)
{
    if (st == ct) return tg__cuda_load<C>(p, st);
    alignas(8) char buf[8];
    tg__pw_convert(buf, ct, p, st);
    return tg__cuda_load<C>(buf, ct);
}

/* A result r (compute type, or bool) stored as the CPU does: rounded to the common dtype ct,
 * then converted to the output dtype ot (the iterator's copy-back). */
template <class R>
__device__ __forceinline__ void tg__cuda_store_as(char *p, tg_dtype ot, tg_dtype ct, R r)
{
    if (ot == ct) {
        tg__cuda_store(p, ot, r);
        return;
    }
    alignas(8) char buf[8];
    tg__cuda_store(buf, ct, r);
    tg__pw_convert(p, ot, buf, ct);
}

/* ------------------------------------------------------------------ calling the functor */

template <int NIN, class F, class C>
__device__ __forceinline__ auto tg__cuda_apply(const F &f, const C *v)
{
    if constexpr (NIN == 1) return f(v[0]);
    else if constexpr (NIN == 2) return f(v[0], v[1]);
    else return f(v[0], v[1], v[2]);
}

/* ------------------------------------------------------------------ kernels */

/* What every pointwise kernel gets (by value). data[0] is the output, data[1 + k] input k;
 * host inputs have host[k] set and their value (already in compute type) in host_val[k]. */
template <int NIN, class C> struct tg_cuda_pw_args {
    char *data[NIN + 1];
    tg_dtype dtypes[NIN + 1];
    tg_dtype common;
    bool host[NIN];
    C host_val[NIN];
    int64_t n;
};

template <class T, int VEC> struct alignas(sizeof(T) * VEC) tg_cuda_vec {
    T v[VEC];
};

/* Strided path: any layout, any dtypes. */
template <int NIN, class C, class F>
__global__ void tg__cuda_pw_strided_kernel(tg_cuda_pw_args<NIN, C> a, tg_cuda_offsets<NIN + 1> oc,
                                           F f)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
        int64_t off[NIN + 1];
        oc.get(i, off);
        C v[NIN];
#pragma unroll
        for (int k = 0; k < NIN; k++)
            v[k] = a.host[k]
                       ? a.host_val[k]
                       : tg__cuda_load_as<C>(a.data[k + 1] + off[k + 1], a.dtypes[k + 1], a.common);
        tg__cuda_store_as(a.data[0] + off[0], a.dtypes[0], a.common, tg__cuda_apply<NIN>(f, v));
    }
}

/* Contiguous path: inputs of storage type TI, output TO (TI or bool), VEC elements per step
 * (VEC == 1: no alignment needed). The first n - n % VEC elements go in vectors, the rest one
 * at a time. */
template <int VEC, int NIN, class TI, class TO, class C, class F>
__global__ void tg__cuda_pw_contig_kernel(tg_cuda_pw_args<NIN, C> a, F f)
{
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nvec = a.n / VEC;
    for (int64_t i = tid; i < nvec; i += step) {
        tg_cuda_vec<TI, VEC> in[NIN];
#pragma unroll
        for (int k = 0; k < NIN; k++)
            if (!a.host[k]) in[k] = ((const tg_cuda_vec<TI, VEC> *)a.data[k + 1])[i];
        tg_cuda_vec<TO, VEC> o;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            C v[NIN];
#pragma unroll
            for (int k = 0; k < NIN; k++)
                v[k] = a.host[k] ? a.host_val[k] : (C)tg__cuda_widen<TI>(in[k].v[j]);
            o.v[j] = tg__cuda_narrow<TO>(tg__cuda_apply<NIN>(f, v));
        }
        ((tg_cuda_vec<TO, VEC> *)a.data[0])[i] = o;
    }
    for (int64_t i = nvec * VEC + tid; i < a.n; i += step) {
        C v[NIN];
#pragma unroll
        for (int k = 0; k < NIN; k++)
            v[k] =
                a.host[k] ? a.host_val[k] : (C)tg__cuda_widen<TI>(((const TI *)a.data[k + 1])[i]);
        ((TO *)a.data[0])[i] = tg__cuda_narrow<TO>(tg__cuda_apply<NIN>(f, v));
    }
}

/* ------------------------------------------------------------------ host side */

static inline bool tg__cuda_aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

/* Launches the contiguous kernel with the widest vector every pointer allows. */
template <int NIN, class TI, class TO, class C, class F>
static void tg__cuda_pw_launch_contig(const tg_cuda_pw_args<NIN, C> &a, const F &f, cudaStream_t s)
{
    constexpr int VEC = 16 / sizeof(TI) > 0 ? (int)(16 / sizeof(TI)) : 1;
    bool aligned = tg__cuda_aligned(a.data[0], sizeof(TO) * VEC);
    for (int k = 0; k < NIN; k++)
        aligned = aligned && (a.host[k] || tg__cuda_aligned(a.data[k + 1], sizeof(TI) * VEC));
    if (aligned && a.n >= VEC) {
        unsigned blocks = tg__cuda_blocks((a.n + VEC - 1) / VEC, TG_CUDA_THREADS);
        tg__cuda_pw_contig_kernel<VEC, NIN, TI, TO, C, F><<<blocks, TG_CUDA_THREADS, 0, s>>>(a, f);
    } else {
        unsigned blocks = tg__cuda_blocks(a.n, TG_CUDA_THREADS);
        tg__cuda_pw_contig_kernel<1, NIN, TI, TO, C, F><<<blocks, TG_CUDA_THREADS, 0, s>>>(a, f);
    }
}

/* Whether the contiguous path applies: one dim after coalescing, every device operand with a
 * unit stride (or a single element), inputs in the common dtype, output common or bool. */
static inline bool tg__cuda_pw_is_contig(const tg_iter *it)
{
    if (it->ndim != 1) return false;
    if (it->dtypes[0] != it->dtype && it->dtypes[0] != TG_BOOL) return false;
    for (int k = 0; k < it->nops; k++) {
        bool host = k >= it->noutputs && tg__cuda_is_host_operand(it, k);
        if (host) continue;
        if (k >= it->noutputs && it->dtypes[k] != it->dtype) return false;
        if (it->sizes[0] > 1 && it->strides[k][0] != (int64_t)tg_dtype_size(it->dtypes[k]))
            return false;
    }
    return true;
}

/* Runs f over a built iteration with one output and NIN inputs, on the output's device and
 * stream. Does not finish the iterator. 0, or -1 with an error (the caller aborts the
 * iterator then). */
template <unsigned KINDS, int NIN, class F> static int tg__cuda_pw_run(tg_iter *it, const F &f)
{
    static_assert(NIN >= 1 && NIN <= 3, "1 to 3 inputs");
    if (tg__cuda_check_outputs(it) != 0) return -1;
    if (it->numel == 0) return 0;
    const int device = tg__cuda_iter_device(it);
    tg_cuda_device_guard guard(device);
    cudaStream_t stream = tg__cuda_stream(device);
    bool kind_ok = false;
    tg__cuda_dispatch(it->dtype, [&](auto tag) {
        using TI = typename decltype(tag)::type;
        using C = typename tg_cuda_compute_for<F, TI>::type;
        if constexpr ((KINDS & tg_cuda_kind_of<C>::value) != 0) {
            kind_ok = true;
            tg_cuda_pw_args<NIN, C> a;
            a.common = it->dtype;
            a.n = it->numel;
            for (int k = 0; k <= NIN; k++) {
                a.data[k] = it->data[k];
                a.dtypes[k] = it->dtypes[k];
            }
            for (int k = 0; k < NIN; k++) {
                a.host[k] = tg__cuda_is_host_operand(it, 1 + k);
                a.host_val[k] = C(0);
                if (a.host[k]) {
                    /* The CPU's view of the value: cast to the common dtype, then widened. */
                    alignas(16) char buf[16];
                    tg__pw_convert(buf, it->dtype, it->data[1 + k], it->dtypes[1 + k]);
                    a.host_val[k] = tg__cuda_host_value<C>(buf, it->dtype);
                    a.data[1 + k] = NULL;
                }
            }
            if (tg__cuda_pw_is_contig(it)) {
                if (it->dtypes[0] == it->dtype)
                    tg__cuda_pw_launch_contig<NIN, TI, TI>(a, f, stream);
                else tg__cuda_pw_launch_contig<NIN, TI, bool>(a, f, stream);
            } else {
                tg_cuda_offsets<NIN + 1> oc = tg__cuda_offsets_from_iter<NIN + 1>(it);
                unsigned blocks = tg__cuda_blocks(a.n, TG_CUDA_THREADS);
                tg__cuda_pw_strided_kernel<NIN, C, F>
                    <<<blocks, TG_CUDA_THREADS, 0, stream>>>(a, oc, f);
            }
        }
    });
    if (!kind_ok)
        return tg__fail(it->op, "CUDA kernel has no %s instantiation",
                        tg__dtype_torch_name(it->dtype));
    return tg__cuda_launch_ok(it->op);
}

/* ------------------------------------------------------------------ error flags */

/* A device int that kernels set to report a per-element error (integer division by zero):
 * zeroed on the stream, read back after the kernel (which synchronises the stream). */
struct tg_cuda_flag {
    int *dev = nullptr;
    int device = 0;
    const char *op = nullptr;
    int init(const char *op_, int device_)
    {
        op = op_;
        device = device_;
        dev = (int *)tg__cuda_alloc(op, sizeof(int), device);
        if (!dev) return -1;
        return tg__cuda_ok(op, cudaMemsetAsync(dev, 0, sizeof(int), tg__cuda_stream(device)));
    }
    /* 0/1 for the flag's value, -1 with an error. */
    int read()
    {
        int h = 0;
        cudaStream_t s = tg__cuda_stream(device);
        if (tg__cuda_ok(op, cudaMemcpyAsync(&h, dev, sizeof(int), cudaMemcpyDeviceToHost, s)) != 0)
            return -1;
        if (tg__cuda_ok(op, cudaStreamSynchronize(s)) != 0) return -1;
        return h != 0;
    }
    ~tg_cuda_flag()
    {
        if (dev) tg__cuda_free(dev, sizeof(int), device);
    }
};

#endif
