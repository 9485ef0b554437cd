/* Random windows of a token file (tg_nn_data.h): raw little-endian uint16 tokens, as llm.c and
 * nanoGPT write their .bin files, memory-mapped read-only. Sample i draws its window's start
 * from its seed, so the dataset's length is only the number of samples an epoch takes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../nn_private.h"

#define OP "TokenDataset"

typedef struct token_ctx {
    const uint8_t *map; /* the file, 2 bytes a token */
    size_t map_bytes;
    int64_t num_tokens, block;
} token_ctx;

static void token_ctx_free(void *p)
{
    token_ctx *c = p;
    if (c->map) munmap((void *)c->map, c->map_bytes);
    free(c);
}

/* x = tokens[s .. s+block), y = tokens[s+1 .. s+block+1), s uniform in [0, num_tokens - block). */
static int token_get(void *p, int64_t index, void *const *slots, uint64_t seed)
{
    const token_ctx *c = p;
    (void)index;
    tg_data_rng r;
    tg_data_rng_seed(&r, seed);
    int64_t s = tg_data_rng_below(&r, c->num_tokens - c->block);
    int64_t *x = slots[0], *y = slots[1];
    const uint8_t *b = c->map + 2 * s;
    for (int64_t i = 0; i <= c->block; i++) {
        int64_t tok = (int64_t)b[2 * i] | (int64_t)b[2 * i + 1] << 8;
        if (i < c->block) x[i] = tok;
        if (i > 0) y[i - 1] = tok;
    }
    return 0;
}

tg_dataset *tg_token_dataset_new(const char *path, int64_t block_size, int64_t num_samples)
{
    if (!path) return tg_set_error(OP, "the path is NULL");
    if (block_size < 1 || block_size > INT64_MAX / 2)
        return tg_set_error(OP, "block_size must be positive, got %lld", (long long)block_size);
    if (num_samples < 0)
        return tg_set_error(OP, "num_samples must be >= 0, got %lld", (long long)num_samples);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tg_set_error(OP, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return tg_set_error(OP, "cannot stat %s: %s", path, strerror(e));
    }
    int64_t num_tokens = (int64_t)st.st_size / 2;
    if (num_tokens < block_size + 1) {
        close(fd);
        return tg_set_error(OP, "%s has %lld tokens, fewer than block_size + 1 = %lld", path,
                            (long long)num_tokens, (long long)block_size + 1);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file */
    if (map == MAP_FAILED) return tg_set_error(OP, "cannot map %s: %s", path, strerror(e));
    token_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        munmap(map, (size_t)st.st_size);
        return tg_set_error(OP, "out of memory");
    }
    c->map = map;
    c->map_bytes = (size_t)st.st_size;
    c->num_tokens = num_tokens;
    c->block = block_size;
    tg_data_field fields[2] = {
        { .name = "x", .dtype = TG_INT64, .ndim = 1, .sizes = { block_size } },
        { .name = "y", .dtype = TG_INT64, .ndim = 1, .sizes = { block_size } },
    };
    tg_dataset_desc d = { .name = OP,
                          .length = num_samples,
                          .num_fields = 2,
                          .fields = fields,
                          .get = token_get,
                          .ctx = c,
                          .free_ctx = token_ctx_free };
    return tg_dataset_new(&d);
}
