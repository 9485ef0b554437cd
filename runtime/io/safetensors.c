/* The safetensors format (tg_io.h): a writer and an mmap loader.
 *
 * File layout: an 8-byte little-endian header length N, N bytes of UTF-8 JSON
 *     {"__metadata__": {"k": "v", ...}, "name": {"dtype": "F32", "shape": [2, 3],
 *      "data_offsets": [begin, end]}, ...}
 * (writers pad it with spaces), then the data block; [begin, end) are byte offsets into the
 * data block, little-endian, row-major.
 *
 * Loader: the whole file is mapped MAP_PRIVATE (copy-on-write) and the header is parsed with
 * cJSON and validated before anything is handed out. The mapping is refcounted: the
 * tg_safetensors holds one reference and every zero-copy tensor another (its storage's
 * deleter drops it), so it is unmapped when the last of them goes.
 *
 * Writer: header text built here (integers printed exactly, strings escaped), padded so that the
 * data block starts at a multiple of 64 bytes; tensors in the reference writer's order (dtype,
 * widest first, then name), so each starts aligned to its element size without gaps (the
 * reference loader rejects gaps). Written to a temporary file renamed over the target. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "core/rt_private.h"
#include "tg_io.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reference implementation's bound on the header (a file announcing more is corrupt). */
#define ST_MAX_HEADER ((uint64_t)100 * 1000 * 1000)
/* Integers in the header are read through doubles (cJSON): exact up to 2^53. */
#define ST_MAX_INT 9007199254740992.0

/* ------------------------------------------------------------------ dtypes */

typedef struct st_dtype_name {
    const char *name;
    tg_dtype dtype;
    int rank; /* the reference writer's order: its Dtype enum, sorted descending */
} st_dtype_name;

static const st_dtype_name st_dtypes[] = {
    { "BOOL", TG_BOOL, 0 }, { "U8", TG_UINT8, 1 },    { "I8", TG_INT8, 2 },
    { "I16", TG_INT16, 3 }, { "F16", TG_FLOAT16, 4 }, { "BF16", TG_BFLOAT16, 5 },
    { "I32", TG_INT32, 6 }, { "F32", TG_FLOAT32, 7 }, { "F64", TG_FLOAT64, 8 },
    { "I64", TG_INT64, 9 },
};
/* Dtypes of the format that tensorgen has no counterpart for. */
static const char *const st_unsupported[] = { "U16",     "U32",     "U64", "F8_E4M3",
                                              "F8_E5M2", "F8_E8M0", "F4",  "F6_E2M3",
                                              "F6_E3M2", "C64",     "E8M0" };

static const st_dtype_name *st_by_dtype(tg_dtype t)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof *st_dtypes; i++)
        if (st_dtypes[i].dtype == t) return &st_dtypes[i];
    return NULL;
}

/* ------------------------------------------------------------------ the mapping */

typedef struct st_map {
    int64_t refcount; /* atomic: the file handle + each zero-copy tensor */
    void *base;
    size_t len;
} st_map;

static void st_map_release(st_map *m)
{
    if (m && tg__ref_dec(&m->refcount)) {
        munmap(m->base, m->len);
        free(m);
    }
}

/* The storage deleter of a zero-copy tensor. */
static void st_map_deleter(void *data, void *ctx)
{
    (void)data;
    st_map_release(ctx);
}

typedef struct st_entry {
    char *name;
    tg_dtype dtype;
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS];
    uint64_t begin, end; /* in the data block */
} st_entry;

struct tg_safetensors {
    char *path;
    st_map *map;
    const char *data; /* the data block in the mapping */
    uint64_t data_len;
    int64_t n;
    st_entry *entries; /* data order (by begin, then name) */
    int64_t *by_name;  /* indexes of entries sorted by name, for lookups */
    int64_t n_meta;
    char **meta_keys, **meta_values;
};

/* ------------------------------------------------------------------ validation helpers */

