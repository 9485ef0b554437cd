/* The cuDNN path of the CUDA convolutions (built when the toolkit has cuDNN: TG_WITH_CUDNN, see
 * the Makefile). kernels/cuda/conv.cu asks it first for each of its three passes and falls back
 * to its own im2col + cuBLAS path when this declines (cuDNN absent, TG_CUDA_CONV=im2col, sizes
 * beyond cuDNN's 32-bit descriptors, no deterministic algorithm within the workspace limit).
 *
 * The passes, in conv_checks.h's terms (the im side is read by im2col, the col side is the
 * GEMM's output), map onto cuDNN's three convolution calls with the same descriptors:
 *   to_col  cudnnConvolutionForward        x = im, y = col (beta 1 onto the bias-filled output)
 *   to_im   cudnnConvolutionBackwardData   dy = col, dx = im (beta 1 onto the bias)
 *   weight  cudnnConvolutionBackwardFilter x = im, dy = col, dw (beta 0)
 * 1-d convolutions are 2-d ones with a height of 1. Algorithms come from cuDNN's heuristics
 * (the *_v7 queries), the fastest deterministic one whose workspace is at most
 * WORKSPACE_LIMIT; math is CUDNN_FMA_MATH (full float32, no TF32, as the cuBLAS path).
 * One cuDNN handle per device, created on first use and kept, bound to the device's stream on
 * each call. */
#include "conv_cudnn.cuh"

#ifdef TG_WITH_CUDNN
#include <climits>
#include <cudnn.h>
#include <mutex>

#define WORKSPACE_LIMIT ((size_t)1 << 30)
#define MAX_DEVICES 64

static int cudnn_ok(const char *op, cudnnStatus_t s)
{
    if (s == CUDNN_STATUS_SUCCESS) return 0;
    return tg__fail(op, "cuDNN error: %s", cudnnGetErrorString(s));
}

static cudnnHandle_t handle_of(const char *op, int device, cudaStream_t st)
{
    static cudnnHandle_t handles[MAX_DEVICES];
    static std::mutex lock;
    if (device < 0 || device >= MAX_DEVICES) return NULL;
    std::lock_guard<std::mutex> g(lock);
    if (!handles[device] && cudnn_ok(op, cudnnCreate(&handles[device])) != 0) return NULL;
    if (cudnn_ok(op, cudnnSetStream(handles[device], st)) != 0) return NULL;
    return handles[device];
}

/* The descriptors of one convolution; destroyed by the destructor. */
struct conv_desc {
    cudnnTensorDescriptor_t im = NULL, col = NULL;
    cudnnFilterDescriptor_t w = NULL;
    cudnnConvolutionDescriptor_t conv = NULL;
    ~conv_desc()
    {
        if (im) cudnnDestroyTensorDescriptor(im);
        if (col) cudnnDestroyTensorDescriptor(col);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (conv) cudnnDestroyConvolutionDescriptor(conv);
    }
};

static bool fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Contiguous NC(D)HW dims and strides of n x c x sp[first..2]. */
static void nd_of(int64_t n, int64_t c, const int64_t *sp, int first, int *dims, int *strides)
{
    int nd = 2 + (3 - first);
    dims[0] = (int)n;
    dims[1] = (int)c;
    for (int i = first; i < 3; i++) dims[2 + i - first] = (int)sp[i];
    strides[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
}

/* 1: descriptors set; 0: beyond cuDNN's int descriptors (the caller falls back); -1: error. */
static int describe(const char *op, const tg__conv_geom &g, tg_dtype dt, conv_desc *d)
{
    int64_t imn = g.n * g.im_c * tg__conv_prod3(g.im_sp),
            coln = g.n * g.col_c * tg__conv_prod3(g.col_sp), wn = g.col_c * tg__conv_col_rows(&g);
    if (!fits(imn) || !fits(coln) || !fits(wn)) return 0;
    int first = g.nsp == 3 ? 0 : 1, nsd = 3 - first, nd = 2 + nsd;
    cudnnDataType_t ty = dt == TG_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    int dims[5], strides[5], wdims[5], pad[3], stride[3], dil[3];
    nd_of(g.n, g.im_c, g.im_sp, first, dims, strides);
    if (cudnn_ok(op, cudnnCreateTensorDescriptor(&d->im)) ||
        cudnn_ok(op, cudnnSetTensorNdDescriptor(d->im, ty, nd, dims, strides)))
        return -1;
    nd_of(g.n, g.col_c, g.col_sp, first, dims, strides);
    if (cudnn_ok(op, cudnnCreateTensorDescriptor(&d->col)) ||
        cudnn_ok(op, cudnnSetTensorNdDescriptor(d->col, ty, nd, dims, strides)))
        return -1;
    wdims[0] = (int)g.col_c;
    wdims[1] = (int)(g.im_c / g.groups);
    for (int i = first; i < 3; i++) {
        wdims[2 + i - first] = (int)g.k[i];
        pad[i - first] = (int)g.pad[i];
        stride[i - first] = (int)g.stride[i];
        dil[i - first] = (int)g.dil[i];
    }
    if (cudnn_ok(op, cudnnCreateFilterDescriptor(&d->w)) ||
        cudnn_ok(op, cudnnSetFilterNdDescriptor(d->w, ty, CUDNN_TENSOR_NCHW, nd, wdims)) ||
        cudnn_ok(op, cudnnCreateConvolutionDescriptor(&d->conv)) ||
        cudnn_ok(op, cudnnSetConvolutionNdDescriptor(d->conv, nsd, pad, stride, dil,
                                                     CUDNN_CROSS_CORRELATION, ty)) ||
        cudnn_ok(op, cudnnSetConvolutionGroupCount(d->conv, (int)g.groups)) ||
        cudnn_ok(op, cudnnSetConvolutionMathType(d->conv, CUDNN_FMA_MATH)))
        return -1;
    return 1;
}

/* The first (fastest expected) deterministic algorithm of a *_v7 query's results whose
 * workspace fits; -1 when there is none. */
template <typename Perf> static int pick(const Perf *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i].status == CUDNN_STATUS_SUCCESS && p[i].determinism == CUDNN_DETERMINISTIC &&
            p[i].memory <= WORKSPACE_LIMIT)
            return i;
    return -1;
}

