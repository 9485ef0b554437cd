/* Language-model workloads of issue 14 (gelu_16M_out and gelu_tanh_16M_out are in tg_bench.c's
 * unary table), each beside PyTorch's figure from bench/torch_lm.py
 * (and ../shared/bench-anchors/torch_gpt2.py for the GPT-2 step), float32:
 *   layernorm_fwdbwd       layer_norm over the last dim of 4096x768 (weight, bias), forward +
 *                          backward of .sum() for input, weight and bias;
 *   sdpa_causal_fwdbwd     causal scaled_dot_product_attention, B=4 H=12 T=256 d=64, forward +
 *                          backward of .sum() for q, k and v;
 *   embedding_fwdbwd       a 50257x768 embedding looked up with 4x64 indices, forward +
 *                          backward of .sum() (the dense gradient);
 *   gpt_char_step          one training step of examples/train_gpt.c's model (4 layers, 4 heads,
 *                          128 channels, vocabulary 86, batch 16x128; AdamW);
 *   gpt2_124m_b4_t64_step  one GPT-2 124M training step (B=4, T=64, AdamW lr 1e-4) from the
 *                          random checkpoint of ../shared/bench-anchors/gen_llmc_data.py, in
 *                          the directory $TG_BENCH_GPT2_DIR (bench/run.sh makes it); its line
 *                          carries loss0, the first step's loss, which must equal PyTorch's. */
#include "bench.h"
#include "../examples/gpt/gpt.h"
#include "tensorgen.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void emit_or_skip(const char *name, const char *unit, bool ok, const double *secs,
                         double scale, const char *extra)
{
    if (ok) {
        bench_emit_extra(name, unit, "tensorgen", secs, 0, scale, extra);
    } else {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name,
                tg_last_error() ? tg_last_error() : "?");
        tg_clear_error();
    }
}

/* Leaves that require grad: tensors a workload differentiates for, gradients cleared per call. */
typedef struct lm_ctx {
    tg_tensor *t[4];
    int n;
    tg_tensor *idx; /* embedding indices */
} lm_ctx;

static void ctx_clear_grads(lm_ctx *c)
{
    for (int i = 0; i < c->n; i++) tg_tensor_set_grad(c->t[i], NULL);
}

static void ctx_free(lm_ctx *c)
{
    ctx_clear_grads(c);
    for (int i = 0; i < c->n; i++) tg_release(c->t[i]);
    tg_release(c->idx);
}

static bool backward_of_sum(tg_tensor *y) { return y && tg_backward(tg_sum(y)) == 0; }

static bool body_layernorm(void *p)
{
    lm_ctx *c = p;
    ctx_clear_grads(c);
    tg_scope_begin();
    bool ok = backward_of_sum(tg_layer_norm(c->t[0], TG_INTS(tg_tensor_size(c->t[0], 1)),
                                            .weight = c->t[1], .bias = c->t[2]));
    tg_scope_end();
    return ok;
}

static bool body_sdpa(void *p)
{
    lm_ctx *c = p;
    ctx_clear_grads(c);
    tg_scope_begin();
    bool ok = backward_of_sum(
        tg_scaled_dot_product_attention(c->t[0], c->t[1], c->t[2], .is_causal = true));
    tg_scope_end();
    return ok;
}

static bool body_embedding(void *p)
{
    lm_ctx *c = p;
    ctx_clear_grads(c);
    tg_scope_begin();
    bool ok = backward_of_sum(tg_embedding(c->t[0], c->idx));
    tg_scope_end();
    return ok;
}

/* U(0, 1) leaf of the given shape. */
static tg_tensor *leaf_rand(tg_int_list shape)
{
    tg_tensor *t = tg_rand(shape);
    return t ? tg_tensor_set_requires_grad(t, true) : NULL;
}

