/* What docs/nn.md's training, saving and checkpoint fragments use: `model` takes (N, 28, 28)
 * images to 10 logits, `loader` serves 6 random images and labels of the dataset `train` in
 * batches of 3, `opt` and `sched` train the model and `step` counts. Everything is freed after
 * the fragment, which must release what it makes. */
#include "harness.h"

int main(void)
{
    tg_manual_seed(0);
    tg_module *model = tg_nn_sequential(tg_nn_flatten(1, -1), tg_nn_linear(28 * 28, 10));
    tg_tensor *images = tg_rand(TG_INTS(6, 28, 28)), *labels = tg_randint(10, TG_INTS(6));
    tg_dataset *train = tg_tensor_dataset_new((tg_tensor *[]){ images, labels }, 2);
    tg_loader *loader = tg_loader_new(train, .batch_size = 3);
    tg_optimizer *opt = tg_sgd_new(TG_MODULE_PARAMS(model), .lr = 0.1);
    tg_lr_scheduler *sched = tg_step_lr_new(opt, 10);
    int64_t step = 0;
    {
        /* DOC_FRAGMENT */
    }
    tg_lr_scheduler_free(sched);
    tg_optimizer_free(opt);
    tg_loader_free(loader);
    tg_dataset_free(train);
    tg_module_free(model);
    tg_release(labels);
    tg_release(images);
    return doc_done(true);
}