/* A JSON number that is an integer in [0, 2^53]; false otherwise. */
static bool st_uint(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j)) return false;
    double v = j->valuedouble;
    if (!(v >= 0) || v > ST_MAX_INT || v != floor(v)) return false;
    *out = (uint64_t)v;
    return true;
}

static int st_cmp_name(const void *a, const void *b, void *ctx)
{
    const st_entry *e = ctx;
    return strcmp(e[*(const int64_t *)a].name, e[*(const int64_t *)b].name);
}

static int st_cmp_data(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Frees strs[0..n) and the array. */
static void st_free_strs(char **strs, int64_t n)
{
    for (int64_t i = 0; strs && i < n; i++) free(strs[i]);
    free(strs);
}

static void st_free(tg_safetensors *f)
{
    if (!f) return;
    for (int64_t i = 0; i < f->n; i++) free(f->entries[i].name);
    free(f->entries);
    free(f->by_name);
    st_free_strs(f->meta_keys, f->n_meta);
    st_free_strs(f->meta_values, f->n_meta);
    st_map_release(f->map);
    free(f->path);
    free(f);
}

/* Parses one tensor entry `j` named `name` into e; 0, or -1 with an error. */
static int st_parse_entry(const char *op, const char *path, const char *name, const cJSON *j,
                          uint64_t data_len, st_entry *e)
{
    if (!cJSON_IsObject(j))
        return tg__fail(op, "%s: header entry \"%s\" is not a JSON object", path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(j, "data_offsets");
    if (!dt || !shape || !offs)
        return tg__fail(op, "%s: tensor \"%s\" has no \"%s\"", path, name,
                        !dt      ? "dtype"
                        : !shape ? "shape"
                                 : "data_offsets");
    if (!cJSON_IsString(dt))
        return tg__fail(op, "%s: tensor \"%s\": dtype is not a string", path, name);
    const st_dtype_name *d = NULL;
    for (size_t i = 0; i < sizeof st_dtypes / sizeof *st_dtypes; i++)
        if (!strcmp(dt->valuestring, st_dtypes[i].name)) d = &st_dtypes[i];
    if (!d) {
        for (size_t i = 0; i < sizeof st_unsupported / sizeof *st_unsupported; i++)
            if (!strcmp(dt->valuestring, st_unsupported[i]))
                return tg__fail(
                    op, "%s: tensor \"%s\": unsupported dtype %s (tensorgen has no such type)",
                    path, name, dt->valuestring);
        return tg__fail(op, "%s: tensor \"%s\": unknown dtype \"%s\"", path, name, dt->valuestring);
    }
    e->dtype = d->dtype;
    if (!cJSON_IsArray(shape))
        return tg__fail(op, "%s: tensor \"%s\": shape is not an array", path, name);
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > TG_MAX_DIMS)
        return tg__fail(op, "%s: tensor \"%s\": %d dimensions, more than tensorgen's %d", path,
                        name, ndim, TG_MAX_DIMS);
    e->ndim = ndim;
    /* numel * itemsize, with overflow checked against the data block's length */
    uint64_t nbytes = tg__dtype_sizes[e->dtype];
    bool too_big = false;
    int k = 0;
    for (const cJSON *s = shape->child; s; s = s->next, k++) {
        uint64_t v;
        if (!st_uint(s, &v))
            return tg__fail(op, "%s: tensor \"%s\": shape[%d] is not a non-negative integer", path,
                            name, k);
        e->sizes[k] = (int64_t)v;
        if (v && nbytes > UINT64_MAX / v) too_big = true;
        else nbytes *= v;
    }
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
        return tg__fail(op, "%s: tensor \"%s\": data_offsets is not an array of two integers", path,
                        name);
    if (!st_uint(offs->child, &e->begin) || !st_uint(offs->child->next, &e->end))
        return tg__fail(op, "%s: tensor \"%s\": data_offsets are not non-negative integers", path,
                        name);
    if (e->end < e->begin)
        return tg__fail(op, "%s: tensor \"%s\": data_offsets [%llu, %llu] end before they begin",
                        path, name, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > data_len)
        return tg__fail(op,
                        "%s: tensor \"%s\": data_offsets [%llu, %llu] run past the data block "
                        "(%llu bytes)",
                        path, name, (unsigned long long)e->begin, (unsigned long long)e->end,
                        (unsigned long long)data_len);
    for (int i = 0; i < ndim; i++) /* an element is zero: no overflow after all */
        if (e->sizes[i] == 0) too_big = false, nbytes = 0;
    if (too_big || nbytes != e->end - e->begin) {
        char buf[256];
        tg__shape_str(buf, sizeof buf, e->sizes, e->ndim);
        return tg__fail(op,
                        "%s: tensor \"%s\": data_offsets [%llu, %llu] hold %llu bytes, but shape "
                        "%s of %s needs %s",
                        path, name, (unsigned long long)e->begin, (unsigned long long)e->end,
                        (unsigned long long)(e->end - e->begin), buf, d->name,
                        too_big ? "more than 2^64" : "another size");
    }
    return 0;
}

/* Whether only padding (whitespace) follows the JSON value, from `at` to the header's end. */
static bool st_only_padding(const char *at, const char *end)
{
    for (const char *p = at; p < end; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0') return false;
    return true;
}

/* Counts the tensors of the header object `root` and finds its "__metadata__" entry (NULL
 * when none). 0, or -1 with an error. */
static int st_scan_header(const char *op, const char *path, const cJSON *root, int64_t *count,
                          const cJSON **meta)
{
    *count = 0;
    *meta = NULL;
    for (const cJSON *c = root->child; c; c = c->next) {
        if (!c->string) return tg__fail(op, "%s: the header has an entry without a name", path);
        if (strcmp(c->string, "__metadata__")) {
            (*count)++;
            continue;
        }
        if (*meta) return tg__fail(op, "%s: the header has two \"__metadata__\" entries", path);
        *meta = c;
    }
    return 0;
}

/* Reads the tensor entries of `root` (all but `meta`) into f->entries, which has room for
 * them. 0, or -1 with an error. */
static int st_parse_entries(const char *op, tg_safetensors *f, const cJSON *root, const cJSON *meta)
{
    for (const cJSON *c = root->child; c; c = c->next) {
        if (c == meta) continue;
        st_entry *e = &f->entries[f->n];
        e->name = strdup(c->string);
        if (!e->name) return tg__fail(op, "%s: out of memory reading the header", f->path);
        f->n++;
        if (st_parse_entry(op, f->path, c->string, c, f->data_len, e)) return -1;
    }
    return 0;
}

/* Reads the "__metadata__" object (string keys to string values, each key once) into f. 0, or
 * -1 with an error. */
static int st_parse_metadata(const char *op, tg_safetensors *f, const cJSON *meta)
{
    const char *path = f->path;
    if (!cJSON_IsObject(meta))
        return tg__fail(op, "%s: \"__metadata__\" is not a JSON object", path);
    int nm = cJSON_GetArraySize(meta);
    f->meta_keys = calloc(nm ? (size_t)nm : 1, sizeof *f->meta_keys);
    f->meta_values = calloc(nm ? (size_t)nm : 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values)
        return tg__fail(op, "%s: out of memory reading the header", path);
    for (const cJSON *c = meta->child; c; c = c->next) {
        if (!c->string || !cJSON_IsString(c))
            return tg__fail(op, "%s: metadata \"%s\" is not a string", path,
                            c->string ? c->string : "");
        for (int64_t i = 0; i < f->n_meta; i++)
            if (!strcmp(f->meta_keys[i], c->string))
                return tg__fail(op, "%s: metadata key \"%s\" appears twice", path, c->string);
        f->meta_keys[f->n_meta] = strdup(c->string);
        f->meta_values[f->n_meta] = strdup(c->valuestring);
        f->n_meta++;
        if (!f->meta_keys[f->n_meta - 1] || !f->meta_values[f->n_meta - 1])
            return tg__fail(op, "%s: out of memory reading the header", path);
    }
    return 0;
}

/* Sorts f's entries in data order and checks that no two tensors' bytes overlap (empty ones
 * occupy nothing), then indexes them by name, refusing a name given twice (JSON allows a key
 * twice, and cJSON keeps both). 0, or -1 with an error. */
static int st_order_entries(const char *op, tg_safetensors *f)
{
    qsort(f->entries, (size_t)f->n, sizeof *f->entries, st_cmp_data);
    const st_entry *prev = NULL;
    for (int64_t i = 0; i < f->n; i++) {
        const st_entry *e = &f->entries[i];
        if (e->begin == e->end) continue;
        if (prev && e->begin < prev->end)
            return tg__fail(op, "%s: tensors \"%s\" [%llu, %llu] and \"%s\" [%llu, %llu] overlap",
                            f->path, prev->name, (unsigned long long)prev->begin,
                            (unsigned long long)prev->end, e->name, (unsigned long long)e->begin,
                            (unsigned long long)e->end);
        prev = e;
    }
    for (int64_t i = 0; i < f->n; i++) f->by_name[i] = i;
    qsort_r(f->by_name, (size_t)f->n, sizeof *f->by_name, st_cmp_name, f->entries);
    for (int64_t i = 1; i < f->n; i++)
        if (!strcmp(f->entries[f->by_name[i]].name, f->entries[f->by_name[i - 1]].name))
            return tg__fail(op, "%s: tensor \"%s\" appears twice in the header", f->path,
                            f->entries[f->by_name[i]].name);
    return 0;
}

/* Reads the parsed header object `root` into f. 0, or -1 with an error. */
static int st_read_header(const char *op, tg_safetensors *f, const cJSON *root)
{
    int64_t count;
    const cJSON *meta;
    if (st_scan_header(op, f->path, root, &count, &meta)) return -1;
    f->entries = calloc(count ? (size_t)count : 1, sizeof *f->entries);
    f->by_name = malloc((count ? (size_t)count : 1) * sizeof *f->by_name);
    if (!f->entries || !f->by_name)
        return tg__fail(op, "%s: out of memory reading the header", f->path);
    if (st_parse_entries(op, f, root, meta)) return -1;
    if (meta && st_parse_metadata(op, f, meta)) return -1;
    return st_order_entries(op, f);
}

/* Reads the header of f (already mapped); 0, or -1 with an error. */
static int st_parse_header(const char *op, tg_safetensors *f, const char *hdr, size_t hlen)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(hdr, hlen, &end, false);
    if (!root) return tg__fail(op, "%s: the header is not valid JSON", f->path);
    int rc = -1;
    if (!st_only_padding(end ? end : hdr + hlen, hdr + hlen))
        tg__error(op, "%s: the header has text after its JSON object", f->path);
    else if (!cJSON_IsObject(root)) tg__error(op, "%s: the header is not a JSON object", f->path);
    else rc = st_read_header(op, f, root);
    cJSON_Delete(root);
    return rc;
}

tg_safetensors *tg_safetensors_open(const char *path)
{
    const char *op = "safetensors_open";
    if (!path) return tg__error(op, "path is NULL");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return tg__error(op, "%s: safetensors files are little-endian; this host is not", path);
#endif
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tg__error(op, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return tg__error(op, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return tg__error(op, "%s: not a regular file", path);
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size < 8) {
        close(fd);
        return tg__error(op, "%s: the file is %llu bytes long, too short for a safetensors header",
                         path, (unsigned long long)size);
    }
    if (size > SIZE_MAX) {
        close(fd);
        return tg__error(op, "%s: the file is too large to map", path);
    }
    /* Copy-on-write: a tensor over the mapping may be written (an optimizer updating loaded
     * weights in place) without touching the file. */
    void *base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd); /* the mapping keeps the file */
    if (base == MAP_FAILED) return tg__error(op, "%s: cannot map: %s", path, strerror(map_errno));
    tg_safetensors *f = calloc(1, sizeof *f);
    st_map *m = malloc(sizeof *m);
    char *p = strdup(path);
    if (!f || !m || !p) {
        free(f), free(m), free(p);
        munmap(base, (size_t)size);
        return tg__error(op, "%s: out of memory", path);
    }
    m->refcount = 1;
    m->base = base;
    m->len = (size_t)size;
    f->map = m;
    f->path = p;
    const unsigned char *b = base;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    if (hlen > ST_MAX_HEADER) {
        tg__error(op, "%s: the header length %llu is larger than the limit of %llu bytes", path,
                  (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
        st_free(f);
        return NULL;
    }
    if (hlen > size - 8) {
        tg__error(op, "%s: the header length %llu runs past the end of the file (%llu bytes)", path,
                  (unsigned long long)hlen, (unsigned long long)size);
        st_free(f);
        return NULL;
    }
    f->data = (const char *)base + 8 + hlen;
    f->data_len = size - 8 - hlen;
    if (st_parse_header(op, f, (const char *)base + 8, (size_t)hlen)) {
        st_free(f);
        return NULL;
    }
    return f;
}

void tg_safetensors_close(tg_safetensors *f) { st_free(f); }

int64_t tg_safetensors_count(const tg_safetensors *f) { return f ? f->n : 0; }

/* Whether the file is there and i indexes one of its n `what`s ("tensors", "keys"); false
 * with an error naming op otherwise. */
static bool st_index_ok(const char *op, const tg_safetensors *f, int64_t i, int64_t n,
                        const char *what)
{
    if (f && i >= 0 && i < n) return true;
    if (!f) tg__error(op, "file is NULL");
    else tg__error(op, "index %lld is out of range for %lld %s", (long long)i, (long long)n, what);
    return false;
}

const char *tg_safetensors_name(const tg_safetensors *f, int64_t i)
{
    if (!st_index_ok("safetensors_name", f, i, f ? f->n : 0, "tensors")) return NULL;
    return f->entries[i].name;
}

static const st_entry *st_find(const tg_safetensors *f, const char *name)
{
    int64_t lo = 0, hi = f->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const st_entry *e = &f->entries[f->by_name[mid]];
        int c = strcmp(name, e->name);
        if (!c) return e;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return NULL;
}

bool tg_safetensors_contains(const tg_safetensors *f, const char *name)
{
    return f && name && st_find(f, name);
}

/* The entry `name` or NULL with an error naming op. */
static const st_entry *st_lookup(const char *op, const tg_safetensors *f, const char *name)
{
    if (!f) return tg__error(op, "file is NULL");
    if (!name) return tg__error(op, "name is NULL");
    const st_entry *e = st_find(f, name);
    if (!e) return tg__error(op, "%s: no tensor named \"%s\"", f->path, name);
    return e;
}

tg_tensor *tg_safetensors_get(tg_safetensors *f, const char *name)
{
    const char *op = "safetensors_get";
    const st_entry *e = st_lookup(op, f, name);
    if (!e) return NULL;
    if (e->begin == e->end) return tg_tensor_from_data(NULL, e->sizes, e->ndim, e->dtype);
    const char *p = f->data + e->begin;
    if (e->dtype == TG_BOOL) /* C's bool holds 0 or 1 only */
        for (uint64_t i = 0; i < e->end - e->begin; i++)
            if ((unsigned char)p[i] > 1)
                return tg__error(op, "%s: tensor \"%s\": byte %llu is %u, not a bool (0 or 1)",
                                 f->path, name, (unsigned long long)i, (unsigned char)p[i]);
    if ((uintptr_t)p % tg__dtype_sizes[e->dtype])
        return tg_tensor_from_data(p, e->sizes, e->ndim, e->dtype);
    tg__ref_inc(&f->map->refcount);
    tg_tensor *t =
        tg_tensor_from_blob((void *)p, e->sizes, NULL, e->ndim, e->dtype, st_map_deleter, f->map);
    if (!t) st_map_release(f->map);
    return t;
}

int tg_safetensors_load_into(tg_safetensors *f, const char *name, tg_tensor *dst)
{
    const char *op = "safetensors_load_into";
    const st_entry *e = st_lookup(op, f, name);
    if (!e) return -1;
    if (!dst) return tg__fail(op, "dst is NULL");
    char a[256], b[256];
    tg__shape_str(a, sizeof a, e->sizes, e->ndim);
    tg__shape_str(b, sizeof b, dst->sizes, dst->ndim);
    bool same = e->ndim == dst->ndim;
    for (int64_t i = 0; same && i < e->ndim; i++) same = e->sizes[i] == dst->sizes[i];
    if (!same)
        return tg__fail(op,
                        "%s: tensor \"%s\" has shape %s in the file, but the destination has %s",
                        f->path, name, a, b);
    if (e->dtype != dst->dtype)
        return tg__fail(op, "%s: tensor \"%s\" is %s in the file, but the destination is %s",
                        f->path, name, tg_dtype_name(e->dtype), tg_dtype_name(dst->dtype));
    /* src is ours alone: not recorded in the caller's open scope, which would release it again */
    int token = tg_scope_suspend();
    tg_tensor *src = tg_safetensors_get(f, name);
    tg_scope_resume(token);
    if (!src) return -1;
    int rc = tg__copy_into(op, dst, src);
    tg_release(src);
    return rc;
}

const char *tg_safetensors_metadata(const tg_safetensors *f, const char *key)
{
    if (!f || !key) return NULL;
    for (int64_t i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta_keys[i], key)) return f->meta_values[i];
    return NULL;
}

int64_t tg_safetensors_metadata_count(const tg_safetensors *f) { return f ? f->n_meta : 0; }

const char *tg_safetensors_metadata_key(const tg_safetensors *f, int64_t i)
{
    if (!st_index_ok("safetensors_metadata_key", f, i, f ? f->n_meta : 0, "keys")) return NULL;
    return f->meta_keys[i];
}

/* ------------------------------------------------------------------ writer */

/* s as a JSON string (quotes, escapes; UTF-8 passes through). */
static void st_put_json_string(tg__text_buf *b, const char *s)
{
    tg__text_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = { '\\', (char)*p };
            tg__text_put(b, esc, 2);
        } else if (*p < 0x20) {
            tg__text_printf(b, "\\u%04x", *p);
        } else {
            tg__text_put(b, (const char *)p, 1);
        }
    }
    tg__text_put(b, "\"", 1);
}

