/* safetensors files (runtime/io/safetensors.c): round trips of every dtype, 0-dim, empty and
 * non-contiguous tensors (and CUDA tensors when built with CUDA: the emulator runs them), the
 * file layout the reference writer uses, zero-copy loading over the mapping and its lifetime,
 * copy-on-write, load_into, metadata, and every malformed file the loader must refuse with a
 * message naming the file and the problem (bad files are written byte by byte here). */
#include "../runtime/rt_test.h"
#include "tensorgen.h"
#include "kt_util.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(safetensors, .fini = rt_leak_check);

static void st_path(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* Writes a file: 8-byte little-endian `hlen`, the header text, then `data_len` bytes 0..255. */
static void st_write_raw(const char *path, uint64_t hlen, const char *header, size_t data_len)
{
    unlink(path); /* a new file, not a truncated one (which ext4 flushes to disk on close) */
    FILE *fp = fopen(path, "wb");
    cr_assert(fp);
    unsigned char l[8];
    for (int i = 0; i < 8; i++) l[i] = (unsigned char)(hlen >> (8 * i));
    fwrite(l, 1, 8, fp);
    fwrite(header, 1, strlen(header), fp);
    for (size_t i = 0; i < data_len; i++) fputc((int)(i & 0xff), fp);
    fclose(fp);
}
/* The same with the header's own length. */
static void st_write_file(const char *path, const char *header, size_t data_len)
{
    st_write_raw(path, strlen(header), header, data_len);
}

static bool same_values(const tg_tensor *a, const tg_tensor *b)
{
    int64_t n = tg_tensor_numel(a);
    if (n != tg_tensor_numel(b)) return false;
    double *x = malloc(sizeof(double) * (size_t)(n + 1)),
           *y = malloc(sizeof(double) * (size_t)(n + 1));
    bool ok = tg_tensor_to_doubles(a, x, n) == 0 && tg_tensor_to_doubles(b, y, n) == 0;
    for (int64_t i = 0; ok && i < n; i++) ok = x[i] == y[i];
    free(x);
    free(y);
    return ok;
}

static bool same_meta(const tg_tensor *a, const tg_tensor *b)
{
    if (tg_tensor_dtype(a) != tg_tensor_dtype(b) || tg_tensor_dim(a) != tg_tensor_dim(b))
        return false;
    for (int64_t i = 0; i < tg_tensor_dim(a); i++)
        if (tg_tensor_sizes(a)[i] != tg_tensor_sizes(b)[i]) return false;
    return true;
}

/* The name of the file mapped at address p in /proc/self/maps, or "" when p is in no file
 * mapping. */
static void mapping_of(const void *p, char *out, size_t cap)
{
    out[0] = 0;
    FILE *fp = fopen("/proc/self/maps", "r");
    cr_assert(fp);
    char line[1024];
    while (fgets(line, sizeof line, fp)) {
        unsigned long lo, hi;
        int off = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2) continue;
        if ((uintptr_t)p >= lo && (uintptr_t)p < hi) {
            snprintf(out, cap, "%s", line + off);
            out[strcspn(out, "\n")] = 0;
            break;
        }
    }
    fclose(fp);
}

/* Whether any mapping of /proc/self/maps is of a file whose path ends with `name`. */
static bool file_is_mapped(const char *name)
{
    FILE *fp = fopen("/proc/self/maps", "r");
    cr_assert(fp);
    char line[1024];
    bool found = false;
    size_t n = strlen(name);
    while (!found && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        size_t l = strlen(line);
        found = l >= n && !strcmp(line + l - n, name);
    }
    fclose(fp);
    return found;
}

static const tg_dtype all_dtypes[] = { TG_BOOL,  TG_UINT8,   TG_INT8,     TG_INT16,   TG_INT32,
                                       TG_INT64, TG_FLOAT16, TG_BFLOAT16, TG_FLOAT32, TG_FLOAT64 };
#define N_DTYPES (int)(sizeof all_dtypes / sizeof *all_dtypes)

/* Values 0..n-1 mapped into what every dtype holds exactly: bools alternate, the rest are
 * (i * 7 + seed) % 23 - 11 (non-negative for uint8), halved for the floating types. */
