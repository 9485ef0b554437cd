/* nn/ modules and state dicts: the parameter tree's names and order (PyTorch's, written out by
 * hand from torch 1.13), tied weights, to(), freezing, apply, the repr, the initialisers'
 * distributions (their bounds and moments from torch.nn.init's formulas), and loading: the
 * report of missing, unexpected and mismatched keys, prefixes and renames, and all-or-nothing
 * behaviour on a mismatch or a corrupt file. The outputs of the layers and models against
 * PyTorch's are checked by `make test-nn-torch` (tests/nn/torch_interop.py). */
#include "../runtime/rt_test.h"
#include "kt_util.h"
#include "tensorgen.h"

#include <stdlib.h>
#include <unistd.h>

TestSuite(nn_module, .fini = rt_leak_check);

static void expect_names(tg_named_tensors l, const char *const *want, int64_t n)
{
    cr_assert_eq(l.len, n, "got %lld names, want %lld", (long long)l.len, (long long)n);
    for (int64_t i = 0; i < n; i++) cr_expect_str_eq(l.data[i].name, want[i]);
}

/* nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.BatchNorm1d(3), nn.Linear(3, 1, bias=False)) */
static tg_module *small_net(void)
{
    return tg_nn_sequential(tg_nn_linear(2, 3), tg_nn_relu(), tg_nn_batch_norm1d(3),
                            tg_nn_linear(3, 1, .bias = false));
}

Test(nn_module, names_in_pytorch_order)
{
    tg_module *m = small_net();
    cr_assert(m, "%s", tg_last_error());
    tg_named_tensors l;
    cr_assert_eq(tg_module_named_tensors(m, &l), 0);
    expect_names(l, (const char *[]){ "0.weight", "0.bias", "2.weight", "2.bias", "3.weight" }, 5);
    tg_named_tensors_free(&l);
    /* state_dict order: a module's parameters, then its buffers, then its children */
    cr_assert_eq(tg_module_named_tensors(m, &l, .buffers = true, .persistent_only = true), 0);
    expect_names(l,
                 (const char *[]){ "0.weight", "0.bias", "2.weight", "2.bias", "2.running_mean",
                                   "2.running_var", "2.num_batches_tracked", "3.weight" },
                 8);
    cr_expect(l.data[4].is_buffer && !l.data[3].is_buffer);
    tg_named_tensors_free(&l);
    cr_assert_eq(
        tg_module_named_tensors(m, &l, .parameters = false, .buffers = true, .prefix = "net"), 0);
    expect_names(
        l,
        (const char *[]){ "net.2.running_mean", "net.2.running_var", "net.2.num_batches_tracked" },
        3);
    tg_named_tensors_free(&l);
    /* 2*3+3 + 3+3 + 3 */
    cr_expect_eq(tg_module_num_parameters(m, false), 18);
    cr_expect_str_eq(tg_module_type_name(tg_module_get(m, "2")), "BatchNorm1d");
    cr_expect_eq(tg_tensor_size(tg_module_get_tensor(m, "0.weight"), 0), 3);
    cr_expect_null(tg_module_get_tensor(m, "3.bias"));
    cr_expect(strstr(tg_last_error(), "has no parameter or buffer '3.bias'"), "%s",
              tg_last_error());
    tg_clear_error();
    cr_expect_null(tg_module_get(m, "0.nope"));
    cr_expect(strstr(tg_last_error(), "no submodule 'nope'"), "%s", tg_last_error());
    tg_clear_error();
    tg_module_free(m);
}

/* print(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.BatchNorm1d(3), nn.Linear(3, 1,
 * bias=False))) in torch 1.13 */
Test(nn_module, repr_is_pytorchs)
{
    tg_module *m = small_net();
    char *s = tg_module_to_string(m);
    cr_expect_str_eq(s, "Sequential(\n"
                        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                        "  (1): ReLU()\n"
                        "  (2): BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, "
                        "track_running_stats=True)\n"
                        "  (3): Linear(in_features=3, out_features=1, bias=False)\n"
                        ")");
    free(s);
    tg_module_free(m);
}

