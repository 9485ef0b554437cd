/* The C side of the state-dict test against PyTorch (tests/nn/torch_interop.py, run by
 * `make test-nn-torch`): in DIR, PyTorch wrote resnet18.safetensors (torchvision's resnet18),
 * gpt2.safetensors (GPT-2 in Hugging Face's layout, tied weights saved once) and
 * io.safetensors (inputs and PyTorch's outputs). This loads both models strictly into
 * tensorgen's modules, checks the report is empty and the outputs equal PyTorch's to 1e-5, and
 * writes DIR/tensorgen_{resnet18,gpt2}.safetensors for PyTorch to load back.
 *
 *   nn_interop DIR
 *
 * Public API only. Exit status 0, or 1 with a message on stderr. */
#include "tensorgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
    fprintf(stderr, "nn_interop: %s: %s\n", what, tg_last_error() ? tg_last_error() : "failed");
    return 1;
}

/* Loads path into m strictly and checks the report is empty. */
static int load(tg_module *m, const char *path)
{
    tg_load_report r = { 0 };
    int rc = tg_module_load(m, path, .report = &r);
    printf("  %s: %lld missing, %lld unexpected, %lld mismatched keys\n", path,
           (long long)r.n_missing, (long long)r.n_unexpected, (long long)r.n_mismatched);
    bool clean = rc == 0 && !r.n_missing && !r.n_unexpected && !r.n_mismatched;
    tg_load_report_free(&r);
    return clean ? 0 : fail(path);
}

/* max |ours - ref| <= 1e-5 * max(1, max |ref|). */
static int compare(const char *what, tg_tensor *ours, tg_tensor *ref)
{
    int64_t n = tg_tensor_numel(ref);
    if (!ours || tg_tensor_numel(ours) != n) return fail(what);
    double *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n);
    double err = 0, scale = 1;
    if (!a || !b || tg_tensor_to_doubles(ours, a, n) || tg_tensor_to_doubles(ref, b, n)) {
        free(a);
        free(b);
        return fail(what);
    }
    for (int64_t i = 0; i < n; i++) {
        err = fmax(err, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    free(a);
    free(b);
    printf("  %s: max |difference| %.3g (scale %.3g)\n", what, err, scale);
    if (err <= 1e-5 * scale) return 0;
    fprintf(stderr, "nn_interop: %s differs from PyTorch's by %g\n", what, err);
    return 1;
}

static int run(tg_module *m, const char *dir, const char *name, tg_state *io, const char *in,
               const char *ref)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    if (!m) return fail(name);
    int rc = load(m, path);
    tg_module_eval(m);
    TG_NO_GRAD {
        tg_scope_begin();
        if (rc == 0)
            rc = compare(name, tg_module_forward(m, tg_state_tensor(io, in)),
                         tg_state_tensor(io, ref));
        tg_scope_end();
    }
    snprintf(path, sizeof path, "%s/tensorgen_%s.safetensors", dir, name);
    if (rc == 0 && tg_module_save(m, path, .keep_tied = true) != 0) rc = fail(path);
    tg_module_free(m);
    return rc;
}

/* The layers of torch_interop.py's layer_zoo(), built the same way. */
static tg_module *zoo_layer(const char *name)
{
    if (!strcmp(name, "lin")) return tg_nn_linear(5, 4);
    if (!strcmp(name, "c1")) return tg_nn_conv1d(4, 6, 3, .stride = 2, .padding = 1);
    if (!strcmp(name, "c2")) return tg_nn_conv2d(4, 6, 3, .padding = 1, .groups = 2);
    if (!strcmp(name, "ct"))
        return tg_nn_conv_transpose2d(4, 3, 3, .stride = 2, .padding = 1, .output_padding = 1);
    if (!strcmp(name, "bn")) return tg_nn_batch_norm2d(4);
    if (!strcmp(name, "bn1")) return tg_nn_batch_norm1d(4);
    if (!strcmp(name, "ln")) return tg_nn_layer_norm(6);
    if (!strcmp(name, "gn")) return tg_nn_group_norm(2, 4);
    if (!strcmp(name, "emb")) return tg_nn_embedding(10, 5, .padding_idx = 2);
    if (!strcmp(name, "mha")) return tg_nn_multihead_attention(8, 2);
    if (!strcmp(name, "mhab")) return tg_nn_multihead_attention(8, 2, .batch_first = true);
    return NULL;
}

