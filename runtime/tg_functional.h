/* tensorgen functional transforms: C versions of torch.autograd.functional (PyTorch 1.13):
 * jvp, vjp, jacobian, hessian, hvp and vhp of a function over a list of tensors
 * (docs/autograd.md, "Functional transforms"). Include <tensorgen.h> rather than this file.
 *
 * The function is a callback over tensor lists:
 *
 *     // out = tanh(x @ w): inputs { x, w }, one output
 *     static int f(void *ctx, tg_tensor_list in, tg_tensor **out, int max_out)
 *     {
 *         out[0] = tg_tanh(tg_matmul(in.data[0], in.data[1]));
 *         return out[0] ? 1 : -1;
 *     }
 *
 * It reads its inputs (borrowed) and writes up to max_out (TG_FN_MAX_OUTPUTS) outputs,
 * returning how many (at least 1), or -1 with an error recorded. The transforms call it with a
 * scope of their own open: its outputs are returned as any operator's result is, recorded in
 * that scope, so that f needs no release for its intermediates nor its outputs. To output a
 * tensor not made by an operator during the call (an input itself, a tensor held in ctx),
 * write tg_scope_track(tg_retain(t)). f may be called many times (jacobian and hessian call it
 * once per column for the forward strategies); it must compute the same function each time.
 *
 * Results: every transform returns 0 (jacobian: the number of outputs of f) or -1 with an error
 * naming it ("jvp: ..."), in which case nothing is left behind. Its results are Tensor[] lists
 * like an operator's (tg_core.h): new references with a heap array, recorded by the open scope
 * (tg_scope_end frees them; tg_scope_keep_list keeps them), owned by the caller with no scope
 * open (tg_tensor_list_release). Unless .create_graph, results have no autograd history. */
#ifndef TG_FUNCTIONAL_H
#define TG_FUNCTIONAL_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The function being differentiated (see above). */
typedef int (*tg_fn)(void *ctx, tg_tensor_list inputs, tg_tensor **outputs, int max_outputs);
#define TG_FN_MAX_OUTPUTS 16

/* Options shared by jvp, vjp, hvp and vhp: `.create_graph` records the computation of the
 * results, so that they can be differentiated again (inputs that require grad keep their
 * history through it); without it the results carry no history (PyTorch's
 * create_graph=False): the reverse-mode transforms detach the inputs first, and the
 * forward-mode ones (jvp, jacobian's forward strategy) run f with grad mode off instead, so
 * that tangents the inputs carry at enclosing dual levels stay: a tg_jvp inside the f of a
 * tg_jvp is a second directional derivative. */
typedef struct tg_functional_opts {
    bool create_graph;
} tg_functional_opts;

/* Jacobian-vector product, in FORWARD mode (a dual level; torch.func.jvp, the values of
 * torch.autograd.functional.jvp): outputs = f(primals) and jvp[i] = sum_j J_ij tangents[j],
 * one tangent per primal, each of its primal's shape (an empty list: allowed when f has a
 * single input of a single element, as PyTorch's v=None). `outputs` may be NULL when only the
 * products are wanted. Inputs must be of a floating dtype. */
int tg_jvp_fn(tg_fn f, void *ctx, tg_tensor_list primals, tg_tensor_list tangents,
              tg_tensor_list *outputs, tg_tensor_list *jvp, tg_functional_opts opts);
#define tg_jvp(f, ctx, primals, tangents, outputs, jvp, ...)       \
    tg_jvp_fn((f), (ctx), (primals), (tangents), (outputs), (jvp), \
              (tg_functional_opts){ .create_graph = false, __VA_ARGS__ })

/* Vector-Jacobian product, in reverse mode (torch.autograd.functional.vjp): outputs = f(inputs)
 * and vjp[j] = sum_i v[i]^T J_ij, one v per output, each of its output's shape (an empty list:
 * allowed when f returns a single tensor of a single element). `outputs` may be NULL. An input
 * the outputs do not depend on gets zeros. */
int tg_vjp_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, tg_tensor_list *outputs,
              tg_tensor_list *vjp, tg_functional_opts opts);
#define tg_vjp(f, ctx, inputs, v, outputs, vjp, ...)       \
    tg_vjp_fn((f), (ctx), (inputs), (v), (outputs), (vjp), \
              (tg_functional_opts){ .create_graph = false, __VA_ARGS__ })