typedef struct st_item {
    const char *name;
    tg_tensor *t;
    int rank;
    uint64_t nbytes;
} st_item;

static int st_cmp_item(const void *a, const void *b)
{
    const st_item *x = a, *y = b;
    if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1; /* widest first */
    return strcmp(x->name, y->name);
}

static int st_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes n bytes, retrying short writes; 0 or -1 with errno. */
static int st_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes the bytes of t (contiguous, little-endian) to fd: directly from a contiguous CPU
 * tensor, else through a contiguous host copy. 0, or -1 with an error. */
static int st_write_tensor(const char *op, const char *path, int fd, tg_tensor *t, uint64_t nbytes)
{
    if (!nbytes) return 0;
    tg_tensor *h = NULL;
    const void *p;
    if (t->device.type == TG_CPU && tg__is_contiguous(t)) {
        p = tg_tensor_data(t);
    } else {
        h = tg__empty(op, t->sizes, t->ndim, t->dtype, TG_DEVICE_CPU);
        if (!h || tg__copy_into(op, h, t)) {
            tg_release(h);
            return -1;
        }
        p = tg_tensor_data(h);
    }
    int rc = st_write_all(fd, p, (size_t)nbytes);
    int e = errno;
    tg_release(h);
    if (rc) return tg__fail(op, "%s: write failed: %s", path, strerror(e));
    return 0;
}

