/* Checkpoints that resume (nn/checkpoint.c): a model with dropout trained by AdamW under a
 * warm-up + cosine schedule on shuffled batches from a two-worker loader; stopping after step
 * K, saving, building everything afresh from another seed, loading and going on gives the same
 * losses, bit for bit, as the run that never stopped. Also the checks a checkpoint's load makes
 * before it changes anything. */
#include "../runtime/rt_test.h"
#include "tensorgen.h"

#include <stdlib.h>
#include <unistd.h>

TestSuite(checkpoint, .fini = rt_leak_check);

enum { SAMPLES = 96, BATCH = 16, STEPS = 14, STOP = 5 };

typedef struct run {
    tg_module *model;
    tg_optimizer *opt;
    tg_lr_scheduler *sched;
    tg_dataset *data;
    tg_loader *loader;
} run;

/* Everything built from `seed`: the weights differ between seeds, the data do not. */
static void run_new(run *r, uint64_t seed)
{
    tg_manual_seed(1234); /* the data: the same in every run */
    tg_tensor *x = tg_randn(TG_INTS(SAMPLES, 6));
    tg_tensor *y = tg_randint(3, TG_INTS(SAMPLES));
    r->data = tg_tensor_dataset_new((tg_tensor *const[]){ x, y }, 2);
    tg_release(x);
    tg_release(y);
    tg_manual_seed(seed);
    r->model = tg_nn_sequential(tg_nn_linear(6, 32), tg_nn_gelu("none"), tg_nn_dropout(0.2),
                                tg_nn_layer_norm(32), tg_nn_linear(32, 3));
    r->opt = tg_adamw_new(TG_MODULE_PARAMS(r->model), .lr = 1e-2);
    tg_lr_scheduler *warm = tg_linear_lr_new(r->opt, .start_factor = 0.1, .total_iters = 3);
    tg_lr_scheduler *cos = tg_cosine_annealing_lr_new(r->opt, STEPS - 3);
    r->sched = tg_sequential_lr_new(r->opt, (tg_lr_scheduler *const[]){ warm, cos }, 2, TG_INTS(3));
    r->loader =
        tg_loader_new(r->data, .batch_size = BATCH, .shuffle = true, .seed = 7, .num_workers = 2);
    cr_assert(r->data && r->model && r->opt && r->sched && r->loader, "%s", tg_last_error());
}

static void run_free(run *r)
{
    tg_loader_free(r->loader);
    tg_lr_scheduler_free(r->sched);
    tg_optimizer_free(r->opt);
    tg_module_free(r->model);
    tg_dataset_free(r->data);
}

/* Steps [from, to): the loss of each into losses[step]. Epochs roll over in the loader. */
static void train(run *r, int from, int to, double *losses)
{
    for (int step = from; step < to; step++) {
        tg_batch b;
        int got = tg_loader_next(r->loader, &b);
        if (got == 0) got = tg_loader_next(r->loader, &b); /* the next epoch */
        cr_assert_eq(got, 1, "%s", tg_last_error());
        tg_scope_begin();
        tg_tensor *loss = tg_cross_entropy(tg_module_forward(r->model, b.fields[0]), b.fields[1]);
        cr_assert(loss && tg_backward(loss) == 0, "%s", tg_last_error());
        losses[step] = tg_item(loss);
        tg_scope_end();
        tg_batch_release(&b);
        cr_assert_eq(tg_optimizer_step(r->opt), 0, "%s", tg_last_error());
        tg_optimizer_zero_grad(r->opt);
        cr_assert_eq(tg_lr_scheduler_step(r->sched), 0, "%s", tg_last_error());
    }
}

Test(checkpoint, resume_is_bit_identical)
{
    double straight[STEPS], resumed[STEPS];
    run a;
    run_new(&a, 1);
    train(&a, 0, STEPS, straight);
    run_free(&a);

    char dir[] = "/tmp/tg_ckpt_XXXXXX", path[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    run b;
    run_new(&b, 1);
    train(&b, 0, STOP, resumed);
    tg_checkpoint ck = { b.model, b.opt, b.sched, b.loader, STOP };
    cr_assert_eq(tg_checkpoint_save(path, &ck), 0, "%s", tg_last_error());
    run_free(&b);

    run c;
    run_new(&c, 99);   /* other weights: the checkpoint must replace them all */
    tg_manual_seed(5); /* and another generator state: dropout's masks come from the file's */
    tg_checkpoint ck2 = { c.model, c.opt, c.sched, c.loader, 0 };
    cr_assert_eq(tg_checkpoint_load(path, &ck2), 0, "%s", tg_last_error());
    cr_expect_eq(ck2.step, STOP);
    train(&c, STOP, STEPS, resumed);
    run_free(&c);
    for (int i = 0; i < STEPS; i++)
        cr_expect(memcmp(&straight[i], &resumed[i], sizeof(double)) == 0,
                  "step %d: %.17g uninterrupted, %.17g resumed", i, straight[i], resumed[i]);
    cr_expect(straight[STEPS - 1] < straight[0], "the model did not learn");
    unlink(path);
    rmdir(dir);
}

Test(checkpoint, missing_part_and_wrong_model_change_nothing)
{
    char dir[] = "/tmp/tg_ckpt_XXXXXX", path[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/model_only.safetensors", dir);
    run r;
    run_new(&r, 1);
    tg_checkpoint only_model = { .model = r.model, .step = 3 };
    cr_assert_eq(tg_checkpoint_save(path, &only_model), 0);
    tg_checkpoint all = { r.model, r.opt, r.sched, r.loader, 0 };
    cr_expect_eq(tg_checkpoint_load(path, &all), -1);
    cr_expect(strstr(tg_last_error(), "has no optimizer state"), "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(all.step, 0);
    /* a model of another shape: the key and both shapes are named, nothing changes */
    tg_module *other = tg_nn_sequential(tg_nn_linear(6, 16), tg_nn_gelu("none"), tg_nn_dropout(0.2),
                                        tg_nn_layer_norm(16), tg_nn_linear(16, 3));
    tg_checkpoint wrong = { .model = other };
    cr_expect_eq(tg_checkpoint_load(path, &wrong), -1);
    cr_expect(strstr(tg_last_error(), "0.weight: [32, 6] in the state, [16, 6] in the model"), "%s",
              tg_last_error());
    tg_clear_error();
    tg_module_free(other);
    run_free(&r);
    unlink(path);
    rmdir(dir);
}