static void bench_ops(void)
{
    double secs[BENCH_MAX_REPEATS];
    bool s = bench_cfg.smoke;
    if (bench_wanted("layernorm_fwdbwd")) {
        int64_t rows = s ? 8 : 4096, cols = s ? 16 : 768;
        lm_ctx c = { { leaf_rand(TG_INTS(rows, cols)), leaf_rand(TG_INTS(cols)),
                       leaf_rand(TG_INTS(cols)) },
                     3,
                     NULL };
        bool ok = c.t[0] && c.t[1] && c.t[2] && bench_time(body_layernorm, &c, 4, 1, secs);
        emit_or_skip("layernorm_fwdbwd", "ms", ok, secs, 1e3, NULL);
        ctx_free(&c);
    }
    if (bench_wanted("sdpa_causal_fwdbwd")) {
        int64_t B = s ? 1 : 4, H = s ? 2 : 12, T = s ? 16 : 256, d = s ? 8 : 64;
        lm_ctx c = { { leaf_rand(TG_INTS(B, H, T, d)), leaf_rand(TG_INTS(B, H, T, d)),
                       leaf_rand(TG_INTS(B, H, T, d)) },
                     3,
                     NULL };
        bool ok = c.t[0] && c.t[1] && c.t[2] && bench_time(body_sdpa, &c, 2, 1, secs);
        emit_or_skip("sdpa_causal_fwdbwd", "ms", ok, secs, 1e3, NULL);
        ctx_free(&c);
    }
    if (bench_wanted("embedding_fwdbwd")) {
        int64_t V = s ? 64 : 50257, C = s ? 8 : 768;
        lm_ctx c = { { leaf_rand(TG_INTS(V, C)) }, 1, NULL };
        tg_tensor *r = tg_rand(TG_INTS(s ? 2 : 4, s ? 4 : 64));
        tg_tensor *scaled = r ? tg_mul_scalar(r, (double)V - 1) : NULL;
        c.idx = scaled ? tg_to(scaled, TG_INT64) : NULL;
        tg_release(r);
        tg_release(scaled);
        bool ok = c.t[0] && c.idx && bench_time(body_embedding, &c, 2, 1, secs);
        emit_or_skip("embedding_fwdbwd", "ms", ok, secs, 1e3, NULL);
        ctx_free(&c);
    }
}

/* ------------------------------------------------------------------ GPT training steps */

typedef struct step_ctx {
    gpt *m;
    gpt_adamw *opt;
    tg_tensor *x, *y;
    double loss0;
    bool first;
} step_ctx;

/* zero_grad(set_to_none=True), loss, backward, AdamW: torch_gpt2.py's timed step. */
static bool body_gpt_step(void *p)
{
    step_ctx *c = p;
    gpt_zero_grad(c->m);
    tg_scope_begin();
    tg_tensor *loss = gpt_loss(c->m, c->x, c->y);
    bool ok = loss && tg_backward(loss) == 0;
    if (ok && c->first) {
        c->loss0 = tg_item(loss);
        c->first = false;
    }
    tg_scope_end();
    return ok && gpt_adamw_step(c->m, c->opt) == 0;
}

/* (B, T) int64 tokens: inputs tokens[0 .. B*T), targets tokens[1 .. B*T]. */
static void make_xy(const int64_t *tokens, int64_t B, int64_t T, step_ctx *c)
{
    c->x = tg_tensor_from_data(tokens, (int64_t[]){ B, T }, 2, TG_INT64);
    c->y = tg_tensor_from_data(tokens + 1, (int64_t[]){ B, T }, 2, TG_INT64);
}

