/* visionops::nms on CUDA: the order by score and the final greedy pass are host work on a few
 * hundred values; the N x N overlaps, the costly part, are computed on the device
 * (vo_nms_mask_cuda) as bit masks, read back once. Same result as nms_cpu.c; the indices come
 * back on the boxes' device, as in torchvision. */
#include <stdlib.h>
#include <string.h>

#include "visionops/kernels/nms.h"
#include "visionops_checks.h"
#include "visionops_cuda.h"

static int by_decreasing(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb; /* pairs (score, index) */
    if (a[0] != b[0]) return a[0] < b[0] ? 1 : -1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

tg_tensor *visionops__cuda_nms_cuda(tg_tensor *dets, tg_tensor *scores, double iou_threshold)
{
    const char *op = "visionops::nms";
    if (vo_check_nms(dets, scores)) return NULL;
    tg_device dev = tg_tensor_device(dets);
    int64_t n = tg_tensor_size(dets, 0), blocks = (n + 63) / 64;
    double *pairs = malloc(sizeof(double) * (size_t)(2 * n + 2)),
           *sc = malloc(sizeof(double) * (size_t)(n + 1));
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(n + 1)),
            *keep = malloc(sizeof(int64_t) * (size_t)(n + 1));
    uint64_t *removed = calloc((size_t)blocks + 1, sizeof(uint64_t));
    tg_tensor *boxes = NULL, *order_dev = NULL, *mask = NULL, *mask_host = NULL, *out = NULL;
    if (!pairs || !sc || !order || !keep || !removed) {
        tg_set_error(op, "out of memory for %lld boxes", (long long)n);
        goto done;
    }
    /* the order by score, on the host */
    if (tg_tensor_to_doubles(scores, sc, n)) goto done;
    for (int64_t i = 0; i < n; i++) pairs[2 * i] = sc[i], pairs[2 * i + 1] = (double)i;
    qsort(pairs, (size_t)n, 2 * sizeof(double), by_decreasing);
    for (int64_t i = 0; i < n; i++) order[i] = (int64_t)pairs[2 * i + 1];
    /* the overlaps, on the device */
    tg_tensor *order_host = tg_tensor_from_data(order, (int64_t[]){ n }, 1, TG_INT64);
    order_dev = order_host ? tg_to_device(order_host, dev) : NULL;
    tg_release(order_host);
    boxes = tg_contiguous(dets);
    mask = tg_empty(TG_INTS(n * blocks), .dtype = TG_INT64, .device = dev);
    if (!order_dev || !boxes || !mask) goto done;
    const char *err = vo_nms_mask_cuda(tg_tensor_data(boxes), tg_tensor_dtype(boxes) == TG_FLOAT64,
                                       tg_tensor_data(order_dev), n, iou_threshold,
                                       tg_tensor_data(mask), tg_cuda_stream(dev.index));
    if (err) {
        tg_set_error(op, "CUDA error: %s", err);
        goto done;
    }
    /* the greedy pass over the masks, on the host */
    if (!(mask_host = tg_to_device(mask, TG_DEVICE_CPU))) goto done;
    const uint64_t *bits = tg_tensor_data(mask_host);
    int64_t nkeep = 0;
    for (int64_t i = 0; i < n; i++) {
        if (removed[i / 64] >> (i % 64) & 1) continue;
        keep[nkeep++] = order[i];
        for (int64_t b = 0; b < blocks; b++) removed[b] |= bits[i * blocks + b];
    }
    tg_tensor *keep_host = tg_tensor_from_data(keep, (int64_t[]){ nkeep }, 1, TG_INT64);
    out = keep_host ? tg_to_device(keep_host, dev) : NULL;
    tg_release(keep_host);
done:
    tg_release(boxes);
    tg_release(order_dev);
    tg_release(mask);
    tg_release(mask_host);
    free(pairs);
    free(sc);
    free(order);
    free(keep);
    free(removed);
    return out;
}