/* The arguments of a save: no NULL, no reserved or empty name. 0, or -1 with an error. */
static int st_check_args(const char *op, const char *path, const char *const *names,
                         tg_tensor *const *tensors, int64_t n, const char *const *meta_keys,
                         const char *const *meta_values, int64_t n_meta)
{
    if (!path) return tg__fail(op, "path is NULL");
    if (n < 0 || n_meta < 0) return tg__fail(op, "negative count");
    if (n && (!names || !tensors)) return tg__fail(op, "names or tensors is NULL");
    if (n_meta && (!meta_keys || !meta_values)) return tg__fail(op, "metadata arrays are NULL");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return tg__fail(op, "%s: safetensors files are little-endian; this host is not", path);
#endif
    for (int64_t i = 0; i < n; i++) {
        if (!tensors[i]) return tg__fail(op, "tensor %lld is NULL", (long long)i);
        if (!names[i] || !names[i][0])
            return tg__fail(op, "the name of tensor %lld is NULL or empty", (long long)i);
        if (!strcmp(names[i], "__metadata__"))
            return tg__fail(op, "\"__metadata__\" is reserved and cannot name a tensor");
    }
    for (int64_t i = 0; i < n_meta; i++)
        if (!meta_keys[i] || !meta_values[i])
            return tg__fail(op, "metadata key or value %lld is NULL", (long long)i);
    return 0;
}