Test(nn_module, bad_constructor_arguments_and_registration)
{
    cr_expect_null(tg_nn_conv2d(3, 4, 3, .groups = 2));
    cr_expect(strstr(tg_last_error(), "Conv2d: in_channels (3) and out_channels (4) must be "
                                      "divisible by groups (2)"),
              "%s", tg_last_error());
    tg_clear_error();
    /* a NULL among a Sequential's modules (a failed constructor) frees the others */
    cr_expect_null(tg_nn_sequential(tg_nn_linear(2, 2), tg_nn_dropout(2.0), tg_nn_relu()));
    cr_expect(strstr(tg_last_error(), "Dropout: dropout probability has to be between 0 and 1"),
              "%s", tg_last_error());
    tg_clear_error();
    tg_module *l = tg_nn_linear(2, 2);
    tg_tensor *extra = tg_ones(TG_INTS(2));
    cr_expect_null(tg_module_register_parameter(l, "weight", &extra)); /* frees l and extra */
    cr_expect(strstr(tg_last_error(), "attribute 'weight' already exists"), "%s", tg_last_error());
    cr_expect_null(extra);
    tg_clear_error();
}

Test(nn_module, tied_weights_listed_once_and_stay_tied)
{
    tg_module *g =
        tg_nn_gpt2(.vocab_size = 11, .n_positions = 8, .n_embd = 8, .n_layer = 1, .n_head = 2);
    cr_assert(g, "%s", tg_last_error());
    tg_tensor *wte = tg_module_get_tensor(g, "transformer.wte.weight");
    cr_expect_eq(tg_module_get_tensor(g, "lm_head.weight"), wte);
    tg_named_tensors l, all;
    cr_assert_eq(tg_module_named_tensors(g, &l), 0);
    cr_assert_eq(tg_module_named_tensors(g, &all, .keep_duplicates = true), 0);
    cr_expect_eq(all.len, l.len + 1);
    cr_expect_str_eq(all.data[all.len - 1].name, "lm_head.weight");
    tg_named_tensors_free(&l);
    tg_named_tensors_free(&all);
    cr_assert_eq(tg_module_to(g, .dtype = TG_FLOAT64), 0, "%s", tg_last_error());
    wte = tg_module_get_tensor(g, "transformer.wte.weight");
    cr_expect_eq(tg_tensor_dtype(wte), TG_FLOAT64);
    cr_expect_eq(tg_module_get_tensor(g, "lm_head.weight"), wte, "to() untied the weights");
    cr_expect(tg_tensor_requires_grad(wte));
    tg_module_free(g);
}

