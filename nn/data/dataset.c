/* The dataset interface: a length, the fields of a sample and a get function over raw slots
 * (tg_nn_data.h). The struct keeps its own copy of the description so that a caller can build
 * one on the stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../nn_private.h"
#include "data_internal.h"
#include "ops/select.h"

struct tg_dataset {
    char *name;
    int64_t length;
    int num_fields;
    tg_data_field fields[TG_DATA_MAX_FIELDS];
    char *field_names[TG_DATA_MAX_FIELDS]; /* the copies fields[f].name points to */
    tg_dataset_get_fn get;
    void *ctx;
    void (*free_ctx)(void *ctx);
};

static int check_desc(const tg_dataset_desc *d)
{
    const char *op = "Dataset";
    if (!d->get) return tg_set_error(op, "the description has no get function"), -1;
    if (d->length < 0)
        return tg_set_error(op, "length must be >= 0, got %lld", (long long)d->length), -1;
    if (d->num_fields < 1 || d->num_fields > TG_DATA_MAX_FIELDS || !d->fields)
        return tg_set_error(op, "a sample has 1 to %d fields, got %d", TG_DATA_MAX_FIELDS,
                            d->num_fields),
               -1;
    for (int f = 0; f < d->num_fields; f++) {
        const tg_data_field *fd = &d->fields[f];
        if (fd->ndim < 0 || fd->ndim > TG_MAX_DIMS - 1)
            return tg_set_error(op, "field %d has %lld dimensions (at most %d)", f,
                                (long long)fd->ndim, TG_MAX_DIMS - 1),
                   -1;
        if (fd->dtype < 0 || fd->dtype >= TG_NUM_DTYPES)
            return tg_set_error(op, "field %d has an invalid dtype", f), -1;
        for (int64_t k = 0; k < fd->ndim; k++)
            if (fd->sizes[k] < 0)
                return tg_set_error(op, "field %d has a negative size %lld", f,
                                    (long long)fd->sizes[k]),
                       -1;
    }
    return 0;
}

tg_dataset *tg_dataset_new(const tg_dataset_desc *d)
{
    if (!d) return tg_set_error("Dataset", "the description is NULL");
    if (check_desc(d) != 0) {
        if (d->free_ctx) d->free_ctx(d->ctx);
        return NULL;
    }
    tg_dataset *ds = calloc(1, sizeof *ds);
    if (ds) ds->name = strdup(d->name ? d->name : "Dataset");
    if (!ds || !ds->name) goto oom;
    ds->length = d->length;
    ds->num_fields = d->num_fields;
    for (int f = 0; f < d->num_fields; f++) {
        ds->fields[f] = d->fields[f];
        char def[16];
        snprintf(def, sizeof def, "%d", f);
        ds->field_names[f] = strdup(d->fields[f].name ? d->fields[f].name : def);
        if (!ds->field_names[f]) goto oom;
        ds->fields[f].name = ds->field_names[f];
    }
    ds->get = d->get;
    ds->ctx = d->ctx;
    ds->free_ctx = d->free_ctx;
    return ds;
oom:
    tg_dataset_free(ds);
    if (!ds && d->free_ctx) d->free_ctx(d->ctx);
    return tg_set_error("Dataset", "out of memory");
}

void tg_dataset_free(tg_dataset *ds)
{
    if (!ds) return;
    if (ds->free_ctx) ds->free_ctx(ds->ctx);
    for (int f = 0; f < TG_DATA_MAX_FIELDS; f++) free(ds->field_names[f]);
    free(ds->name);
    free(ds);
}

int64_t tg_dataset_length(const tg_dataset *ds) { return ds ? ds->length : 0; }
const char *tg_dataset_name(const tg_dataset *ds) { return ds ? ds->name : ""; }
int tg_dataset_num_fields(const tg_dataset *ds) { return ds ? ds->num_fields : 0; }

const tg_data_field *tg_dataset_field(const tg_dataset *ds, int f)
{
    if (!ds) return tg_set_error("Dataset", "the dataset is NULL");
    if (f < 0 || f >= ds->num_fields)
        return tg_set_error(ds->name, "field %d out of range (%d fields)", f, ds->num_fields);
    return &ds->fields[f];
}

int64_t tg__data_field_bytes(const tg_data_field *fd)
{
    int64_t n = (int64_t)tg_dtype_size(fd->dtype);
    for (int64_t k = 0; k < fd->ndim; k++) n *= fd->sizes[k];
    return n;
}

int tg_dataset_get(const tg_dataset *ds, int64_t index, void *const *slots, uint64_t seed)
{
    if (!ds) return tg_set_error("Dataset", "the dataset is NULL"), -1;
    if (index < 0 || index >= ds->length)
        return tg_set_error(ds->name,
                            "sample index %lld out of range for a dataset of %lld samples",
                            (long long)index, (long long)ds->length),
               -1;
    return ds->get(ds->ctx, index, slots, seed) == 0 ? 0 : -1;
}

/* A (lead, sizes...) contiguous CPU tensor of field fd, uninitialised, not recorded in the
 * caller's scope (the caller owns it whatever scope is open). */
tg_tensor *tg__data_field_tensor(const tg_data_field *fd, int64_t lead)
{
    int64_t sizes[TG_MAX_DIMS];
    sizes[0] = lead;
    for (int64_t k = 0; k < fd->ndim; k++) sizes[k + 1] = fd->sizes[k];
    int token = tg_scope_suspend();
    tg_tensor *t = tg_tensor_from_data(NULL, sizes, fd->ndim + 1, fd->dtype);
    tg_scope_resume(token);
    return t;
}

int tg_dataset_sample(const tg_dataset *ds, int64_t index, uint64_t seed, tg_tensor **out)
{
    if (!ds || !out) return tg_set_error("Dataset", "the dataset or output is NULL"), -1;
    void *slots[TG_DATA_MAX_FIELDS] = { 0 };
    int f = 0;
    for (; f < ds->num_fields; f++) {
        out[f] = tg__data_field_tensor(&ds->fields[f], 1);
        if (!out[f]) break;
        slots[f] = tg_tensor_data(out[f]);
    }
    if (f == ds->num_fields && tg_dataset_get(ds, index, slots, seed) == 0) {
        /* Drop the leading 1: a view, so the scope stays out of it too. */
        int token = tg_scope_suspend();
        for (f = 0; f < ds->num_fields; f++) {
            tg_tensor *v = tg_select(out[f], 0, 0);
            tg_release(out[f]);
            out[f] = v;
        }
        tg_scope_resume(token);
        for (f = 0; f < ds->num_fields; f++)
            if (!out[f]) break;
        if (f == ds->num_fields) return 0;
        f = ds->num_fields;
    }
    while (f-- > 0) {
        tg_release(out[f]);
        out[f] = NULL;
    }
    return -1;
}