/* No string of strs[n] is given twice ("tensor name \"a\" is given twice", `what` naming the
 * kind); `scratch` has room for n pointers. 0, or -1 with an error. */
static int st_check_unique(const char *op, const char *what, const char *const *strs, int64_t n,
                           const char **scratch)
{
    for (int64_t i = 0; i < n; i++) scratch[i] = strs[i];
    qsort(scratch, (size_t)n, sizeof *scratch, st_cmp_str);
    for (int64_t i = 1; i < n; i++)
        if (!strcmp(scratch[i], scratch[i - 1]))
            return tg__fail(op, "%s \"%s\" is given twice", what, scratch[i]);
    return 0;
}

/* The tensors in the order their bytes are written (the reference writer's: widest dtype
 * first, then by name), each with its byte count. 0, or -1 with an error. */
static int st_plan_items(const char *op, const char *const *names, tg_tensor *const *tensors,
                         int64_t n, st_item *items)
{
    for (int64_t i = 0; i < n; i++) {
        const st_dtype_name *d = st_by_dtype(tensors[i]->dtype);
        if (!d) return tg__fail(op, "tensor \"%s\": unsupported dtype", names[i]);
        items[i] =
            (st_item){ names[i], tensors[i], d->rank,
                       (uint64_t)tg__numel(tensors[i]) * tg__dtype_sizes[tensors[i]->dtype] };
    }
    qsort(items, (size_t)n, sizeof *items, st_cmp_item);
    return 0;
}

