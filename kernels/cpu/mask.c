/* masked_fill_ (Scalar and 0-dim Tensor value) and tril/triu (out=, functional and in place
 * through the structured out= kernel) on the CPU.
 *
 * masked_fill_ runs one iteration with self as the output and the bool mask as the input (the
 * iterator broadcasts the mask to self and refuses a mask that would grow self); the value is
 * converted to self's dtype once and its bytes are copied into each masked element, so every
 * dtype shares one loop. tril/triu visit each row of each matrix of the last two dims once
 * (rows in parallel), copying the kept column range and zeroing the rest (all-zero bytes are 0
 * in every dtype); in place only the dropped range is zeroed. */
#include "tg_kutil.h"
#include "mask_checks.h"

#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/masked_fill.h"
#include "kernels/tril.h"
#include "kernels/triu.h"

/* ------------------------------------------------------------------ masked_fill_ */

/* data[0] self (written), data[1] the bool mask. */
static void masked_fill_loop(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const tg_k_elem *c = ctx;
    if (c->size == 4 && strides[0] == 4 && strides[1] == 1) { /* float32/int32 contiguous */
        float v;
        memcpy(&v, c->bytes, 4);
        float *o = (float *)data[0];
        const unsigned char *m = (const unsigned char *)data[1];
        for (int64_t i = 0; i < n; i++)
            if (m[i]) o[i] = v;
        return;
    }
    for (int64_t i = 0; i < n; i++)
        if (*(const unsigned char *)(data[1] + i * strides[1]))
            memcpy(data[0] + i * strides[0], c->bytes, c->size);
}

static tg_tensor *masked_fill_impl(tg_tensor *self, tg_tensor *mask, double value)
{
    tg_iter it;
    if (tg__masked_fill_iter_build(&it, self, mask) != 0) return NULL;
    tg_k_elem c;
    tg__masked_fill_value_bytes(c.bytes, self->dtype, value);
    c.size = tg_dtype_size(self->dtype);
    tg__iter_for_each(&it, masked_fill_loop, &c);
    tg_tensor *r = tg__iter_finish(&it, 0);
    if (r) tg__bump_version(r);
    return r;
}

tg_tensor *tg__cpu_masked_fill__scalar(tg_tensor *self, tg_tensor *mask, double value)
{
    if (tg__masked_fill_check("masked_fill_", mask, NULL) != 0) return NULL;
    return masked_fill_impl(self, mask, value);
}

tg_tensor *tg__cpu_masked_fill__tensor(tg_tensor *self, tg_tensor *mask, tg_tensor *value)
{
    if (tg__masked_fill_check("masked_fill_", mask, value) != 0) return NULL;
    return masked_fill_impl(self, mask, tg_item(value));
}

/* ------------------------------------------------------------------ tril / triu */

typedef struct tri_job {
    const tg_tensor *src;
    tg_tensor *dst;
    bool lower, inplace;
    int64_t diagonal, rows, cols;
    size_t esize;
} tri_job;

/* Element offset of the first element of matrix b (row-major over the leading dims). */
static int64_t batch_offset(const tg_tensor *t, int64_t b)
{
    int64_t off = 0;
    for (int64_t d = t->ndim - 3; d >= 0 && b > 0; d--) {
        off += (b % t->sizes[d]) * t->strides[d];
        b /= t->sizes[d];
    }
    return off;
}

/* Rows [lo, hi) of all matrices, row r = (matrix r / rows, row r % rows). */
static void tri_task(int64_t lo, int64_t hi, void *ctx)
{
    const tri_job *j = ctx;
    int64_t e = (int64_t)j->esize, nd = j->dst->ndim;
    int64_t drs = j->dst->strides[nd - 2], dcs = j->dst->strides[nd - 1];
    int64_t srs = j->src->strides[nd - 2], scs = j->src->strides[nd - 1];
    char *dbase = tg__k_data(j->dst);
    const char *sbase = tg__k_data(j->src);
    for (int64_t r = lo; r < hi; r++) {
        int64_t b = r / j->rows, i = r % j->rows, klo, khi;
        tg__tri_row_range(j->lower, i, j->cols, j->diagonal, &klo, &khi);
        char *d = dbase + (batch_offset(j->dst, b) + i * drs) * e;
        const char *s = sbase + (batch_offset(j->src, b) + i * srs) * e;
        if (dcs == 1 && (j->inplace || scs == 1)) {
            memset(d, 0, (size_t)(klo * e));
            if (!j->inplace) memcpy(d + klo * e, s + klo * e, (size_t)((khi - klo) * e));
            memset(d + khi * e, 0, (size_t)((j->cols - khi) * e));
            continue;
        }
        for (int64_t k = 0; k < j->cols; k++) {
            char *dk = d + k * dcs * e;
            if (k < klo || k >= khi) memset(dk, 0, j->esize);
            else if (!j->inplace) memcpy(dk, s + k * scs * e, j->esize);
        }
    }
}

static tg_tensor *tri_out(const char *op, bool lower, tg_tensor *self, int64_t diagonal,
                          tg_tensor *out)
{
    if (tg__tri_check(op, self) != 0) return NULL;
    tg_tensor *res = tg__k_prepare_out(op, out, self->sizes, self->ndim, self->dtype);
    if (!res) return NULL;
    int64_t nd = self->ndim;
    tri_job j = { self,
                  res,
                  lower,
                  res == self,
                  diagonal,
                  self->sizes[nd - 2],
                  self->sizes[nd - 1],
                  tg_dtype_size(self->dtype) };
    int64_t nrows = j.cols > 0 ? tg__numel(self) / j.cols : 0;
    int64_t grain = j.cols > 0 ? tg__grain_size() / j.cols + 1 : 1;
    tg__parallel_for(nrows, grain, tri_task, &j);
    if (out) tg__bump_version(res);
    return res;
}

tg_tensor *tg__cpu_tril_out(tg_tensor *self, int64_t diagonal, tg_tensor *out)
{
    return tri_out("tril", true, self, diagonal, out);
}

tg_tensor *tg__cpu_triu_out(tg_tensor *self, int64_t diagonal, tg_tensor *out)
{
    return tri_out("triu", false, self, diagonal, out);
}