static tg_tensor *st_values(const int64_t *sizes, int64_t nd, tg_dtype dt, int seed)
{
    tg_tensor *t = tg__empty("test", sizes, nd, dt, TG_DEVICE_CPU);
    cr_assert(t);
    int64_t n = tg__numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)((i * 7 + seed) % 23 - 11);
        if (dt == TG_BOOL) v = (i + seed) % 2;
        else if (dt == TG_UINT8) v += 11;
        else if (tg_dtype_is_floating(dt)) v *= 0.5;
        tg__store_double((char *)tg_tensor_data(t) + i * (int64_t)tg_dtype_size(dt), dt, v);
    }
    return t;
}

Test(safetensors, round_trip_every_dtype_with_metadata)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "all.safetensors");
    enum { N = N_DTYPES + 3 };
    tg_tensor *ts[N];
    char names[N][32];
    const char *np[N];
    static const int64_t shape[] = { 3, 5 }, empty[] = { 0, 4 }, big[] = { 40, 33 };
    for (int i = 0; i < N_DTYPES; i++) {
        ts[i] = st_values(shape, 2, all_dtypes[i], i);
        snprintf(names[i], sizeof names[i], "w.%s", tg_dtype_name(all_dtypes[i]));
    }
    ts[N_DTYPES] = st_values(NULL, 0, TG_FLOAT32, 3); /* 0-dim */
    snprintf(names[N_DTYPES], 32, "scalar");
    ts[N_DTYPES + 1] = st_values(empty, 2, TG_FLOAT64, 0);
    snprintf(names[N_DTYPES + 1], 32, "empty");
    ts[N_DTYPES + 2] = st_values(big, 2, TG_FLOAT32, 5);
    snprintf(names[N_DTYPES + 2], 32, "a.big \"quoted\"\\name");
    for (int i = 0; i < N; i++) np[i] = names[i];
    const char *mk[] = { "format", "note" }, *mv[] = { "pt", "line\nbreak \"q\"" };
    cr_assert_eq(tg_save_safetensors_metadata(path, np, ts, N, mk, mv, 2), 0, "%s",
                 tg_last_error());

    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    cr_assert_eq(tg_safetensors_count(f), N);
    for (int i = 0; i < N; i++) {
        cr_assert(tg_safetensors_contains(f, names[i]), "%s missing", names[i]);
        tg_tensor *g = tg_safetensors_get(f, names[i]);
        cr_assert(g, "%s: %s", names[i], tg_last_error());
        cr_expect(same_meta(g, ts[i]), "%s: dtype or shape differs", names[i]);
        cr_expect(same_values(g, ts[i]), "%s: values differ", names[i]);
        cr_expect_eq(tg_tensor_device(g).type, TG_CPU);
        tg_release(g);
    }
    cr_expect_str_eq(tg_safetensors_metadata(f, "format"), "pt");
    cr_expect_str_eq(tg_safetensors_metadata(f, "note"), "line\nbreak \"q\"");
    cr_expect_null(tg_safetensors_metadata(f, "absent"));
    cr_expect_eq(tg_safetensors_metadata_count(f), 2);
    cr_expect_str_eq(tg_safetensors_metadata_key(f, 0), "format");
    cr_expect_null(tg_safetensors_metadata_key(f, 2));
    cr_expect(strstr(tg_last_error(), "out of range"));
    tg_clear_error();
    cr_expect_null(tg_safetensors_name(f, N));
    tg_clear_error();
    cr_expect_null(tg_safetensors_get(f, "nope"));
    cr_expect(strstr(tg_last_error(), "no tensor named \"nope\""), "%s", tg_last_error());
    tg_clear_error();
    tg_safetensors_close(f);
    for (int i = 0; i < N; i++) tg_release(ts[i]);
    kt_rmdir(dir);
}

/* The layout of the reference writer (huggingface/safetensors `prepare`): tensors by dtype,
 * widest first (its Dtype enum order, descending), then by name, back to back from offset 0;
 * the header padded with spaces (here so the data block starts at a multiple of 64). The file
 * is read back here with cJSON, not with the loader under test. */