/* Scratch memory of the caching allocator for the duration of one call. */
struct workspace {
    void *p = NULL;
    size_t n = 0;
    int device = 0;
    ~workspace()
    {
        if (p) tg__cuda_free(p, n, device);
    }
    int get(const char *op, size_t bytes, int dev)
    {
        device = dev;
        n = bytes;
        if (!bytes) return 0;
        p = tg__cuda_alloc(op, bytes, dev);
        return p ? 0 : -1;
    }
};

int tg__cudnn_conv(const char *op, tg_cudnn_pass pass, const tg__conv_geom &g, tg_dtype dt,
                   int device, cudaStream_t st, void *im, void *col, void *w)
{
    const char *mode = getenv("TG_CUDA_CONV");
    if (mode && !strcmp(mode, "im2col")) return 0;
    if (g.n == 0) return 0;
    conv_desc d;
    int rc = describe(op, g, dt, &d);
    if (rc <= 0) return rc;
    cudnnHandle_t h = handle_of(op, device, st);
    if (!h) return -1;
    float one_f = 1, zero_f = 0;
    double one_d = 1, zero_d = 0;
    bool f64 = dt == TG_FLOAT64;
    const void *one = f64 ? (const void *)&one_d : (const void *)&one_f;
    const void *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
    workspace ws;
    int n = 0;
    if (pass == TG_CUDNN_TO_COL) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        if (cudnn_ok(op, cudnnGetConvolutionForwardAlgorithm_v7(h, d.im, d.w, d.conv, d.col,
                                                                CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                                &n, perf)))
            return -1;
        int i = pick(perf, n);
        if (i < 0) return 0;
        size_t bytes = 0;
        if (cudnn_ok(op, cudnnGetConvolutionForwardWorkspaceSize(h, d.im, d.w, d.conv, d.col,
                                                                 perf[i].algo, &bytes)) ||
            ws.get(op, bytes, device))
            return -1;
        rc = cudnn_ok(op, cudnnConvolutionForward(h, one, d.im, im, d.w, w, d.conv, perf[i].algo,
                                                  ws.p, bytes, one, d.col, col));
    } else if (pass == TG_CUDNN_TO_IM) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        if (cudnn_ok(op, cudnnGetConvolutionBackwardDataAlgorithm_v7(
                             h, d.w, d.col, d.conv, d.im, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n,
                             perf)))
            return -1;
        int i = pick(perf, n);
        if (i < 0) return 0;
        size_t bytes = 0;
        if (cudnn_ok(op, cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.col, d.conv, d.im,
                                                                      perf[i].algo, &bytes)) ||
            ws.get(op, bytes, device))
            return -1;
        rc = cudnn_ok(op, cudnnConvolutionBackwardData(h, one, d.w, w, d.col, col, d.conv,
                                                       perf[i].algo, ws.p, bytes, one, d.im, im));
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        if (cudnn_ok(op, cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                             h, d.im, d.col, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                             &n, perf)))
            return -1;
        int i = pick(perf, n);
        if (i < 0) return 0;
        size_t bytes = 0;
        if (cudnn_ok(op, cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.im, d.col, d.conv, d.w,
                                                                        perf[i].algo, &bytes)) ||
            ws.get(op, bytes, device))
            return -1;
        rc = cudnn_ok(op, cudnnConvolutionBackwardFilter(h, one, d.im, im, d.col, col, d.conv,
                                                         perf[i].algo, ws.p, bytes, zero, d.w, w));
    }
    return rc == 0 ? 1 : -1;
}

#endif