static void bench_gpt_char(void)
{
    if (!bench_wanted("gpt_char_step")) return;
    double secs[BENCH_MAX_REPEATS];
    bool s = bench_cfg.smoke;
    gpt_config cfg = { .vocab = 86,
                       .context = s ? 16 : 128,
                       .layers = s ? 1 : 4,
                       .heads = 4,
                       .channels = s ? 16 : 128 };
    const int64_t B = s ? 2 : 16, T = cfg.context;
    gpt m;
    if (gpt_init(&m, cfg, TG_DEVICE_CPU) != 0) {
        emit_or_skip("gpt_char_step", "ms/step", false, secs, 1e3, NULL);
        return;
    }
    int64_t *tokens = malloc((size_t)(B * T + 1) * sizeof *tokens);
    for (int64_t i = 0; tokens && i <= B * T; i++) tokens[i] = (i * 7919 + i / 13) % cfg.vocab;
    gpt_adamw opt = { .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1 };
    step_ctx c = { &m, &opt, NULL, NULL, 0, true };
    if (tokens) make_xy(tokens, B, T, &c);
    bool ok = c.x && c.y && bench_time(body_gpt_step, &c, 1, 1, secs);
    emit_or_skip("gpt_char_step", "ms/step", ok, secs, 1e3, NULL);
    tg_release(c.x);
    tg_release(c.y);
    gpt_adamw_free(&opt);
    gpt_free(&m);
    free(tokens);
}

/* llm.c's checkpoint (int32[256] header {20240326, 3, maxT, V, L, NH, C, Vp}, then float32
 * parameters in llm.c's order, layers stacked) copied into a gpt with V = the real vocabulary
 * (the first V rows of the padded token embedding). 0, or -1 with a note on stderr. */
static int load_llmc(gpt *m, const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 1024) {
        if (fd >= 0) close(fd);
        fprintf(stderr, "tg_bench: cannot read %s\n", path);
        return -1;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    const int32_t *h = map;
    int rc = -1;
    if (h[0] != 20240326 || h[1] != 3) {
        fprintf(stderr, "tg_bench: %s is not an llm.c v3 checkpoint\n", path);
        goto out;
    }
    gpt_config cfg = {
        .vocab = h[3], .context = h[2], .layers = h[4], .heads = h[5], .channels = h[6]
    };
    const int64_t Vp = h[7], L = cfg.layers, C = cfg.channels, maxT = cfg.context;
    if (gpt_init(m, cfg, TG_DEVICE_CPU) != 0) goto out;
    float *f = (float *)((char *)map + 1024);
    /* llm.c's tensors in order: element count of one layer's slice (all of it when not per
     * layer), and where each slice goes. */
    struct {
        int64_t numel;
        bool per_layer;
        size_t offset; /* of the tg_tensor* in gpt_block, or (size_t)-1 */
        tg_tensor **whole;
    } order[] = {
        { Vp * C, false, (size_t)-1, &m->wte },
        { maxT * C, false, (size_t)-1, &m->wpe },
        { C, true, offsetof(gpt_block, ln1_w), NULL },
        { C, true, offsetof(gpt_block, ln1_b), NULL },
        { 3 * C * C, true, offsetof(gpt_block, attn_w), NULL },
        { 3 * C, true, offsetof(gpt_block, attn_b), NULL },
        { C * C, true, offsetof(gpt_block, proj_w), NULL },
        { C, true, offsetof(gpt_block, proj_b), NULL },
        { C, true, offsetof(gpt_block, ln2_w), NULL },
        { C, true, offsetof(gpt_block, ln2_b), NULL },
        { 4 * C * C, true, offsetof(gpt_block, fc_w), NULL },
        { 4 * C, true, offsetof(gpt_block, fc_b), NULL },
        { 4 * C * C, true, offsetof(gpt_block, out_w), NULL },
        { C, true, offsetof(gpt_block, out_b), NULL },
        { C, false, (size_t)-1, &m->lnf_w },
        { C, false, (size_t)-1, &m->lnf_b },
    };
    int64_t total = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        total += order[i].numel * (order[i].per_layer ? L : 1);
    if ((int64_t)st.st_size != 1024 + 4 * total) {
        fprintf(stderr, "tg_bench: %s has %lld bytes, expected %lld\n", path, (long long)st.st_size,
                (long long)(1024 + 4 * total));
        gpt_free(m);
        goto out;
    }
    rc = 0;
    TG_NO_GRAD {
        for (size_t i = 0; i < sizeof order / sizeof order[0] && rc == 0; i++) {
            for (int64_t l = 0; l < (order[i].per_layer ? L : 1) && rc == 0; l++) {
                tg_tensor *dst = order[i].per_layer
                                     ? *(tg_tensor **)((char *)&m->blocks[l] + order[i].offset)
                                     : *order[i].whole;
                /* wte: the first V of its Vp rows (the padding is not part of the model) */
                tg_tensor *src = tg_tensor_from_blob(f, tg_tensor_sizes(dst), NULL,
                                                     tg_tensor_dim(dst), TG_FLOAT32, NULL, NULL);
                tg_tensor *r = src ? tg_copy_(dst, src) : NULL;
                if (!r) rc = -1;
                tg_release(r);
                tg_release(src);
                f += order[i].numel;
            }
        }
    }
    if (rc != 0) gpt_free(m);
out:
    munmap(map, (size_t)st.st_size);
    return rc;
}

