/* Language-model workloads of issue 14 (gelu_16M_out and gelu_tanh_16M_out are in tg_bench.c's
 * unary table), each beside PyTorch's figure from bench/torch_lm.py
 * (and ../shared/bench-anchors/torch_gpt2.py for the GPT-2 step), float32:
 *   layernorm_fwdbwd       layer_norm over the last dim of 4096x768 (weight, bias), forward +
 *                          backward of .sum() for input, weight and bias;
 *   sdpa_causal_fwdbwd     causal scaled_dot_product_attention, B=4 H=12 T=256 d=64, forward +
 *                          backward of .sum() for q, k and v;
 *   embedding_fwdbwd       a 50257x768 embedding looked up with 4x64 indices, forward +
 *                          backward of .sum() (the dense gradient);
 *   gpt_char_step          one training step of examples/train_gpt.c's model (nn/'s GPT-2: 4
 *                          layers, 4 heads, 128 channels, vocabulary 86, batch 16x128; AdamW);
 *   gpt2_124m_b4_t64_step  one GPT-2 124M training step (B=4, T=64, AdamW lr 1e-4) from the
 *                          random checkpoint of ../shared/bench-anchors/gen_llmc_data.py, in
 *                          the directory $TG_BENCH_GPT2_DIR (bench/run.sh makes it); its line
 *                          carries loss0, the first step's loss, which must equal PyTorch's. */
#include "bench.h"
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
    tg_module *m; /* tg_nn_gpt2 */
    tg_optimizer *opt;
    tg_tensor *x, *y;
    double loss0;
    bool first;
} step_ctx;

/* zero_grad(set_to_none=True), loss, backward, AdamW: torch_gpt2.py's timed step. */
static bool body_gpt_step(void *p)
{
    step_ctx *c = p;
    tg_optimizer_zero_grad(c->opt);
    tg_scope_begin();
    tg_tensor *loss = tg_nn_gpt2_loss(c->m, c->x, c->y);
    bool ok = loss && tg_backward(loss) == 0;
    if (ok && c->first) {
        c->loss0 = tg_item(loss);
        c->first = false;
    }
    tg_scope_end();
    return ok && tg_optimizer_step(c->opt) == 0;
}

/* (B, T) int64 tokens: inputs tokens[0 .. B*T), targets tokens[1 .. B*T]. */
static void make_xy(const int64_t *tokens, int64_t B, int64_t T, step_ctx *c)
{
    c->x = tg_tensor_from_data(tokens, (int64_t[]){ B, T }, 2, TG_INT64);
    c->y = tg_tensor_from_data(tokens + 1, (int64_t[]){ B, T }, 2, TG_INT64);
}

static void step_ctx_free(step_ctx *c)
{
    tg_release(c->x);
    tg_release(c->y);
    tg_optimizer_free(c->opt);
    tg_module_free(c->m);
}

static void bench_gpt_char(void)
{
    if (!bench_wanted("gpt_char_step")) return;
    double secs[BENCH_MAX_REPEATS];
    bool s = bench_cfg.smoke;
    const int64_t V = 86, T = s ? 16 : 128, B = s ? 2 : 16;
    step_ctx c = { .first = true };
    c.m = tg_nn_gpt2(.vocab_size = V, .n_positions = T, .n_embd = s ? 16 : 128,
                     .n_layer = s ? 1 : 4, .n_head = 4);
    /* train_gpt's AdamW: decay 0.1 on matrices and embeddings only */
    c.opt = c.m ? tg_adamw_new(TG_MODULE_PARAMS(c.m), .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.95,
                               .weight_decay = 0.1)
                : NULL;
    bool ok = c.opt && tg_optimizer_add_group(c.opt, "*.bias", .weight_decay = 0) >= 0 &&
              tg_optimizer_add_group(c.opt, "*ln_*", .weight_decay = 0) >= 0;
    int64_t *tokens = malloc((size_t)(B * T + 1) * sizeof *tokens);
    for (int64_t i = 0; tokens && i <= B * T; i++) tokens[i] = (i * 7919 + i / 13) % V;
    if (tokens) make_xy(tokens, B, T, &c);
    ok = ok && c.x && c.y && bench_time(body_gpt_step, &c, 1, 1, secs);
    emit_or_skip("gpt_char_step", "ms/step", ok, secs, 1e3, NULL);
    step_ctx_free(&c);
    free(tokens);
}

/* Copies n float32 values at f into the parameter `name` of m; `transposed`: f holds the
 * (rows, cols) transpose of it (llm.c's Linear layout for a Conv1D weight). */
static int copy_param(tg_module *m, const char *name, const float *f, bool transposed)
{
    tg_tensor *dst = tg_module_get_tensor(m, name);
    if (!dst) return -1;
    int64_t nd = tg_tensor_dim(dst),
            sizes[2] = { tg_tensor_size(dst, 0), nd == 2 ? tg_tensor_size(dst, 1) : 1 };
    int64_t src_sizes[2] = { sizes[transposed ? 1 : 0], sizes[transposed ? 0 : 1] };
    int rc = -1;
    TG_NO_GRAD {
        tg_scope_begin();
        tg_tensor *src =
            tg_tensor_from_blob((void *)f, src_sizes, NULL, nd, TG_FLOAT32, NULL, NULL);
        if (src && transposed) src = tg_transpose(src, 0, 1);
        rc = src && tg_copy_(dst, src) ? 0 : -1;
        tg_scope_end();
    }
    return rc;
}

