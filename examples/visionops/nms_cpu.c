/* visionops::nms on the CPU, torchvision's greedy suppression: boxes visited by decreasing
 * score (ties in index order); a box is kept unless a kept box overlaps it by an IoU above
 * iou_threshold. dets (N, 4) rows [x1, y1, x2, y2], scores (N); out (M) int64 indices of the
 * kept boxes, by decreasing score. Computed in double whatever the dtype (boxes are few). */
#include <stdlib.h>

#include "visionops/kernels/nms.h"
#include "visionops_checks.h"

typedef struct scored {
    double score;
    int64_t index;
} scored;

static int by_decreasing_score(const void *pa, const void *pb)
{
    const scored *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static double iou(const double *a, const double *b)
{
    double w = fmin(a[2], b[2]) - fmax(a[0], b[0]), h = fmin(a[3], b[3]) - fmax(a[1], b[1]);
    double inter = (w > 0 ? w : 0) * (h > 0 ? h : 0);
    double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    return inter / (area_a + area_b - inter);
}

tg_tensor *visionops__cpu_nms_cpu(tg_tensor *dets, tg_tensor *scores, double iou_threshold)
{
    if (vo_check_nms(dets, scores)) return NULL;
    int64_t n = tg_tensor_size(dets, 0);
    double *box = malloc(sizeof(double) * (size_t)(4 * n + 1)),
           *sc = malloc(sizeof(double) * (size_t)(n + 1));
    scored *order = malloc(sizeof(scored) * (size_t)(n + 1));
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(n + 1));
    bool *suppressed = calloc((size_t)n + 1, 1);
    tg_tensor *out = NULL;
    if (!box || !sc || !order || !keep || !suppressed) {
        tg_set_error("visionops::nms", "out of memory for %lld boxes", (long long)n);
        goto done;
    }
    if (tg_tensor_to_doubles(dets, box, 4 * n) || tg_tensor_to_doubles(scores, sc, n)) goto done;
    for (int64_t i = 0; i < n; i++) order[i] = (scored){ sc[i], i };
    qsort(order, (size_t)n, sizeof *order, by_decreasing_score);
    int64_t nkeep = 0;
    for (int64_t a = 0; a < n; a++) {
        int64_t i = order[a].index;
        if (suppressed[i]) continue;
        keep[nkeep++] = i;
        for (int64_t b = a + 1; b < n; b++) {
            int64_t j = order[b].index;
            if (!suppressed[j] && iou(&box[4 * i], &box[4 * j]) > iou_threshold)
                suppressed[j] = true;
        }
    }
    out = tg_tensor_from_data(keep, (int64_t[]){ nkeep }, 1, TG_INT64);
done:
    free(box);
    free(sc);
    free(order);
    free(keep);
    free(suppressed);
    return out;
}