/* Each zoo layer loaded from zoo.safetensors (prefix "zoo.<name>."), run on PyTorch's input in
 * PyTorch's mode, compared; BatchNorm2d in training mode also by its updated statistics. */
static int run_zoo(const char *dir, tg_state *io)
{
    static const char *const names[] = { "lin", "c1", "c2",  "ct",  "bn",  "bn1",
                                         "ln",  "gn", "emb", "mha", "mhab" };
    char path[4096], key[64], prefix[32];
    snprintf(path, sizeof path, "%s/zoo.safetensors", dir);
    tg_state *zoo = tg_state_open(path);
    if (!zoo) return fail(path);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof names / sizeof *names; i++) {
        const char *n = names[i];
        tg_module *m = zoo_layer(n);
        snprintf(prefix, sizeof prefix, "zoo.%s.", n);
        tg_load_report r = { 0 };
        rc = m &&
                     tg_module_load_state_dict(m, zoo, .prefix = prefix, .strict = false,
                                               .report = &r) == 0 &&
                     r.n_missing == 0 && r.n_mismatched == 0
                 ? 0
                 : fail(n);
        tg_load_report_free(&r);
        tg_module_train(m, strcmp(n, "bn") == 0); /* as torch_interop.py runs them */
        tg_scope_begin();
        TG_NO_GRAD {
            snprintf(key, sizeof key, "zoo.%s.in0", n);
            tg_tensor *x = rc == 0 ? tg_state_tensor(io, key) : NULL, *y = NULL;
            if (x && strncmp(n, "mha", 3) == 0) {
                tg_tensor *in[4];
                for (int k = 0; k < 4; k++) {
                    snprintf(key, sizeof key, "zoo.%s.in%d", n, k);
                    in[k] = tg_state_tensor(io, key);
                }
                /* the bool mask travels as int64; the causal one is a float mask */
                tg_tensor *mask =
                    tg_tensor_dtype(in[3]) == TG_INT64 ? tg_ne_scalar(in[3], 0) : in[3];
                y = tg_nn_multihead_attention_forward(m, in[0], in[1], in[2], .attn_mask = mask);
            } else if (x) y = tg_module_forward(m, x);
            snprintf(key, sizeof key, "zoo.%s.out", n);
            if (rc == 0) rc = compare(key, y, tg_state_tensor(io, key));
            if (rc == 0 && strcmp(n, "bn") == 0) {
                rc = compare("zoo.bn.running_mean", tg_module_get_tensor(m, "running_mean"),
                             tg_state_tensor(io, "zoo.bn.running_mean"));
                if (rc == 0)
                    rc = compare("zoo.bn.running_var", tg_module_get_tensor(m, "running_var"),
                                 tg_state_tensor(io, "zoo.bn.running_var"));
            }
        }
        tg_scope_end();
        tg_module_free(m);
    }
    tg_state_free(zoo);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: nn_interop DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/io.safetensors", argv[1]);
    tg_state *io = tg_state_open(path);
    if (!io) return fail(path);
    int rc = run(tg_nn_resnet18(), argv[1], "resnet18", io, "resnet_x", "resnet_logits");
    if (rc == 0)
        rc = run(tg_nn_gpt2(.vocab_size = 101, .n_positions = 32, .n_embd = 64, .n_layer = 2,
                            .n_head = 4),
                 argv[1], "gpt2", io, "gpt_idx", "gpt_logits");
    if (rc == 0) rc = run_zoo(argv[1], io);
    tg_state_free(io);
    long long live = (long long)tg_live_tensors();
    if (live != 0) {
        fprintf(stderr, "nn_interop: %lld tensors leaked\n", live);
        rc = 1;
    }
    return rc;
}