Test(safetensors, layout_matches_the_reference_writer)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "layout.safetensors");
    static const int64_t s3[] = { 3 };
    tg_tensor *ts[] = { st_values(s3, 1, TG_UINT8, 0),    st_values(s3, 1, TG_FLOAT32, 0),
                        st_values(s3, 1, TG_BFLOAT16, 0), st_values(s3, 1, TG_INT64, 0),
                        st_values(s3, 1, TG_FLOAT32, 1),  st_values(s3, 1, TG_FLOAT64, 0),
                        st_values(s3, 1, TG_BOOL, 0) };
    const char *names[] = { "u8", "f32_b", "bf16", "i64", "f32_a", "f64", "bool" };
    cr_assert_eq(tg_save_safetensors(path, names, ts, 7), 0, "%s", tg_last_error());
    FILE *fp = fopen(path, "rb");
    cr_assert(fp);
    unsigned char l[8];
    cr_assert_eq(fread(l, 1, 8, fp), 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | l[i];
    cr_expect_eq((8 + n) % 64, 0, "data block at %llu", (unsigned long long)(8 + n));
    char *h = calloc(1, n + 1);
    cr_assert_eq(fread(h, 1, n, fp), n);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    cr_expect_eq(h[n - 1], ' ');
    cJSON *root = cJSON_Parse(h);
    cr_assert(root);
    const char *want[] = { "i64", "f64", "f32_a", "f32_b", "bf16", "u8", "bool" };
    const char *want_dt[] = { "I64", "F64", "F32", "F32", "BF16", "U8", "BOOL" };
    const int item[] = { 8, 8, 4, 4, 2, 1, 1 };
    int k = 0;
    double off = 0;
    for (cJSON *c = root->child; c; c = c->next, k++) {
        cr_assert_lt(k, 7);
        cr_expect_str_eq(c->string, want[k]);
        cr_expect_str_eq(cJSON_GetObjectItem(c, "dtype")->valuestring, want_dt[k]);
        cJSON *o = cJSON_GetObjectItem(c, "data_offsets");
        cr_expect_eq(cJSON_GetArrayItem(o, 0)->valuedouble, off);
        cr_expect_eq(cJSON_GetArrayItem(o, 1)->valuedouble, off + 3 * item[k]);
        off += 3 * item[k];
    }
    cr_expect_eq(k, 7);
    cr_expect_eq((double)size, 8 + (double)n + off, "no bytes after the last tensor");
    cJSON_Delete(root);
    free(h);
    /* tg_safetensors_name lists them in data order too */
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    for (int i = 0; i < 7; i++) cr_expect_str_eq(tg_safetensors_name(f, i), want[i]);
    tg_safetensors_close(f);
    for (int i = 0; i < 7; i++) tg_release(ts[i]);
    kt_rmdir(dir);
}

Test(safetensors, non_contiguous_input)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "nc.safetensors");
    static const int64_t shape[] = { 4, 6 };
    tg_tensor *base = st_values(shape, 2, TG_FLOAT32, 2);
    /* the transpose (6, 4) and every other column (4, 3) */
    const int64_t ts_sizes[] = { 6, 4 }, ts_strides[] = { 1, 6 };
    const int64_t ss_sizes[] = { 4, 3 }, ss_strides[] = { 6, 2 };
    tg_tensor *t = tg__make_view(base, ts_sizes, ts_strides, 2, 0);
    tg_tensor *s = tg__make_view(base, ss_sizes, ss_strides, 2, 1);
    cr_assert(!tg_tensor_is_contiguous(t) && !tg_tensor_is_contiguous(s));
    tg_tensor *ts[] = { t, s };
    const char *names[] = { "t", "s" };
    cr_assert_eq(tg_save_safetensors(path, names, ts, 2), 0, "%s", tg_last_error());
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    for (int i = 0; i < 2; i++) {
        tg_tensor *g = tg_safetensors_get(f, names[i]);
        cr_assert(g, "%s", tg_last_error());
        cr_expect(same_meta(g, ts[i]) && same_values(g, ts[i]), "%s differs", names[i]);
        tg_release(g);
    }
    tg_safetensors_close(f);
    kt_release_all(t, s, base);
    kt_rmdir(dir);
}

/* An aligned tensor is a view of the file's mapping (checked in /proc/self/maps); the mapping
 * outlives the handle while a tensor uses it and goes with the last one; writes reach this
 * process's pages only, never the file. */
