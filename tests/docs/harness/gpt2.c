/* What docs/models.md's training and sampling fragments use: a small GPT-2 `m`, a `loader` of
 * (x, y) token windows, the number of `steps` and `rc` (the loop sets it to -1 on an error,
 * which fails); for sampling, a context `x` of `len` tokens, `temperature` and `k`. */
#include "harness.h"

int main(void)
{
    const int64_t vocab = 16, len = 8, k = 5;
    const double temperature = 0.8;
    int steps = 2, rc = 0; /* the loader has 2 batches: one epoch */
    tg_manual_seed(0);
    tg_module *m =
        tg_nn_gpt2(.vocab_size = vocab, .n_positions = len, .n_embd = 8, .n_layer = 1, .n_head = 2);
    tg_tensor *xs = tg_randint(vocab, TG_INTS(4, len)), *ys = tg_randint(vocab, TG_INTS(4, len));
    tg_dataset *windows = tg_tensor_dataset_new((tg_tensor *[]){ xs, ys }, 2);
    tg_loader *loader = tg_loader_new(windows, .batch_size = 2);
    tg_tensor *x = tg_randint(vocab, TG_INTS(1, len));
    {
        /* DOC_FRAGMENT */
    }
    if (rc != 0) fprintf(stderr, "doc harness: rc = %d\n", rc);
    tg_release(x);
    tg_loader_free(loader);
    tg_dataset_free(windows);
    tg_release(ys);
    tg_release(xs);
    tg_module_free(m);
    return rc != 0 || doc_done(false);
}
