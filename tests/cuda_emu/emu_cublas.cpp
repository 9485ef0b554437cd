/* cuda-emu cuBLAS: handles bound to a device and a stream, and GemmEx / GemmStridedBatchedEx
 * as cuBLAS defines them: column-major, C (m x n) = alpha op(A) (m x k) op(B) (k x n) + beta C,
 * with op(X) = X or X^T, leading dimensions checked as cuBLAS checks them (lda >= max(1, rows
 * of A as stored), ...), beta == 0 meaning C is not read, alpha and beta read from host memory
 * at the call. The product is queued on the handle's stream like any other work; its operands
 * must lie wholly inside memory of the handle's device, else the process stops with a message
 * (on a GPU: an illegal address). Accumulation is in double, rounded once to C's type. */
#include "emu_internal.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"

#include <stdint.h>
#include <string.h>

struct cublasContext {
    int device;
    cudaStream_t stream;
};

using namespace tg_emu;

static double load(const char *p, cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_16F: {
        __half h;
        memcpy(&h, p, 2);
        return __half2float(h);
    }
    case CUDA_R_16BF: {
        __nv_bfloat16 h;
        memcpy(&h, p, 2);
        return __bfloat162float(h);
    }
    case CUDA_R_32F: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    default: {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    }
}

static void store(char *p, cudaDataType_t t, double v)
{
    switch (t) {
    case CUDA_R_16F: {
        __half h = __float2half_rn((float)v);
        memcpy(p, &h, 2);
        break;
    }
    case CUDA_R_16BF: {
        __nv_bfloat16 h = __float2bfloat16_rn((float)v);
        memcpy(p, &h, 2);
        break;
    }
    case CUDA_R_32F: {
        float f = (float)v;
        memcpy(p, &f, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

static size_t size_of(cudaDataType_t t) { return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2; }

/* TF32: float32 inputs keep 10 mantissa bits (round to nearest). */
static double tf32(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7f800000u) != 0x7f800000u) x = (x + 0x1000u) & ~0x1fffu;
    memcpy(&f, &x, 4);
    return f;
}

/* Elements spanned by a column-major rows x cols operand with leading dimension ld. */
static long long extent(int rows, int cols, int ld)
{
    return rows == 0 || cols == 0 ? 0 : (long long)(cols - 1) * ld + rows;
}

static void check_operand(const char *fn, const char *which, const void *p, long long elems,
                          size_t esize, long long stride, int batch, int device)
{
    if (elems == 0 || batch == 0) return;
    long long first = stride < 0 ? (long long)(batch - 1) * stride : 0;
    long long last = (stride > 0 ? (long long)(batch - 1) * stride : 0) + elems;
    const char *lo = (const char *)p + first * (long long)esize;
    const Block *b = find(lo, (size_t)(last - first) * esize);
    if (!b)
        die("%s: operand %s (%p, %lld elements) is not inside one device allocation", fn, which, p,
            last - first);
    if (b->device != device)
        die("%s: operand %s is memory of cuda:%d, the handle's device is cuda:%d", fn, which,
            b->device, device);
}

static cublasStatus_t gemm(const char *fn, cublasHandle_t h, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k, const void *alpha,
                           const void *A, cudaDataType_t at, int lda, long long sa, const void *B,
                           cudaDataType_t bt, int ldb, long long sb, const void *beta, void *C,
                           cudaDataType_t ct, int ldc, long long sc, int batch,
                           cublasComputeType_t comp)
{
    std::lock_guard<std::recursive_mutex> guard(lock());
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((ta != CUBLAS_OP_N && ta != CUBLAS_OP_T && ta != CUBLAS_OP_C) ||
        (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T && tb != CUBLAS_OP_C))
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
    const int arows = tA ? k : m, acols = tA ? m : k, brows = tB ? n : k, bcols = tB ? k : n;
    auto mx1 = [](int v) { return v > 1 ? v : 1; };
    if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < mx1(arows) || ldb < mx1(brows) ||
        ldc < mx1(m) || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (at != bt || at != ct) return CUBLAS_STATUS_NOT_SUPPORTED;
    bool ok = (comp == CUBLAS_COMPUTE_64F && at == CUDA_R_64F) ||
              (comp == CUBLAS_COMPUTE_32F &&
               (at == CUDA_R_32F || at == CUDA_R_16F || at == CUDA_R_16BF)) ||
              (comp == CUBLAS_COMPUTE_32F_FAST_TF32 && at == CUDA_R_32F);
    if (!ok) return CUBLAS_STATUS_NOT_SUPPORTED;
    const double al = comp == CUBLAS_COMPUTE_64F ? *(const double *)alpha : *(const float *)alpha;
    const double be = comp == CUBLAS_COMPUTE_64F ? *(const double *)beta : *(const float *)beta;
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    Stream *s = stream_of(h->stream);
    if (!s) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (s->device != h->device)
        die("%s: the handle of cuda:%d is bound to a stream of cuda:%d", fn, h->device, s->device);
    const size_t es = size_of(at);
    if (k > 0) {
        check_operand(fn, "A", A, extent(arows, acols, lda), es, sa, batch, h->device);
        check_operand(fn, "B", B, extent(brows, bcols, ldb), es, sb, batch, h->device);
    }
    check_operand(fn, "C", C, extent(m, n, ldc), es, sc, batch, h->device);
    const bool round_tf32 = comp == CUBLAS_COMPUTE_32F_FAST_TF32;
    enqueue(s, Op{ 1u << h->device, fn, [=] {
                      for (int b = 0; b < batch; b++) {
                          const char *a0 = (const char *)A + (long long)b * sa * (long long)es;
                          const char *b0 = (const char *)B + (long long)b * sb * (long long)es;
                          char *c0 = (char *)C + (long long)b * sc * (long long)es;
                          for (int j = 0; j < n; j++)
                              for (int i = 0; i < m; i++) {
                                  double acc = 0;
                                  for (int l = 0; l < k; l++) {
                                      long long ia =
                                          tA ? l + (long long)i * lda : i + (long long)l * lda;
                                      long long ib =
                                          tB ? j + (long long)l * ldb : l + (long long)j * ldb;
                                      double x = load(a0 + ia * (long long)es, at),
                                             y = load(b0 + ib * (long long)es, bt);
                                      if (round_tf32) {
                                          x = tf32(x);
                                          y = tf32(y);
                                      }
                                      acc += x * y;
                                  }
                                  char *c = c0 + (i + (long long)j * ldc) * (long long)es;
                                  double r = al * acc;
                                  if (be != 0) r += be * load(c, ct);
                                  store(c, ct, r);
                              }
                      }
                  } });
    return CUBLAS_STATUS_SUCCESS;
}

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t *handle)
{
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = new cublasContext{ dev, 0 };
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    return mode <= CUBLAS_TF32_TENSOR_OP_MATH ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType_t Atype, int lda, const void *B,
                            cudaDataType_t Btype, int ldb, const void *beta, void *C,
                            cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t)
{
    return gemm("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype,
                ldb, 0, beta, C, Ctype, ldc, 0, 1, computeType);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType_t Atype,
                                          int lda, long long strideA, const void *B,
                                          cudaDataType_t Btype, int ldb, long long strideB,
                                          const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    return gemm("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,
                computeType);
}

} // extern "C"