Test(safetensors, zero_copy_over_the_mapping)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "zc.safetensors");
    static const int64_t shape[] = { 64, 32 };
    tg_tensor *a = st_values(shape, 2, TG_FLOAT32, 1), *b = st_values(shape, 2, TG_FLOAT64, 2);
    tg_tensor *ts[] = { a, b };
    const char *names[] = { "a", "b" };
    cr_assert_eq(tg_save_safetensors(path, names, ts, 2), 0, "%s", tg_last_error());
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    tg_tensor *ga = tg_safetensors_get(f, "a"), *gb = tg_safetensors_get(f, "b");
    cr_assert(ga && gb, "%s", tg_last_error());
    char where[1024];
    mapping_of(tg_tensor_data(ga), where, sizeof where);
    cr_expect_str_eq(where, path, "a's data is not in the file's mapping but in \"%s\"", where);
    mapping_of(tg_tensor_data(gb), where, sizeof where);
    cr_expect_str_eq(where, path);
    cr_expect_eq((uintptr_t)tg_tensor_data(ga) % 4, 0);
    cr_expect_eq((uintptr_t)tg_tensor_data(gb) % 64, 0, "the first tensor starts 64-aligned");
    tg_safetensors_close(f);
    cr_expect(file_is_mapped("/zc.safetensors"), "closed the mapping under live tensors");
    cr_expect(same_values(ga, a) && same_values(gb, b));
    /* copy-on-write */
    ((float *)tg_tensor_data(ga))[0] = 1234.5f;
    cr_expect_eq(((float *)tg_tensor_data(ga))[0], 1234.5f);
    tg_release(gb);
    cr_expect(file_is_mapped("/zc.safetensors"));
    tg_release(ga);
    cr_expect(!file_is_mapped("/zc.safetensors"), "the mapping outlived its last tensor");
    f = tg_safetensors_open(path);
    cr_assert(f);
    ga = tg_safetensors_get(f, "a");
    cr_expect(same_values(ga, a), "a write through a loaded tensor reached the file");
    tg_release(ga);
    tg_safetensors_close(f);
    kt_release_all(a, b);
    kt_rmdir(dir);
}

/* A file whose data block starts at an odd offset (legal: the format asks writers, not
 * readers, for alignment): the tensors are copies, with the right values. */
Test(safetensors, unaligned_data_is_copied)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "odd.safetensors");
    /* 8 + 127 header bytes: data at 135; I16 at 135, F32 at 137 */
    const char *h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[2,10]},"
                    "\"s\":{\"dtype\":\"I16\",\"shape\":[],\"data_offsets\":[0,2]}}";
    char header[256];
    snprintf(header, sizeof header, "%-127s", h);
    cr_assert_eq(strlen(header), 127, "%zu", strlen(header));
    FILE *fp = fopen(path, "wb");
    cr_assert(fp);
    unsigned char l[8] = { 127 };
    fwrite(l, 1, 8, fp);
    fwrite(header, 1, 127, fp);
    int16_t s = -7;
    float x[2] = { 1.5f, -2.25f };
    fwrite(&s, 2, 1, fp);
    fwrite(x, 4, 2, fp);
    fclose(fp);
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    tg_tensor *gx = tg_safetensors_get(f, "x"), *gs = tg_safetensors_get(f, "s");
    cr_assert(gx && gs, "%s", tg_last_error());
    char where[1024];
    mapping_of(tg_tensor_data(gx), where, sizeof where);
    cr_expect_str_neq(where, path, "an unaligned float32 tensor over the mapping");
    double vx[2], vs;
    cr_assert_eq(tg_tensor_to_doubles(gx, vx, 2), 0);
    cr_assert_eq(tg_tensor_to_doubles(gs, &vs, 1), 0);
    cr_expect(vx[0] == 1.5 && vx[1] == -2.25 && vs == -7);
    cr_expect_eq(tg_tensor_dim(gs), 0);
    kt_release_all(gx, gs);
    tg_safetensors_close(f);
    kt_rmdir(dir);
}

