/* Embedding on CUDA: embedding (a row gather) and embedding_dense_backward (a scatter-add with
 * atomicAdd, float32 and float64), with the CPU kernels' semantics and checks
 * (kernels/common/embnorm_checks.h).
 *
 * Index bounds: the kernels never touch a row outside the table. A thread that meets an index
 * outside [0, rows) skips it (the forward writes zeros) and raises a device flag; the host
 * reads the flag back after the launch (one synchronisation, as PyTorch's CPU path checks on
 * the host) and turns it into the CPU's error, "index out of range in self", releasing the
 * result. */
#include "tg_cuda.cuh"
#include "embnorm_checks.h"

#include "kernels/embedding.h"
#include "kernels/embedding_dense_backward.h"

#define EMB_THREADS 256

/* out[i, j] = w[idx[i], j] for n * d elements; E is an unsigned type of the element's size. */
template <class E, class I>
__global__ void emb_gather_kernel(const E *w, const I *idx, E *out, int64_t n, int64_t d,
                                  int64_t rows, int *bad)
{
    int64_t total = n * d;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = e / d, j = e % d, r = (int64_t)idx[i];
        if (r < 0 || r >= rows) {
            *bad = 1;
            out[e] = (E)0;
            continue;
        }
        out[e] = w[r * d + j];
    }
}

/* Only the bounds (a table with no columns: nothing to copy, indices still checked). */
template <class I>
__global__ void emb_bounds_kernel(const I *idx, int64_t n, int64_t rows, int *bad)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = (int64_t)idx[i];
        if (r < 0 || r >= rows) *bad = 1;
    }
}

static void launch_bounds(const tg_tensor *idx, int64_t n, int64_t rows, int *bad, cudaStream_t st)
{
    unsigned blocks = tg__cuda_blocks(n, EMB_THREADS);
    if (idx->dtype == TG_INT64)
        emb_bounds_kernel<int64_t>
            <<<blocks, EMB_THREADS, 0, st>>>((const int64_t *)tg__k_data(idx), n, rows, bad);
    else
        emb_bounds_kernel<int32_t>
            <<<blocks, EMB_THREADS, 0, st>>>((const int32_t *)tg__k_data(idx), n, rows, bad);
}

/* counts[idx[i]] += 1 (indices in range only). */
template <class I>
__global__ void emb_count_kernel(const I *idx, int64_t n, int64_t rows, int *counts)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = (int64_t)idx[i];
        if (r >= 0 && r < rows) atomicAdd(counts + r, 1);
    }
}

/* out[idx[i], j] += g[i, j] (/ counts[idx[i]]), skipping padding_idx. */
template <class T, class I>
__global__ void emb_scatter_kernel(const T *g, const I *idx, T *out, int64_t n, int64_t d,
                                   int64_t rows, int64_t padding_idx, const int *counts, int *bad)
{
    int64_t total = n * d;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = e / d, j = e % d, r = (int64_t)idx[i];
        if (r < 0 || r >= rows) {
            *bad = 1;
            continue;
        }
        if (r == padding_idx) continue;
        T v = g[e];
        if (counts) v /= (T)counts[r];
        atomicAdd(out + r * d + j, v);
    }
}

/* A zeroed device int workspace of n elements (flag, counts). */
static tg_tensor *dev_ints(const char *op, int64_t n, tg_device dev, cudaStream_t st)
{
    if (n < 1) n = 1;
    tg_tensor *t = tg__empty(op, &n, 1, TG_INT32, dev);
    if (t && tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(t), 0, (size_t)n * sizeof(int), st))) {
        tg_release(t);
        t = NULL;
    }
    return t;
}

/* Reads the bad-index flag back (synchronising the stream): 0, or -1 with the error. */
static int check_flag(const char *op, const tg_tensor *flag, cudaStream_t st)
{
    int bad = 0;
    if (tg__cuda_ok(
            op, cudaMemcpyAsync(&bad, tg__k_data(flag), sizeof bad, cudaMemcpyDeviceToHost, st)) ||
        tg__cuda_ok(op, cudaStreamSynchronize(st)))
        return -1;
    if (bad) return tg__fail(op, "index out of range in self");
    return 0;
}

template <class E>
static void launch_gather(const tg_tensor *w, const tg_tensor *idx, tg_tensor *out, int64_t n,
                          int64_t d, int64_t rows, int *bad, cudaStream_t st)
{
    unsigned blocks = tg__cuda_blocks(n * d, EMB_THREADS);
    if (idx->dtype == TG_INT64)
        emb_gather_kernel<E, int64_t><<<blocks, EMB_THREADS, 0, st>>>(
            (const E *)tg__k_data(w), (const int64_t *)tg__k_data(idx), (E *)tg__k_data(out), n, d,
            rows, bad);
    else
        emb_gather_kernel<E, int32_t><<<blocks, EMB_THREADS, 0, st>>>(
            (const E *)tg__k_data(w), (const int32_t *)tg__k_data(idx), (E *)tg__k_data(out), n, d,
            rows, bad);
}