Test(nn_module, to_keeps_integer_buffers_and_fails_whole)
{
    tg_module *m = small_net();
    tg_tensor *before = tg_module_get_tensor(m, "0.weight");
    /* no such device: an error, and nothing moved */
    cr_expect_eq(tg_module_to(m, .device = TG_DEVICE_CUDA(7)), -1);
    cr_expect(strstr(tg_last_error(), "cuda:7"), "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg_module_get_tensor(m, "0.weight"), before);
    cr_expect_eq(tg_module_to(m, .dtype = TG_INT32), -1);
    cr_expect(strstr(tg_last_error(), "only accepts floating point dtypes"), "%s", tg_last_error());
    tg_clear_error();
    cr_assert_eq(tg_module_to(m, .dtype = TG_FLOAT64), 0);
    cr_expect_eq(tg_tensor_dtype(tg_module_get_tensor(m, "2.running_mean")), TG_FLOAT64);
    cr_expect_eq(tg_tensor_dtype(tg_module_get_tensor(m, "2.num_batches_tracked")), TG_INT64);
    cr_expect_eq(tg_module_to(m), 0); /* nothing asked: nothing changes */
    tg_module_free(m);
}

static int count_modules(tg_module *m, const char *path, void *ctx)
{
    char *seen = ctx;
    strcat(seen, *path ? path : "<root>");
    strcat(seen, ";");
    return 0;
}

Test(nn_module, train_eval_freeze_zero_grad_apply)
{
    tg_module *m = small_net();
    cr_expect(tg_module_get(m, "2")->training);
    tg_module_eval(m);
    cr_expect(!tg_module_get(m, "2")->training);
    tg_module_requires_grad_(tg_module_get(m, "0"), false); /* freeze the first layer */
    cr_expect_eq(tg_module_num_parameters(m, true), 18 - 9);
    char seen[256] = "";
    cr_expect_eq(tg_module_apply(m, count_modules, seen), 0);
    cr_expect_str_eq(seen, "0;1;2;3;<root>;"); /* children first, as module.apply */
    /* a backward fills the trainable parameters' grads; zero_grad clears them */
    tg_module_train(m, true);
    tg_scope_begin();
    tg_tensor *x = tg_randn(TG_INTS(4, 2));
    cr_assert_eq(tg_backward(tg_sum(tg_module_forward(m, x))), 0, "%s", tg_last_error());
    tg_scope_end();
    tg_tensor *g3 = tg_tensor_grad(tg_module_get_tensor(m, "3.weight"));
    tg_tensor *g0 = tg_tensor_grad(tg_module_get_tensor(m, "0.weight"));
    cr_expect_not_null(g3);
    cr_expect_null(g0);
    tg_release(g3);
    /* one training batch: num_batches_tracked counts it */
    cr_expect_eq(tg_item(tg_module_get_tensor(m, "2.num_batches_tracked")), 1);
    tg_module_zero_grad(m);
    g3 = tg_tensor_grad(tg_module_get_tensor(m, "3.weight"));
    cr_expect_null(g3);
    tg_module_free(m);
}

/* ---- initialisers: bounds and moments from torch.nn.init's formulas ---- */

static void moments(tg_tensor *t, double *mean, double *std, double *lo, double *hi)
{
    int64_t n = tg_tensor_numel(t);
    double *v = malloc(sizeof *v * (size_t)n), s = 0, s2 = 0;
    cr_assert_eq(tg_tensor_to_doubles(t, v, n), 0);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        s += v[i];
        s2 += v[i] * v[i];
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
    *mean = s / (double)n;
    *std = sqrt(s2 / (double)n - *mean * *mean);
    free(v);
}

Test(nn_module, default_inits_match_pytorchs_distributions)
{
    tg_manual_seed(1);
    double mean, std, lo, hi, bound = 1 / sqrt(400.0);
    /* nn.Linear(400, 300): U(-1/sqrt(400), 1/sqrt(400)), std bound / sqrt(3) */
    tg_module *l = tg_nn_linear(400, 300);
    moments(tg_module_get_tensor(l, "weight"), &mean, &std, &lo, &hi);
    cr_expect(lo >= -bound && hi <= bound && hi > 0.99 * bound && lo < -0.99 * bound);
    cr_expect(fabs(mean) < 0.002 && fabs(std - bound / sqrt(3.0)) < 0.01 * bound, "%g %g", mean,
              std);
    tg_module_free(l);
    /* nn.Conv2d(16, 32, 3): fan_in 16 * 9 */
    tg_module *c = tg_nn_conv2d(16, 32, 3);
    moments(tg_module_get_tensor(c, "bias"), &mean, &std, &lo, &hi);
    cr_expect(lo >= -1 / 12.0 && hi <= 1 / 12.0);
    tg_module_free(c);
    /* kaiming_normal_(fan_out, relu) on (64, 32, 3, 3): std sqrt(2 / (64 * 9)) */
    tg_tensor *w = tg_empty(TG_INTS(64, 32, 3, 3));
    cr_assert_eq(tg_nn_init_kaiming_normal_(w, 0, TG_FAN_OUT, "relu"), 0);
    moments(w, &mean, &std, &lo, &hi);
    cr_expect(fabs(std / sqrt(2.0 / 576) - 1) < 0.03, "%g", std);
    /* xavier_uniform_ gain 1: U(+-sqrt(6 / (fan_in + fan_out))), fans 32*9 and 64*9 */
    cr_assert_eq(tg_nn_init_xavier_uniform_(w, 1), 0);
    moments(w, &mean, &std, &lo, &hi);
    double a = sqrt(6.0 / (288 + 576));
    cr_expect(lo >= -a && hi <= a && hi > 0.99 * a);
    /* trunc_normal_(0, 1, -2, 2): within the bounds, std of N(0,1) cut at +-2: 0.8796 */
    cr_assert_eq(tg_nn_init_trunc_normal_(w, 0, 1, -2, 2), 0);
    moments(w, &mean, &std, &lo, &hi);
    cr_expect(lo >= -2 && hi <= 2 && fabs(std - 0.87962566) < 0.02 && fabs(mean) < 0.03, "%g %g",
              mean, std);
    /* trunc_normal_(mean 3, std 0.5, a 2.5, b 10): one-sided, mean 3 + 0.5 phi(-1) / (1 - Phi(-1)) = 3.1438 */
    cr_assert_eq(tg_nn_init_trunc_normal_(w, 3, 0.5, 2.5, 10), 0);
    moments(w, &mean, &std, &lo, &hi);
    cr_expect(lo >= 2.5 && fabs(mean - 3.1438) < 0.01, "%g", mean);
    cr_expect_eq(tg_nn_init_calculate_gain("tanh", 0), 5.0 / 3);
    cr_expect_eq(tg_nn_init_calculate_gain("leaky_relu", 0.2), sqrt(2.0 / 1.04));
    cr_expect_eq(tg_nn_init_calculate_gain("softmax", 0), -1);
    tg_clear_error();
    tg_release(w);
}

/* ---- state dicts ---- */

static bool same_tensor_values(tg_tensor *a, tg_tensor *b)
{
    int64_t n = tg_tensor_numel(a);
    if (n != tg_tensor_numel(b)) return false;
    double *x = malloc(sizeof *x * (size_t)(2 * n + 1));
    bool same = x && !tg_tensor_to_doubles(a, x, n) && !tg_tensor_to_doubles(b, x + n, n) &&
                memcmp(x, x + n, sizeof *x * (size_t)n) == 0;
    free(x);
    return same;
}

Test(nn_module, save_load_round_trip_with_prefix_and_tied_weights)
{
    char *d = kt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/g.safetensors", d);
    tg_manual_seed(3);
    tg_module *a =
        tg_nn_gpt2(.vocab_size = 11, .n_positions = 8, .n_embd = 8, .n_layer = 2, .n_head = 2);
    tg_manual_seed(4);
    tg_module *b =
        tg_nn_gpt2(.vocab_size = 11, .n_positions = 8, .n_embd = 8, .n_layer = 2, .n_head = 2);
    cr_assert(a && b);
    cr_assert_eq(tg_module_save(a, path, .prefix = "model."), 0, "%s", tg_last_error());
    tg_state *s = tg_state_open(path);
    cr_assert(s);
    cr_expect(!tg_state_has_tensor(s, "model.lm_head.weight"), "a tied tensor is saved once");
    cr_expect(tg_state_has_tensor(s, "model.transformer.wte.weight"));
    tg_load_report r = { 0 };
    cr_assert_eq(tg_module_load_state_dict(b, s, .prefix = "model.", .report = &r), 0, "%s",
                 tg_last_error());
    cr_expect_eq(r.n_missing + r.n_unexpected + r.n_mismatched, 0);
    tg_load_report_free(&r);
    tg_state_free(s);
    tg_named_tensors la, lb;
    cr_assert_eq(tg_module_named_tensors(a, &la, .keep_duplicates = true), 0);
    cr_assert_eq(tg_module_named_tensors(b, &lb, .keep_duplicates = true), 0);
    for (int64_t i = 0; i < la.len; i++)
        cr_expect(same_tensor_values(*la.data[i].slot, *lb.data[i].slot), "%s", la.data[i].name);
    cr_expect_eq(tg_module_get_tensor(b, "lm_head.weight"),
                 tg_module_get_tensor(b, "transformer.wte.weight"));
    tg_named_tensors_free(&la);
    tg_named_tensors_free(&lb);
    tg_module_free(a);
    tg_module_free(b);
    kt_rmdir(d);
}

Test(nn_module, load_reports_and_is_all_or_nothing)
{
    tg_module *m = small_net();
    tg_tensor *w0 = tg_clone(tg_module_get_tensor(m, "0.weight"));
    tg_state *s = tg_state_new();
    tg_tensor *good = tg_zeros(TG_INTS(3, 2)), *bad = tg_zeros(TG_INTS(2, 3)),
              *extra = tg_zeros(TG_INTS(1));
    cr_assert_eq(tg_state_put_tensor(s, "module.0.weight", good), 0);
    cr_assert_eq(tg_state_put_tensor(s, "module.3.weight", bad), 0);
    cr_assert_eq(tg_state_put_tensor(s, "module.9.weight", extra), 0);
    tg_release(good);
    tg_release(bad);
    tg_release(extra);
    const tg_key_rename strip[] = { { "module.", "" } };
    tg_load_report r = { 0 };
    /* a shape mismatch fails even when not strict, naming the key and both shapes */
    cr_expect_eq(tg_module_load_state_dict(m, s, .strict = false, .rename = strip, .n_rename = 1,
                                           .report = &r),
                 -1);
    cr_expect(strstr(tg_last_error(), "3.weight: [2, 3] in the state, [1, 3] in the model"), "%s",
              tg_last_error());
    tg_clear_error();
    cr_expect_eq(r.n_mismatched, 1);
    cr_expect_eq(r.n_unexpected, 1);
    cr_expect_str_eq(r.unexpected[0], "9.weight");
    cr_expect_eq(r.n_missing, 7); /* everything but 0.weight and the mismatched 3.weight */
    cr_expect(same_tensor_values(tg_module_get_tensor(m, "0.weight"), w0), "changed on failure");
    tg_load_report_free(&r);
    /* without the mismatched key: strict fails on missing and unexpected keys ... */
    tg_tensor *right = tg_ones(TG_INTS(1, 3));
    cr_assert_eq(tg_state_put_tensor(s, "module.3.weight", right), 0);
    tg_release(right);
    cr_expect_eq(tg_module_load_state_dict(m, s, .rename = strip, .n_rename = 1), -1);
    cr_expect(strstr(tg_last_error(), "Error(s) in loading state_dict for Sequential: Missing "
                                      "key(s): \"0.bias\""),
              "%s", tg_last_error());
    cr_expect(strstr(tg_last_error(), "Unexpected key(s): \"9.weight\""), "%s", tg_last_error());
    tg_clear_error();
    cr_expect(same_tensor_values(tg_module_get_tensor(m, "0.weight"), w0));
    /* ... and non-strict loads what matches */
    cr_expect_eq(tg_module_load_state_dict(m, s, .strict = false, .rename = strip, .n_rename = 1,
                                           .report = &r),
                 0, "%s", tg_last_error());
    tg_scope_begin();
    cr_expect_eq(tg_item(tg_sum(tg_module_get_tensor(m, "3.weight"))), 3);
    cr_expect_eq(tg_item(tg_sum(tg_module_get_tensor(m, "0.weight"))), 0);
    tg_scope_end();
    tg_load_report_free(&r);
    tg_state_free(s);
    tg_release(w0);
    tg_module_free(m);
}

Test(nn_module, corrupt_file_names_it_and_changes_nothing)
{
    char *d = kt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/net.safetensors", d);
    tg_module *m = small_net();
    cr_assert_eq(tg_module_save(m, path), 0);
    tg_tensor *w0 = tg_clone(tg_module_get_tensor(m, "0.weight"));
    /* truncate the file: its header now points past its end */
    FILE *f = fopen(path, "r+");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert_eq(truncate(path, size - 8), 0);
    cr_expect_eq(tg_module_load(m, path), -1);
    cr_expect(strstr(tg_last_error(), path), "%s", tg_last_error());
    tg_clear_error();
    cr_expect(same_tensor_values(tg_module_get_tensor(m, "0.weight"), w0));
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.safetensors", d);
    cr_expect_eq(tg_module_load(m, missing), -1);
    cr_expect(strstr(tg_last_error(), "none.safetensors"), "%s", tg_last_error());
    tg_clear_error();
    tg_release(w0);
    tg_module_free(m);
    kt_rmdir(d);
}

Test(nn_module, forward_inside_and_outside_a_scope_leaks_nothing)
{
    tg_module *r = tg_nn_resnet(TG_INTS(1, 1), .num_classes = 5, .in_channels = 1, .width = 4,
                                .small_input = true);
    cr_assert(r, "%s", tg_last_error());
    tg_tensor *x = tg_randn(TG_INTS(2, 1, 8, 8));
    tg_tensor *y = tg_module_forward(r, x); /* no scope: the caller owns the result only */
    cr_assert(y, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_size(y, 1), 5);
    tg_release(y);
    tg_release(x);
    tg_module_free(r);
}