Test(safetensors, load_into_checks_shape_and_dtype)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "li.safetensors");
    static const int64_t shape[] = { 2, 3 }, other[] = { 3, 2 };
    tg_tensor *w = st_values(shape, 2, TG_FLOAT32, 4);
    const char *names[] = { "w" };
    cr_assert_eq(tg_save_safetensors(path, names, &w, 1), 0, "%s", tg_last_error());
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    tg_tensor *dst = tg__empty("test", shape, 2, TG_FLOAT32, TG_DEVICE_CPU);
    int64_t v0 = tg__version(dst);
    cr_assert_eq(tg_safetensors_load_into(f, "w", dst), 0, "%s", tg_last_error());
    cr_expect(same_values(dst, w));
    cr_expect_gt(tg__version(dst), v0, "load_into is an in-place write");
    tg_scope_begin(); /* its temporary is not the scope's: released once */
    cr_assert_eq(tg_safetensors_load_into(f, "w", dst), 0, "%s", tg_last_error());
    tg_scope_end();
    /* a non-contiguous destination (a transposed view of a 3x2 buffer) */
    tg_tensor *buf = tg__empty("test", other, 2, TG_FLOAT32, TG_DEVICE_CPU);
    const int64_t st[] = { 1, 2 };
    tg_tensor *view = tg__make_view(buf, shape, st, 2, 0);
    cr_assert_eq(tg_safetensors_load_into(f, "w", view), 0, "%s", tg_last_error());
    cr_expect(same_values(view, w));
    tg_tensor *wrong_shape = tg__empty("test", other, 2, TG_FLOAT32, TG_DEVICE_CPU);
    cr_expect_eq(tg_safetensors_load_into(f, "w", wrong_shape), -1);
    cr_expect(strstr(tg_last_error(), "safetensors_load_into: ") &&
                  strstr(tg_last_error(), "tensor \"w\" has shape [2, 3] in the file, but the "
                                          "destination has [3, 2]"),
              "%s", tg_last_error());
    tg_clear_error();
    tg_tensor *wrong_dtype = tg__empty("test", shape, 2, TG_FLOAT64, TG_DEVICE_CPU);
    cr_expect_eq(tg_safetensors_load_into(f, "w", wrong_dtype), -1);
    cr_expect(strstr(tg_last_error(), "is float32 in the file, but the destination is float64"),
              "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg_safetensors_load_into(f, "v", dst), -1);
    cr_expect(strstr(tg_last_error(), "no tensor named \"v\""), "%s", tg_last_error());
    tg_clear_error();
    kt_release_all(wrong_shape, wrong_dtype, view, buf, dst);
    tg_safetensors_close(f);
    tg_release(w);
    kt_rmdir(dir);
}

