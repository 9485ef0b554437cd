/* TensorDataset: sample i is row i of each of N tensors with the same first dimension. The
 * dataset holds a contiguous CPU tensor per input (made once here), so a sample is one memcpy
 * per field. */
#include <stdlib.h>
#include <string.h>

#include "../nn_private.h"
#include "data_internal.h"
#include "ops/contiguous.h"
#include "ops/to.h"

#define OP "TensorDataset"

typedef struct tensor_ctx {
    int n;
    tg_tensor *t[TG_DATA_MAX_FIELDS]; /* contiguous CPU, one reference each */
    int64_t row_bytes[TG_DATA_MAX_FIELDS];
} tensor_ctx;

static void tensor_ctx_free(void *p)
{
    tensor_ctx *c = p;
    for (int f = 0; f < c->n; f++) tg_release(c->t[f]);
    free(c);
}

static int tensor_get(void *p, int64_t index, void *const *slots, uint64_t seed)
{
    const tensor_ctx *c = p;
    (void)seed;
    for (int f = 0; f < c->n; f++)
        memcpy(slots[f], (const char *)tg_tensor_data(c->t[f]) + index * c->row_bytes[f],
               (size_t)c->row_bytes[f]);
    return 0;
}

/* A contiguous CPU tensor with t's values: a new reference (t itself when it already is one),
 * in no scope. */
static tg_tensor *cpu_contiguous(tg_tensor *t)
{
    if (tg_tensor_device(t).type == TG_CPU && tg_tensor_is_contiguous(t)) return tg_retain(t);
    int token = tg_scope_suspend();
    tg_tensor *c = tg_to_device(t, TG_DEVICE_CPU);
    tg_tensor *r = c ? tg_contiguous(c) : NULL;
    tg_release(c);
    tg_scope_resume(token);
    return r;
}

tg_dataset *tg_tensor_dataset_new(tg_tensor *const *tensors, int n)
{
    if (!tensors || n < 1 || n > TG_DATA_MAX_FIELDS)
        return tg_set_error(OP, "expected 1 to %d tensors, got %d", TG_DATA_MAX_FIELDS, n);
    for (int f = 0; f < n; f++) {
        if (!tensors[f]) return tg_set_error(OP, "tensor %d is NULL", f);
        if (tg_tensor_dim(tensors[f]) < 1)
            return tg_set_error(OP,
                                "tensor %d is 0-dimensional (a dataset's tensors are "
                                "indexed along their first dimension)",
                                f);
        if (tg_tensor_size(tensors[f], 0) != tg_tensor_size(tensors[0], 0))
            return tg_set_error(OP,
                                "Size mismatch between tensors: tensor %d has %lld rows, "
                                "tensor 0 has %lld",
                                f, (long long)tg_tensor_size(tensors[f], 0),
                                (long long)tg_tensor_size(tensors[0], 0));
    }
    tensor_ctx *c = calloc(1, sizeof *c);
    if (!c) return tg_set_error(OP, "out of memory");
    tg_data_field fields[TG_DATA_MAX_FIELDS];
    for (int f = 0; f < n; f++) {
        c->t[f] = cpu_contiguous(tensors[f]);
        c->n = f + 1;
        if (!c->t[f]) {
            tensor_ctx_free(c);
            return NULL;
        }
        tg_data_field *fd = &fields[f];
        fd->name = NULL; /* tg_dataset_new names it by its number, "0", "1", ... */
        fd->dtype = tg_tensor_dtype(c->t[f]);
        fd->ndim = tg_tensor_dim(c->t[f]) - 1;
        for (int64_t k = 0; k < fd->ndim; k++) fd->sizes[k] = tg_tensor_size(c->t[f], k + 1);
        c->row_bytes[f] = tg__data_field_bytes(fd);
    }
    tg_dataset_desc d = { .name = OP,
                          .length = tg_tensor_size(tensors[0], 0),
                          .num_fields = n,
                          .fields = fields,
                          .get = tensor_get,
                          .ctx = c,
                          .free_ctx = tensor_ctx_free };
    return tg_dataset_new(&d);
}
