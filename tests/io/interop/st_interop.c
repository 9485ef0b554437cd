/* The C side of the safetensors interoperability test (tests/io/safetensors_interop.py, run by
 * `make test-safetensors`): writes a file for Python's `safetensors` package to read, and checks
 * files that package wrote. Both sides compute the expected values from the same formula, each
 * on its own (value_of here, value_of in the .py), so neither checks its own output.
 *
 *   st_interop write FILE          every dtype as "t_<DTYPE>" (3, 5), "scalar" (F64, 0-dim),
 *                                  "empty" (F32, (0, 4)), "big" (F32, (64, 33)); metadata
 *                                  {"writer": "tensorgen"}
 *   st_interop check FILE [NAME...] the named tensors (default: all of the above but t_BF16,
 *                                  which numpy cannot write) hold the expected values, the file
 *                                  holds nothing else, and its metadata "writer" is "python"
 * Public API only. Exit status 0, or 1 with a message on stderr. */
#include "tensorgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct spec {
    const char *name;
    tg_dtype dtype;
    int seed;
    int64_t ndim;
    int64_t sizes[2];
} spec;

static const spec specs[] = {
    { "t_F64", TG_FLOAT64, 0, 2, { 3, 5 } },  { "t_F32", TG_FLOAT32, 1, 2, { 3, 5 } },
    { "t_F16", TG_FLOAT16, 2, 2, { 3, 5 } },  { "t_BF16", TG_BFLOAT16, 3, 2, { 3, 5 } },
    { "t_I64", TG_INT64, 4, 2, { 3, 5 } },    { "t_I32", TG_INT32, 5, 2, { 3, 5 } },
    { "t_I16", TG_INT16, 6, 2, { 3, 5 } },    { "t_I8", TG_INT8, 7, 2, { 3, 5 } },
    { "t_U8", TG_UINT8, 8, 2, { 3, 5 } },     { "t_BOOL", TG_BOOL, 9, 2, { 3, 5 } },
    { "scalar", TG_FLOAT64, 3, 0, { 0, 0 } }, { "empty", TG_FLOAT32, 0, 2, { 0, 4 } },
    { "big", TG_FLOAT32, 5, 2, { 64, 33 } },
};
#define N_SPECS (int)(sizeof specs / sizeof *specs)

/* Element i of a tensor with this seed: exact in every dtype. */
static double value_of(tg_dtype dt, int seed, int64_t i)
{
    if (dt == TG_BOOL) return (double)((i + seed) % 2);
    double v = (double)((i * 7 + seed) % 23 - 11);
    if (dt == TG_UINT8) return v + 11;
    return tg_dtype_is_floating(dt) ? v * 0.5 : v;
}

static int64_t numel_of(const spec *s)
{
    int64_t n = 1;
    for (int64_t d = 0; d < s->ndim; d++) n *= s->sizes[d];
    return n;
}

static int fail(const char *what)
{
    fprintf(stderr, "st_interop: %s: %s\n", what, tg_last_error() ? tg_last_error() : "");
    return 1;
}

static int write_file(const char *path)
{
    tg_tensor *ts[N_SPECS];
    const char *names[N_SPECS];
    for (int k = 0; k < N_SPECS; k++) {
        const spec *s = &specs[k];
        int64_t n = numel_of(s);
        double *v = malloc(sizeof(double) * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++) v[i] = value_of(s->dtype, s->seed, i);
        tg_tensor *d = tg_tensor_from_data(v, s->sizes, s->ndim, TG_FLOAT64);
        free(v);
        ts[k] = d ? tg_to(d, s->dtype) : NULL; /* exact: every value fits every dtype */
        tg_release(d);
        if (!ts[k]) return fail(s->name);
        names[k] = s->name;
    }
    const char *mk[] = { "writer" }, *mv[] = { "tensorgen" };
    int rc = tg_save_safetensors_metadata(path, names, ts, N_SPECS, mk, mv, 1);
    for (int k = 0; k < N_SPECS; k++) tg_release(ts[k]);
    return rc ? fail("save") : 0;
}

static int check_one(tg_safetensors *f, const spec *s)
{
    char what[128];
    snprintf(what, sizeof what, "tensor %s", s->name);
    tg_tensor *t = tg_safetensors_get(f, s->name);
    if (!t) return fail(what);
    int bad = 0;
    if (tg_tensor_dtype(t) != s->dtype || tg_tensor_dim(t) != s->ndim) {
        fprintf(stderr, "st_interop: %s: dtype %s, %lld dims; want %s, %lld dims\n", s->name,
                tg_dtype_name(tg_tensor_dtype(t)), (long long)tg_tensor_dim(t),
                tg_dtype_name(s->dtype), (long long)s->ndim);
        bad = 1;
    }
    for (int64_t d = 0; !bad && d < s->ndim; d++)
        if (tg_tensor_sizes(t)[d] != s->sizes[d]) {
            fprintf(stderr, "st_interop: %s: size %lld of dim %lld; want %lld\n", s->name,
                    (long long)tg_tensor_sizes(t)[d], (long long)d, (long long)s->sizes[d]);
            bad = 1;
        }
    int64_t n = numel_of(s);
    double *v = malloc(sizeof(double) * (size_t)(n + 1));
    if (!bad && tg_tensor_to_doubles(t, v, n)) bad = fail(what);
    for (int64_t i = 0; !bad && i < n; i++)
        if (v[i] != value_of(s->dtype, s->seed, i)) {
            fprintf(stderr, "st_interop: %s: element %lld is %g; want %g\n", s->name, (long long)i,
                    v[i], value_of(s->dtype, s->seed, i));
            bad = 1;
        }
    free(v);
    tg_release(t);
    return bad;
}

static int check_file(const char *path, int nnames, char **names)
{
    tg_safetensors *f = tg_safetensors_open(path);
    if (!f) return fail("open");
    int bad = 0, want = 0;
    for (int k = 0; k < N_SPECS; k++) {
        const spec *s = &specs[k];
        bool asked = nnames == 0 ? s->dtype != TG_BFLOAT16 : false;
        for (int j = 0; j < nnames; j++) asked |= !strcmp(names[j], s->name);
        if (!asked) continue;
        want++;
        bad |= check_one(f, s);
    }
    if (tg_safetensors_count(f) != want) {
        fprintf(stderr, "st_interop: %s holds %lld tensors; want %d\n", path,
                (long long)tg_safetensors_count(f), want);
        bad = 1;
    }
    const char *w = tg_safetensors_metadata(f, "writer");
    if (!w || strcmp(w, "python")) {
        fprintf(stderr, "st_interop: %s: metadata writer is %s; want python\n", path,
                w ? w : "(absent)");
        bad = 1;
    }
    tg_safetensors_close(f);
    if (!bad) printf("st_interop: %s: %d tensors with the expected values\n", path, want);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "write")) return write_file(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "check")) return check_file(argv[2], argc - 3, argv + 3);
    fprintf(stderr, "usage: st_interop write FILE | check FILE [NAME...]\n");
    return 2;
}