Test(safetensors, save_errors_leave_no_file)
{
    char *dir = kt_tmpdir(), path[512], bad[600];
    st_path(path, sizeof path, dir, "e.safetensors");
    static const int64_t shape[] = { 2 };
    tg_tensor *a = st_values(shape, 1, TG_FLOAT32, 0);
    tg_tensor *ts[] = { a, a };
    const char *dup[] = { "x", "x" }, *meta[] = { "__metadata__" }, *empty[] = { "" };
    struct {
        const char *const *names;
        tg_tensor *const *ts;
        int64_t n;
        const char *want;
    } cases[] = {
        { dup, ts, 2, "tensor name \"x\" is given twice" },
        { meta, ts, 1, "\"__metadata__\" is reserved" },
        { empty, ts, 1, "NULL or empty" },
        { dup, (tg_tensor *const[]){ NULL }, 1, "tensor 0 is NULL" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_expect_eq(tg_save_safetensors(path, cases[i].names, cases[i].ts, cases[i].n), -1);
        cr_expect(tg_last_error() && strstr(tg_last_error(), cases[i].want), "case %zu: %s", i,
                  tg_last_error() ? tg_last_error() : "(no error)");
        tg_clear_error();
    }
    const char *k[] = { "a", "a" }, *v[] = { "1", "2" };
    cr_expect_eq(tg_save_safetensors_metadata(path, dup, ts, 1, k, v, 2), -1);
    cr_expect(strstr(tg_last_error(), "metadata key \"a\" is given twice"), "%s", tg_last_error());
    tg_clear_error();
    /* I/O: a directory that does not exist */
    snprintf(bad, sizeof bad, "%s/no/such/dir.safetensors", dir);
    cr_expect_eq(tg_save_safetensors(bad, dup, ts, 1), -1);
    cr_expect(strstr(tg_last_error(), "No such file or directory"), "%s", tg_last_error());
    tg_clear_error();
    struct stat sb;
    cr_expect_neq(stat(path, &sb), 0, "a failed save left a file");
    /* a good save, then a failing one over it: the old file stays whole, no temporary left */
    cr_assert_eq(tg_save_safetensors(path, dup, ts, 1), 0, "%s", tg_last_error());
    cr_expect_eq(tg_save_safetensors(path, dup, ts, 2), -1);
    tg_clear_error();
    tg_safetensors *f = tg_safetensors_open(path);
    cr_expect(f && tg_safetensors_count(f) == 1, "%s", tg_last_error() ? tg_last_error() : "");
    tg_safetensors_close(f);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    cr_expect_eq(system(cmd), 0, "a temporary file was left beside the target");
    tg_release(a);
    kt_rmdir(dir);
}

/* Every malformed file: open fails (no crash, no leak, nothing read outside the file) with
 * "safetensors_open: <path>: <problem>". */
Test(safetensors, malformed_files_are_refused)
{
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "bad.safetensors");
    static const struct {
        const char *header;
        size_t data;
        const char *want;
    } cases[] = {
        { "{abc", 0, "the header is not valid JSON" },
        { "[1, 2]", 0, "the header is not a JSON object" },
        { "{} x", 0, "text after its JSON object" },
        { "{\"a\": 3}", 0, "header entry \"a\" is not a JSON object" },
        { "{\"a\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
          "tensor \"a\" has no \"dtype\"" },
        { "{\"a\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", 4, "has no \"shape\"" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "has no \"data_offsets\"" },
        { "{\"a\": {\"dtype\": 1, \"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
          "dtype is not a string" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": 1, \"data_offsets\": [0, 4]}}", 4,
          "shape is not an array" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 4,
          "shape[0] is not a non-negative integer" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1, 1.5], \"data_offsets\": [0, 4]}}", 4,
          "shape[1] is not a non-negative integer" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [\"1\"], \"data_offsets\": [0, 4]}}", 4,
          "shape[0] is not a non-negative integer" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
          "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
          "1], \"data_offsets\": [0, 4]}}",
          4, "dimensions, more than tensorgen's" },
        { "{\"a\": {\"dtype\": \"F99\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
          "unknown dtype \"F99\"" },
        { "{\"a\": {\"dtype\": \"U16\", \"shape\": [2], \"data_offsets\": [0, 4]}}", 4,
          "unsupported dtype U16" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", 4,
          "data_offsets is not an array of two integers" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": {\"b\": 0}}}", 4,
          "data_offsets is not an array of two integers" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [-4, 0]}}", 4,
          "data_offsets are not non-negative integers" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 4]}}", 8,
          "data_offsets [8, 4] end before they begin" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 4,
          "data_offsets [0, 8] run past the data block (4 bytes)" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\": [0, 8]}}", 16,
          "hold 8 bytes, but shape [3] of F32 needs another size" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 16], \"data_offsets\": "
          "[0, 8]}}",
          16, "needs more than 2^64" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, \"b\": {\"dtype\": "
          "\"I32\", \"shape\": [2], \"data_offsets\": [4, 12]}}",
          12, "tensors \"a\" [0, 8] and \"b\" [4, 12] overlap" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, \"a\": {\"dtype\": "
          "\"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
          8, "tensor \"a\" appears twice in the header" },
        { "{\"__metadata__\": [1]}", 0, "\"__metadata__\" is not a JSON object" },
        { "{\"__metadata__\": {\"k\": 1}}", 0, "metadata \"k\" is not a string" },
        { "{\"__metadata__\": {\"k\": \"a\", \"k\": \"b\"}}", 0,
          "metadata key \"k\" appears twice" },
    };
    char want[1024];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        st_write_file(path, cases[i].header, cases[i].data);
        tg_safetensors *f = tg_safetensors_open(path);
        cr_expect_null(f, "case %zu (%s) was accepted", i, cases[i].header);
        tg_safetensors_close(f);
        snprintf(want, sizeof want, "safetensors_open: %s: ", path);
        const char *err = tg_last_error();
        cr_expect(err && !strncmp(err, want, strlen(want)) && strstr(err, cases[i].want),
                  "case %zu: got \"%s\", want \"%s...%s\"", i, err ? err : "(none)", want,
                  cases[i].want);
        tg_clear_error();
    }

    /* the length prefix */
    FILE *fp = fopen(path, "wb");
    fwrite("\x05\0\0", 1, 3, fp);
    fclose(fp);
    cr_expect_null(tg_safetensors_open(path));
    cr_expect(strstr(tg_last_error(), "the file is 3 bytes long, too short"), "%s",
              tg_last_error());
    tg_clear_error();
    st_write_raw(path, 1000, "{}", 0);
    cr_expect_null(tg_safetensors_open(path));
    cr_expect(
        strstr(tg_last_error(), "the header length 1000 runs past the end of the file (10 bytes)"),
        "%s", tg_last_error());
    tg_clear_error();
    st_write_raw(path, (uint64_t)1 << 62, "{}", 0);
    cr_expect_null(tg_safetensors_open(path));
    cr_expect(strstr(tg_last_error(), "is larger than the limit of 100000000 bytes"), "%s",
              tg_last_error());
    tg_clear_error();
    snprintf(want, sizeof want, "%s/absent.safetensors", dir);
    cr_expect_null(tg_safetensors_open(want));
    cr_expect(strstr(tg_last_error(), "cannot open: No such file or directory"), "%s",
              tg_last_error());
    tg_clear_error();
    cr_expect_null(tg_safetensors_open(dir));
    cr_expect(strstr(tg_last_error(), "not a regular file"), "%s", tg_last_error());
    tg_clear_error();

    /* bytes that are no bool: refused when the tensor is asked for */
    st_write_file(path, "{\"b\": {\"dtype\": \"BOOL\", \"shape\": [4], \"data_offsets\": [0, 4]}}",
                  4);
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    cr_expect_null(tg_safetensors_get(f, "b")); /* the data bytes are 0, 1, 2, 3 */
    cr_expect(strstr(tg_last_error(), "tensor \"b\": byte 2 is 2, not a bool"), "%s",
              tg_last_error());
    tg_clear_error();
    tg_safetensors_close(f);

    /* accepted: the empty header, empty tensors at any in-range offset, padding */
    st_write_file(path,
                  "{\"e\": {\"dtype\": \"F16\", \"shape\": [0, 3], \"data_offsets\": [2, 2]},"
                  " \"z\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]}}    ",
                  4);
    f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    tg_tensor *e = tg_safetensors_get(f, "e"), *z = tg_safetensors_get(f, "z");
    cr_assert(e && z, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_numel(e), 0);
    cr_expect_eq(tg_tensor_size(e, 1), 3);
    double zv[4];
    cr_assert_eq(tg_tensor_to_doubles(z, zv, 4), 0);
    cr_expect(zv[0] == 0 && zv[3] == 3);
    kt_release_all(e, z);
    tg_safetensors_close(f);
    st_write_file(path, "{}", 0);
    f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    cr_expect_eq(tg_safetensors_count(f), 0);
    tg_safetensors_close(f);
    kt_rmdir(dir);
}