extern "C" tg_tensor *tg__cuda_embedding(tg_tensor *weight, tg_tensor *indices, int64_t padding_idx,
                                         bool scale_grad_by_freq, bool sparse)
{
    (void)padding_idx; /* both only change the gradient */
    (void)scale_grad_by_freq;
    const char *op = "embedding";
    if (tg__embedding_check(op, weight, indices, sparse) != 0) return NULL;
    if (tg__cuda_same_device(op, weight, indices)) return NULL;
    if (indices->ndim + 1 > TG_MAX_DIMS) {
        tg__error(op, "indices have too many dimensions (%lld)", (long long)indices->ndim);
        return NULL;
    }
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, weight->device, &rc);
    if (rc) return NULL;
    int64_t n = tg__numel(indices), rows = weight->sizes[0], d = weight->sizes[1];
    int64_t sz[TG_MAX_DIMS];
    for (int64_t i = 0; i < indices->ndim; i++) sz[i] = indices->sizes[i];
    sz[indices->ndim] = d;
    tg_tensor *w = tg__cuda_contiguous(op, weight, weight->dtype);
    tg_tensor *idx = w ? tg__cuda_contiguous(op, indices, indices->dtype) : NULL;
    tg_tensor *out =
        idx ? tg__empty(op, sz, indices->ndim + 1, weight->dtype, weight->device) : NULL;
    tg_tensor *flag = out ? dev_ints(op, 1, weight->device, st) : NULL;
    bool ok = flag != NULL;
    if (ok && n > 0) {
        int *bad = (int *)tg__k_data(flag);
        if (d == 0) launch_bounds(idx, n, rows, bad, st);
        else switch (tg_dtype_size(weight->dtype)) {
            case 1: launch_gather<uint8_t>(w, idx, out, n, d, rows, bad, st); break;
            case 2: launch_gather<uint16_t>(w, idx, out, n, d, rows, bad, st); break;
            case 4: launch_gather<uint32_t>(w, idx, out, n, d, rows, bad, st); break;
            default: launch_gather<uint64_t>(w, idx, out, n, d, rows, bad, st); break;
            }
        ok = tg__cuda_launch_ok(op) == 0 && check_flag(op, flag, st) == 0;
    }
    tg_release(w);
    tg_release(idx);
    tg_release(flag);
    return tg__k_result(ok, out);
}

template <class T, class I>
static void launch_scatter(const tg_tensor *g, const tg_tensor *idx, tg_tensor *out, int64_t n,
                           int64_t d, int64_t rows, int64_t padding_idx, int *counts, int *bad,
                           cudaStream_t st)
{
    const I *ip = (const I *)tg__k_data(idx);
    if (counts)
        emb_count_kernel<I>
            <<<tg__cuda_blocks(n, EMB_THREADS), EMB_THREADS, 0, st>>>(ip, n, rows, counts);
    emb_scatter_kernel<T, I><<<tg__cuda_blocks(n * d, EMB_THREADS), EMB_THREADS, 0, st>>>(
        (const T *)tg__k_data(g), ip, (T *)tg__k_data(out), n, d, rows, padding_idx, counts, bad);
}

/* launch_scatter with the index type of idx (int64 or int32). */
template <class T>
static void launch_scatter_idx(const tg_tensor *g, const tg_tensor *idx, tg_tensor *out, int64_t n,
                               int64_t d, int64_t rows, int64_t padding_idx, int *counts, int *bad,
                               cudaStream_t st)
{
    if (idx->dtype == TG_INT64)
        launch_scatter<T, int64_t>(g, idx, out, n, d, rows, padding_idx, counts, bad, st);
    else launch_scatter<T, int32_t>(g, idx, out, n, d, rows, padding_idx, counts, bad, st);
}

extern "C" tg_tensor *tg__cuda_embedding_dense_backward(tg_tensor *grad_output, tg_tensor *indices,
                                                        int64_t num_weights, int64_t padding_idx,
                                                        bool scale_grad_by_freq)
{
    const char *op = "embedding_dense_backward";
    int64_t d;
    if (tg__embedding_backward_check(op, grad_output, indices, num_weights, &d) != 0) return NULL;
    if (tg__cuda_same_device(op, grad_output, indices)) return NULL;
    int rc;
    tg_device dev = grad_output->device;
    cudaStream_t st = tg__cuda_select_stream(op, dev, &rc);
    if (rc) return NULL;
    tg_dtype dt = grad_output->dtype;
    int64_t n = tg__numel(indices), sz[2] = { num_weights, d };
    tg_tensor *g = tg__cuda_contiguous(op, grad_output, dt);
    tg_tensor *idx = g ? tg__cuda_contiguous(op, indices, indices->dtype) : NULL;
    tg_tensor *out = idx ? tg__empty(op, sz, 2, dt, dev) : NULL;
    tg_tensor *flag = out ? dev_ints(op, 1, dev, st) : NULL;
    tg_tensor *cnt = flag && scale_grad_by_freq ? dev_ints(op, num_weights, dev, st) : NULL;
    bool ok = flag && (!scale_grad_by_freq || cnt);
    if (ok && tg__numel(out) > 0)
        ok = tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(out), 0,
                                             (size_t)tg__numel(out) * tg_dtype_size(dt), st)) == 0;
    if (ok && n > 0) {
        int *bad = (int *)tg__k_data(flag), *counts = cnt ? (int *)tg__k_data(cnt) : NULL;
        if (d == 0) launch_bounds(idx, n, num_weights, bad, st);
        else if (dt == TG_FLOAT32)
            launch_scatter_idx<float>(g, idx, out, n, d, num_weights, padding_idx, counts, bad, st);
        else
            launch_scatter_idx<double>(g, idx, out, n, d, num_weights, padding_idx, counts, bad,
                                       st);
        ok = tg__cuda_launch_ok(op) == 0 && check_flag(op, flag, st) == 0;
    }
    tg_release(g);
    tg_release(idx);
    tg_release(flag);
    tg_release(cnt);
    return tg__k_result(ok, out);
}