/* llm.c's checkpoint (int32[256] header {20240326, 3, maxT, V, L, NH, C, Vp}, then float32
 * parameters in llm.c's order, layers stacked) copied into a tg_nn_gpt2 with V = the real
 * vocabulary (the first V rows of the padded token embedding); llm.c's matrices are Linear's
 * (out, in), GPT-2's Conv1D weights their transposes. The model, or NULL with a note. */
static tg_module *load_llmc(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 1024) {
        if (fd >= 0) close(fd);
        fprintf(stderr, "tg_bench: cannot read %s\n", path);
        return NULL;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return NULL;
    const int32_t *h = map;
    tg_module *m = NULL;
    if (h[0] != 20240326 || h[1] != 3) {
        fprintf(stderr, "tg_bench: %s is not an llm.c v3 checkpoint\n", path);
        goto out;
    }
    const int64_t maxT = h[2], V = h[3], L = h[4], NH = h[5], C = h[6], Vp = h[7];
    /* llm.c's tensors in order: elements of one layer's slice, the module name (%d: the
     * layer), and whether it is stored transposed. */
    static const struct {
        int64_t rows, cols; /* in units of C (0: the vocabulary or context rows) */
        const char *name;
        bool transposed;
    } order[] = {
        { 0, 1, "transformer.wte.weight", false },
        { -1, 1, "transformer.wpe.weight", false },
        { 1, 0, "transformer.h.%d.ln_1.weight", false },
        { 1, 0, "transformer.h.%d.ln_1.bias", false },
        { 3, 1, "transformer.h.%d.attn.c_attn.weight", true },
        { 3, 0, "transformer.h.%d.attn.c_attn.bias", false },
        { 1, 1, "transformer.h.%d.attn.c_proj.weight", true },
        { 1, 0, "transformer.h.%d.attn.c_proj.bias", false },
        { 1, 0, "transformer.h.%d.ln_2.weight", false },
        { 1, 0, "transformer.h.%d.ln_2.bias", false },
        { 4, 1, "transformer.h.%d.mlp.c_fc.weight", true },
        { 4, 0, "transformer.h.%d.mlp.c_fc.bias", false },
        { 1, 4, "transformer.h.%d.mlp.c_proj.weight", true },
        { 1, 0, "transformer.h.%d.mlp.c_proj.bias", false },
        { 1, 0, "transformer.ln_f.weight", false },
        { 1, 0, "transformer.ln_f.bias", false },
    };
    int64_t numel[16], total = 0;
    for (int i = 0; i < 16; i++) {
        int64_t rows = order[i].rows == 0 ? Vp : order[i].rows < 0 ? maxT : order[i].rows * C;
        numel[i] = rows * (order[i].cols ? order[i].cols * C : 1);
        total += numel[i] * (strstr(order[i].name, "%d") ? L : 1);
    }
    if ((int64_t)st.st_size != 1024 + 4 * total) {
        fprintf(stderr, "tg_bench: %s has %lld bytes, expected %lld\n", path, (long long)st.st_size,
                (long long)(1024 + 4 * total));
        goto out;
    }
    m = tg_nn_gpt2(.vocab_size = V, .n_positions = maxT, .n_embd = C, .n_layer = L, .n_head = NH);
    const float *f = (const float *)((const char *)map + 1024);
    for (int i = 0; m && i < 16; i++)
        for (int64_t l = 0; l < (strstr(order[i].name, "%d") ? L : 1); l++, f += numel[i]) {
            char name[96];
            snprintf(name, sizeof name, order[i].name, (int)l);
            /* wte: the first V of its Vp rows (the padding is not part of the model) */
            if (copy_param(m, name, f, order[i].transposed) != 0) {
                tg_module_free(m);
                m = NULL;
                break;
            }
        }
out:
    munmap(map, (size_t)st.st_size);
    return m;
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
    step_ctx c = { .m = load_llmc(ckpt), .first = true };
    if (!c.m) return;
    int64_t *tokens = read_llmc_tokens(tok, B * T + 1);
    /* torch_gpt2.py's optimizer: AdamW lr 1e-4, betas (0.9, 0.999), eps 1e-8, no decay. */
    c.opt = tg_adamw_new(TG_MODULE_PARAMS(c.m), .lr = 1e-4, .weight_decay = 0);
    if (tokens) make_xy(tokens, B, T, &c);
    /* Fewer repeats than the small workloads: a step is seconds. */
    int repeats = bench_cfg.repeats;
    bench_cfg.repeats = 3;
    bool ok = c.opt && c.x && c.y && bench_time(body_gpt_step, &c, 1, 1, secs);
    char extra[128];
    snprintf(extra, sizeof extra, "\"loss0\": %.5f, \"B\": %lld, \"T\": %lld, \"params\": %lld",
             c.loss0, (long long)B, (long long)T, (long long)tg_module_num_parameters(c.m, false));
    emit_or_skip("gpt2_124m_b4_t64_step", "ms/step", ok, secs, 1e3, extra);
    bench_cfg.repeats = repeats;
    step_ctx_free(&c);
    free(tokens);
}

void bench_lm(void)
{
    bench_ops();
    bench_gpt_char();
    bench_gpt2();
}