#ifdef TG_WITH_CUDA
/* CUDA tensors are saved through a host copy; load_into copies to the device. */
Test(safetensors, cuda_round_trip)
{
    if (!tg_cuda_is_available()) cr_skip_test("no CUDA device");
    char *dir = kt_tmpdir(), path[512];
    st_path(path, sizeof path, dir, "cuda.safetensors");
    static const int64_t shape[] = { 5, 7 };
    tg_int_list sz = { .len = 2, .data = shape };
    tg_scope_begin();
    tg_tensor *h = st_values(shape, 2, TG_FLOAT32, 3);
    tg_tensor *d = tg_empty(sz, .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    cr_assert(d && tg_copy_(d, h), "%s", tg_last_error());
    tg_tensor *dt = tg_transpose(d, 0, 1); /* non-contiguous on the device */
    tg_tensor *ts[] = { d, dt };
    const char *names[] = { "d", "dt" };
    cr_assert_eq(tg_save_safetensors(path, names, ts, 2), 0, "%s", tg_last_error());
    tg_safetensors *f = tg_safetensors_open(path);
    cr_assert(f, "%s", tg_last_error());
    tg_tensor *g = tg_safetensors_get(f, "d"), *gt = tg_safetensors_get(f, "dt");
    cr_assert(g && gt, "%s", tg_last_error());
    tg_tensor *ht = tg_transpose(h, 0, 1);
    cr_expect(same_values(g, h) && same_values(gt, ht));
    tg_tensor *into = tg_zeros(sz, .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    cr_assert_eq(tg_safetensors_load_into(f, "d", into), 0, "%s", tg_last_error());
    tg_tensor *back = tg_to_device(into, TG_DEVICE_CPU);
    cr_expect(same_values(back, h));
    tg_safetensors_close(f); /* g and gt (the scope's) keep the mapping */
    tg_release(h);
    tg_scope_end();
    kt_rmdir(dir);
}
#endif

/* Reads every element of every tensor of f (what a reader outside the mapping would trip on
 * under ASan or with a fault). */
static void touch_all(tg_safetensors *f)
{
    for (int64_t i = 0; i < tg_safetensors_count(f); i++) {
        tg_tensor *t = tg_safetensors_get(f, tg_safetensors_name(f, i));
        if (!t) { /* a bool tensor with other bytes */
            tg_clear_error();
            continue;
        }
        int64_t n = tg_tensor_numel(t);
        double *v = malloc(sizeof(double) * (size_t)(n + 1));
        cr_expect_eq(tg_tensor_to_doubles(t, v, n), 0);
        free(v);
        tg_release(t);
    }
}

/* Writes the n bytes to mut and opens it: either it opens (then every tensor reads back;
 * *opened counts it) or it is refused with an error (*refused counts it). */
static void open_mutated(const char *mut, const unsigned char *bytes, size_t n, int *opened,
                         int *refused)
{
    unlink(mut); /* see st_write_raw */
    FILE *fp = fopen(mut, "wb");
    cr_assert(fp, "cannot write %s", mut);
    fwrite(bytes, 1, n, fp);
    fclose(fp);
    tg_safetensors *f = tg_safetensors_open(mut);
    cr_expect(f || tg_last_error(), "a refusal without an error");
    if (f) ++*opened, touch_all(f);
    else ++*refused;
    tg_safetensors_close(f);
    tg_clear_error();
}

/* Mutations of a valid file: every truncation, and each header byte replaced by characters
 * that change JSON's meaning. Each either opens (then every tensor reads back) or fails with
 * an error; none crashes, leaks or reads outside the file. */
Test(safetensors, mutated_files_never_crash)
{
    char *dir = kt_tmpdir(), path[512], mut[512];
    st_path(path, sizeof path, dir, "good.safetensors");
    st_path(mut, sizeof mut, dir, "mut.safetensors");
    static const int64_t s2[] = { 2, 3 }, s1[] = { 5 };
    tg_tensor *ts[] = { st_values(s2, 2, TG_FLOAT32, 1), st_values(s1, 1, TG_BOOL, 0),
                        st_values(s1, 1, TG_INT64, 2) };
    const char *names[] = { "a", "b", "c" };
    const char *mk[] = { "k" }, *mv[] = { "v" };
    cr_assert_eq(tg_save_safetensors_metadata(path, names, ts, 3, mk, mv, 1), 0, "%s",
                 tg_last_error());
    for (int i = 0; i < 3; i++) tg_release(ts[i]);
    FILE *fp = fopen(path, "rb");
    cr_assert(fp);
    unsigned char buf[4096];
    size_t size = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    size_t hend = 8 + (size_t)buf[0] + ((size_t)buf[1] << 8);
    cr_assert_lt(hend, size);
    int opened = 0, refused = 0;
    static const char subst[] = "0-9.\"}]{[,e ";
    for (size_t cut = 0; cut < size; cut++) open_mutated(mut, buf, cut, &opened, &refused);
    cr_expect_eq(opened, 0, "a truncated file opened");
    for (size_t pos = 8; pos < hend; pos++)
        for (const char *c = subst; *c; c++) {
            unsigned char m[4096];
            memcpy(m, buf, size);
            if (m[pos] == (unsigned char)*c) continue;
            m[pos] = (unsigned char)*c;
            open_mutated(mut, m, size, &opened, &refused);
        }
    cr_expect_gt(opened, 0); /* some mutations (a digit of a shape into a digit) stay valid */
    cr_expect_gt(refused, 0);
    kt_rmdir(dir);
}