/* The header JSON of items[n] (in that order) and the metadata, padded with spaces up to a
 * data block at a multiple of 64 bytes (8 + header). 0, or -1 with an error. */
static int st_build_header(const char *op, tg__text_buf *hdr, const st_item *items, int64_t n,
                           const char *const *meta_keys, const char *const *meta_values,
                           int64_t n_meta)
{
    tg__text_put(hdr, "{", 1);
    if (n_meta) {
        tg__text_put(hdr, "\"__metadata__\":{", 16);
        for (int64_t i = 0; i < n_meta; i++) {
            if (i) tg__text_put(hdr, ",", 1);
            st_put_json_string(hdr, meta_keys[i]);
            tg__text_put(hdr, ":", 1);
            st_put_json_string(hdr, meta_values[i]);
        }
        tg__text_put(hdr, "}", 1);
    }
    uint64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        const tg_tensor *t = items[i].t;
        if (i || n_meta) tg__text_put(hdr, ",", 1);
        st_put_json_string(hdr, items[i].name);
        tg__text_printf(hdr, ":{\"dtype\":\"%s\",\"shape\":[", st_by_dtype(t->dtype)->name);
        for (int64_t k = 0; k < t->ndim; k++)
            tg__text_printf(hdr, "%s%lld", k ? "," : "", (long long)t->sizes[k]);
        tg__text_printf(hdr, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                        (unsigned long long)(off + items[i].nbytes));
        off += items[i].nbytes;
    }
    tg__text_put(hdr, "}", 1);
    while (!hdr->oom && (8 + hdr->n) % 64) tg__text_put(hdr, " ", 1);
    return hdr->oom ? tg__fail(op, "out of memory building the header") : 0;
}