/* How jacobian and hessian build the matrix: reverse mode (one vector-Jacobian product per
 * output element, f evaluated once) or forward mode (one Jacobian-vector product per input
 * element, f evaluated once per column). Reverse is cheaper when the outputs are smaller than
 * the inputs, forward otherwise. */
typedef enum tg_jacobian_strategy {
    TG_REVERSE_MODE = 0, /* PyTorch's strategy="reverse-mode", the default */
    TG_FORWARD_MODE = 1  /* strategy="forward-mode" */
} tg_jacobian_strategy;

typedef struct tg_jacobian_opts {
    tg_jacobian_strategy strategy;
    bool create_graph;
} tg_jacobian_opts;

/* The Jacobian of f at `inputs` (torch.autograd.functional.jacobian, vectorize=False):
 * jac->data[i * inputs.len + j] is d outputs[i] / d inputs[j], of shape
 * outputs[i].shape + inputs[j].shape (zeros where output i does not depend on input j). Returns
 * the number of outputs of f (so jac->len = that times inputs.len), or -1. */
int tg_jacobian_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list *jac,
                   tg_jacobian_opts opts);
#define tg_jacobian(f, ctx, inputs, jac, ...) \
    tg_jacobian_fn(                           \
        (f), (ctx), (inputs), (jac),          \
        (tg_jacobian_opts){ .strategy = TG_REVERSE_MODE, .create_graph = false, __VA_ARGS__ })

/* The Hessian of a scalar f (one output of one element) at `inputs`
 * (torch.autograd.functional.hessian): hess->data[i * inputs.len + j] is
 * d^2 f / d inputs[i] d inputs[j], of shape inputs[i].shape + inputs[j].shape. The inner
 * derivative is always reverse mode (a gradient); `.outer` picks how that gradient is
 * differentiated: TG_REVERSE_MODE, reverse-over-reverse (a gradient with create_graph, then one
 * vector-Jacobian product per input element: PyTorch's default), or TG_FORWARD_MODE,
 * forward-over-reverse (one Hessian-vector product, tg_hvp, per input element: PyTorch's
 * outer_jacobian_strategy="forward-mode"; no graph of the gradient is kept, so usually cheaper
 * in memory). Both give the same matrix, up to rounding. */
typedef struct tg_hessian_opts {
    tg_jacobian_strategy outer;
    bool create_graph;
} tg_hessian_opts;
int tg_hessian_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list *hess,
                  tg_hessian_opts opts);
#define tg_hessian(f, ctx, inputs, hess, ...) \
    tg_hessian_fn(                            \
        (f), (ctx), (inputs), (hess),         \
        (tg_hessian_opts){ .outer = TG_REVERSE_MODE, .create_graph = false, __VA_ARGS__ })

/* Hessian-vector product of a scalar f (torch.autograd.functional.hvp): hvp[i] =
 * sum_j H_ij v[j], one v per input, each of its input's shape (an empty list: allowed for a
 * single input of a single element). Computed FORWARD-OVER-REVERSE: inside a dual level each
 * input becomes a fresh leaf that requires grad with tangent v, the gradient of f is taken
 * (tg_grad) and the gradients' tangents are the product: about the cost of one forward and one
 * backward pass run on dual tensors, with no second backward graph. `output` (may be NULL)
 * receives f(inputs), a new reference recorded by the open scope. */
int tg_hvp_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, tg_tensor **output,
              tg_tensor_list *hvp, tg_functional_opts opts);
#define tg_hvp(f, ctx, inputs, v, output, hvp, ...)       \
    tg_hvp_fn((f), (ctx), (inputs), (v), (output), (hvp), \
              (tg_functional_opts){ .create_graph = false, __VA_ARGS__ })

/* Vector-Hessian product v^T H of a scalar f (torch.autograd.functional.vhp), computed
 * reverse-over-reverse as PyTorch does (a gradient with create_graph, then a vector-Jacobian
 * product of it). The Hessian is symmetric, so this equals tg_hvp up to rounding; it is here
 * for PyTorch's API and as an independent check of the forward-over-reverse product. */
int tg_vhp_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, tg_tensor **output,
              tg_tensor_list *vhp, tg_functional_opts opts);
#define tg_vhp(f, ctx, inputs, v, output, vhp, ...)       \
    tg_vhp_fn((f), (ctx), (inputs), (v), (output), (vhp), \
              (tg_functional_opts){ .create_graph = false, __VA_ARGS__ })

#ifdef __cplusplus
}
#endif
#endif