/* llm.c's token file: int32[256] header {20240520, 1, ntok}, then uint16 tokens. */
static int64_t *read_llmc_tokens(const char *path, int64_t n)
{
    FILE *fp = fopen(path, "rb");
    int32_t h[256];
    int64_t *out = NULL;
    if (fp && fread(h, sizeof h, 1, fp) == 1 && h[0] == 20240520 && h[2] >= n) {
        uint16_t *raw = malloc((size_t)n * sizeof *raw);
        out = malloc((size_t)n * sizeof *out);
        if (raw && out && fread(raw, sizeof *raw, (size_t)n, fp) == (size_t)n) {
            for (int64_t i = 0; i < n; i++) out[i] = raw[i];
        } else {
            free(out);
            out = NULL;
        }
        free(raw);
    }
    if (fp) fclose(fp);
    if (!out) fprintf(stderr, "tg_bench: cannot read %lld tokens from %s\n", (long long)n, path);
    return out;
}

static void bench_gpt2(void)
{
    if (!bench_wanted("gpt2_124m_b4_t64_step") || bench_cfg.smoke) return;
    const char *dir = getenv("TG_BENCH_GPT2_DIR");
    if (!dir) {
        fprintf(stderr, "tg_bench: gpt2_124m_b4_t64_step skipped: TG_BENCH_GPT2_DIR is not set "
                        "(bench/run.sh sets it)\n");
        return;
    }
    char ckpt[4096], tok[4096];
    snprintf(ckpt, sizeof ckpt, "%s/gpt2_124m_rand.bin", dir);
    snprintf(tok, sizeof tok, "%s/tok_124m.bin", dir);
    const int64_t B = 4, T = 64;
    double secs[BENCH_MAX_REPEATS];
    gpt m;
    if (load_llmc(&m, ckpt) != 0) return;
    int64_t *tokens = read_llmc_tokens(tok, B * T + 1);
    /* torch_gpt2.py's optimizer: AdamW lr 1e-4, betas (0.9, 0.999), eps 1e-8, no decay. */
    gpt_adamw opt = { .lr = 1e-4, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8 };
    step_ctx c = { &m, &opt, NULL, NULL, 0, true };
    if (tokens) make_xy(tokens, B, T, &c);
    /* Fewer repeats than the small workloads: a step is seconds. */
    int repeats = bench_cfg.repeats;
    bench_cfg.repeats = 3;
    bool ok = c.x && c.y && bench_time(body_gpt_step, &c, 1, 1, secs);
    char extra[128];
    snprintf(extra, sizeof extra, "\"loss0\": %.5f, \"B\": %lld, \"T\": %lld, \"params\": %lld",
             c.loss0, (long long)B, (long long)T, (long long)gpt_num_params(&m));
    emit_or_skip("gpt2_124m_b4_t64_step", "ms/step", ok, secs, 1e3, extra);
    bench_cfg.repeats = repeats;
    tg_release(c.x);
    tg_release(c.y);
    gpt_adamw_free(&opt);
    gpt_free(&m);
    free(tokens);
}

void bench_lm(void)
{
    bench_ops();
    bench_gpt_char();
    bench_gpt2();
}