/* Creates a fresh temporary file beside `path` (the file is written there, then renamed over
 * path: readers never see half a file). Its fd, with *tmp its malloc'd name; -1 with an error
 * and *tmp NULL. */
static int st_create_temp(const char *op, const char *path, char **tmp)
{
    static int64_t counter;
    size_t plen = strlen(path) + 64;
    int fd = -1;
    *tmp = malloc(plen);
    if (!*tmp) return tg__fail(op, "out of memory");
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        snprintf(*tmp, plen, "%s.tmp.%ld.%lld", path, (long)getpid(),
                 (long long)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
        fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        tg__error(op, "%s: cannot create %s: %s", path, *tmp, strerror(errno));
        free(*tmp);
        *tmp = NULL; /* nothing to remove */
    }
    return fd;
}

/* Writes the file to fd: the header's length (8 bytes, little-endian), the header, the
 * tensors' bytes, and syncs it. 0, or -1 with an error. */
static int st_write_file(const char *op, const char *path, int fd, const tg__text_buf *hdr,
                         const st_item *items, int64_t n)
{
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hdr->n >> (8 * i));
    if (st_write_all(fd, len8, 8) || st_write_all(fd, hdr->p, hdr->n))
        return tg__fail(op, "%s: write failed: %s", path, strerror(errno));
    for (int64_t i = 0; i < n; i++)
        if (st_write_tensor(op, path, fd, items[i].t, items[i].nbytes)) return -1;
    if (fsync(fd)) return tg__fail(op, "%s: fsync failed: %s", path, strerror(errno));
    return 0;
}

