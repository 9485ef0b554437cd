/* Normalization layers built from other operators (CompositeImplicitAutograd, so they need no
 * derivative entries): batch_norm (over native_batch_norm, with torch.nn.functional's "more
 * than 1 value per channel" check and _batch_norm_impl_index's), group_norm (over
 * native_group_norm) and instance_norm (batch norm of the input seen as (1, N * C, *), as
 * PyTorch 1.13's at::instance_norm). Each returns a new reference, or NULL with an error
 * recorded; intermediates are released on every path. */
#include "tg_kutil.h"
#include "norm_checks.h"
/* The public functions of the operators called here. */
#include "ops/contiguous.h"
#include "ops/copy.h"
#include "ops/expand.h"
#include "ops/mean.h"
#include "ops/batch_norm.h"
#include "ops/native_batch_norm.h"
#include "ops/native_group_norm.h"
#include "ops/reshape.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/batch_norm.h"
#include "kernels/group_norm.h"
#include "kernels/instance_norm.h"
#include "composite_util.h"

#include <stdio.h>
#include <string.h>

static tg_tensor *first_of3(tg_tensors3 r)
{
    tg_release(r.r1);
    tg_release(r.r2);
    return r.r0;
}

tg_tensor *tg__composite_batch_norm(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                    tg_tensor *running_mean, tg_tensor *running_var, bool training,
                                    double momentum, double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled;
    const char *op = "batch_norm";
    if (tg__norm_check_dim1(op, input) != 0) return NULL;
    if (training) {
        int64_t prod = input->sizes[0];
        for (int64_t i = 2; i < input->ndim; i++) prod *= input->sizes[i];
        if (prod == 1) {
            char s[256];
            tg__shape_str(s, sizeof s, input->sizes, input->ndim);
            return tg__error(op,
                             "Expected more than 1 value per channel when training, got input "
                             "size torch.Size(%s)",
                             s);
        }
    }
    if (tg__batch_norm_check(op, input, weight, bias, running_mean, running_var, training) != 0)
        return NULL;
    return first_of3(tg_native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                          momentum, eps));
}

tg_tensor *tg__composite_group_norm(tg_tensor *input, int64_t num_groups, tg_tensor *weight,
                                    tg_tensor *bias, double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled;
    const char *op = "group_norm";
    if (tg__norm_check_dim1(op, input) != 0) return NULL;
    int64_t n = input->sizes[0], c = input->sizes[1], hxw = 1;
    for (int64_t i = 2; i < input->ndim; i++) hxw *= input->sizes[i];
    if (tg__group_norm_inputs_check(op, input, weight, bias, c, num_groups) != 0) return NULL;
    tg_tensor *x = tg_contiguous(input);
    tg_tensor *w = x && weight ? tg_contiguous(weight) : NULL;
    tg_tensor *b = x && bias ? tg_contiguous(bias) : NULL;
    tg_tensor *r = NULL;
    if (x && (!weight || w) && (!bias || b))
        r = first_of3(tg_native_group_norm(x, w, b, n, c, hxw, num_groups, eps));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return r;
}

/* t (C) repeated n times: (n * C), a new tensor (a view of t when n == 1). */
static tg_tensor *repeat_vec(tg_tensor *t, int64_t n, int64_t c)
{
    if (!t) return NULL;
    tg_tensor *u = tg_unsqueeze(t, 0);
    tg_tensor *e = u ? tg__then(u, tg_expand(u, TG_INTS(n, c))) : NULL;
    return e ? tg__then(e, tg_reshape(e, TG_INTS(n * c))) : NULL;
}

tg_tensor *tg__composite_instance_norm(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                       tg_tensor *running_mean, tg_tensor *running_var,
                                       bool use_input_stats, double momentum, double eps,
                                       bool cudnn_enabled)
{
    const char *op = "instance_norm";
    if (!use_input_stats && !(running_mean && running_var))
        return tg__error(op, "Expected running_mean and running_var to be defined when "
                             "use_input_stats is false");
    if (tg__norm_check_dim1(op, input) != 0) return NULL;
    int64_t b = input->sizes[0], c = input->sizes[1];
    int64_t shape[TG_MAX_DIMS];
    if (input->ndim > TG_MAX_DIMS) return tg__error(op, "too many dimensions");
    memcpy(shape, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
    shape[0] = 1;
    shape[1] = b * c;
    tg_tensor *w = repeat_vec(weight, b, c), *bi = repeat_vec(bias, b, c);
    tg_tensor *rm = repeat_vec(running_mean, b, c), *rv = repeat_vec(running_var, b, c);
    tg_tensor *x = NULL, *xr = NULL, *out = NULL, *res = NULL;
    if ((weight && !w) || (bias && !bi) || (running_mean && !rm) || (running_var && !rv)) goto done;
    x = tg_contiguous(input);
    xr = x ? tg_view(x, (tg_int_list){ shape, input->ndim }) : NULL;
    out =
        xr ? tg_batch_norm(xr, w, bi, rm, rv, use_input_stats, momentum, eps, cudnn_enabled) : NULL;
    if (!out) goto done;
    bool ok = true;
    TG_NO_GRAD {
        tg_tensor *pairs[2][2] = { { running_mean, rm }, { running_var, rv } };
        for (int i = 0; i < 2 && ok; i++) {
            if (!pairs[i][0]) continue;
            tg_tensor *v = tg_view(pairs[i][1], TG_INTS(b, c));
            tg_tensor *m = v ? tg__then(v, tg_mean(v, .dim = TG_INTS(0))) : NULL;
            tg_tensor *cp = m ? tg__then(m, tg_copy_(pairs[i][0], m)) : NULL;
            ok = cp != NULL;
            tg_release(cp);
        }
    }
    if (ok) res = tg_view(out, (tg_int_list){ input->sizes, input->ndim });
done:
    tg_release(w);
    tg_release(bi);
    tg_release(rm);
    tg_release(rv);
    tg_release(x);
    tg_release(xr);
    tg_release(out);
    return res;
}