/* Writes the file through a temporary beside it, then renames it over path. 0, or -1 with an
 * error (the temporary is removed). */
static int st_write_atomically(const char *op, const char *path, const tg__text_buf *hdr,
                               const st_item *items, int64_t n)
{
    char *tmp;
    int fd = st_create_temp(op, path, &tmp);
    if (fd < 0) return -1;
    int rc = st_write_file(op, path, fd, hdr, items, n);
    if (close(fd) && !rc) rc = tg__fail(op, "%s: close failed: %s", path, strerror(errno));
    if (!rc && rename(tmp, path))
        rc = tg__fail(op, "%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

int tg_save_safetensors_metadata(const char *path, const char *const *names,
                                 tg_tensor *const *tensors, int64_t n, const char *const *meta_keys,
                                 const char *const *meta_values, int64_t n_meta)
{
    const char *op = "save_safetensors";
    if (st_check_args(op, path, names, tensors, n, meta_keys, meta_values, n_meta)) return -1;
    int rc = -1;
    st_item *items = malloc((n ? (size_t)n : 1) * sizeof *items);
    const char **scratch = malloc(((size_t)(n > n_meta ? n : n_meta) + 1) * sizeof *scratch);
    tg__text_buf hdr = { 0 };
    if (!items || !scratch) tg__error(op, "out of memory");
    else if (!st_check_unique(op, "tensor name", names, n, scratch) &&
             !st_check_unique(op, "metadata key", meta_keys, n_meta, scratch) &&
             !st_plan_items(op, names, tensors, n, items) &&
             !st_build_header(op, &hdr, items, n, meta_keys, meta_values, n_meta))
        rc = st_write_atomically(op, path, &hdr, items, n);
    free(hdr.p);
    free(scratch);
    free(items);
    return rc;
}

int tg_save_safetensors(const char *path, const char *const *names, tg_tensor *const *tensors,
                        int64_t n)
{
    return tg_save_safetensors_metadata(path, names, tensors, n, NULL, NULL, 0);
}
