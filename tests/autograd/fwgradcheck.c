/* Forward-mode gradcheck: see gc_fwgradcheck in gradcheck.h.
 *
 * A check is one direction: a tangent vector per differentiated input (NULL: that input stays
 * plain). Its numerical side perturbs the inputs' memory by +-eps v and runs f on plain
 * tensors; its analytical side runs f inside a fresh dual level on the inputs made dual with
 * v and reads the outputs' tangents, and their primals, which must be the values f gives on
 * the plain inputs. f always sees detached copies of the differentiated
 * inputs (same memory, no reverse-mode history), as PyTorch's check does, so that only
 * forward mode is exercised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc_internal.h"
#include "gradcheck.h"
#include "kt_util.h"

typedef struct fw_state {
    gc_func f;
    tg_tensor *args[GC_MAX_INPUTS]; /* what f gets: in[] with differentiated inputs detached */
    int n_in;
    gc_opts o;
    int n_diff;                    /* differentiated inputs */
    int diff[GC_MAX_INPUTS];       /* their positions in in[] */
    int64_t m[GC_MAX_INPUTS];      /* their numels */
    double *orig[GC_MAX_INPUTS];   /* their values, to restore after a perturbation */
    int n_out;                     /* outputs of f */
    int n_f;                       /* floating outputs */
    int fout[GC_MAX_OUTPUTS];      /* their positions among f's outputs */
    int64_t n[GC_MAX_OUTPUTS];     /* their numels */
    double *plain[GC_MAX_OUTPUTS]; /* the outputs of f on the plain inputs, n[o] each */
    double *num[GC_MAX_OUTPUTS];   /* the numerical Jacobian-vector product, n[o] each */
    double *vals[GC_MAX_OUTPUTS];  /* scratch: one evaluation's values, then a tangent's */
    char *msg;
    size_t msg_size;
} fw_state;

static const char *last_error(void)
{
    return tg_last_error() ? tg_last_error() : "(no error recorded)";
}

/* Runs f on args; on success out[] holds *n_out new references, none NULL. */
static bool call_f(fw_state *s, tg_tensor *const *args, tg_tensor **out, int *n_out,
                   const char *what)
{
    for (int i = 0; i < GC_MAX_OUTPUTS; i++) out[i] = NULL;
    int n = s->f.call(s->f.ctx, args, out);
    if (n < 0) {
        gc__release_all(out, GC_MAX_OUTPUTS);
        return gc__fail(s->msg, s->msg_size, "%s: the function failed: %s", what, last_error());
    }
    for (int i = 0; i < n; i++)
        if (!out[i]) {
            gc__release_all(out, n);
            return gc__fail(s->msg, s->msg_size, "%s: the function returned NULL as output %d: %s",
                            what, i, last_error());
        }
    *n_out = n;
    return true;
}

/* Sets every differentiated input with a direction to orig + h v (h = 0: restores it). */
static void perturb(fw_state *s, double *const *v, double h)
{
    for (int i = 0; i < s->n_diff; i++) {
        if (!v[i]) continue;
        tg_tensor *x = s->args[s->diff[i]];
        for (int64_t j = 0; j < s->m[i]; j++)
            *gc__elem_ptr(x, j) = h == 0 ? s->orig[i][j] : s->orig[i][j] + h * v[i][j];
    }
}

/* Runs f on the plain (perturbed) inputs and copies every floating output into dst[o]. */
static bool eval_values(fw_state *s, double **dst, const char *what)
{
    tg_tensor *out[GC_MAX_OUTPUTS];
    int n;
    if (!call_f(s, s->args, out, &n, what)) return false;
    bool ok = n == s->n_out;
    for (int o = 0; ok && o < s->n_f; o++) {
        tg_tensor *y = out[s->fout[o]];
        ok = tg_tensor_numel(y) == s->n[o] && tg_tensor_to_doubles(y, dst[o], s->n[o]) == 0;
    }
    gc__release_all(out, n);
    return ok ||
           gc__fail(s->msg, s->msg_size, "%s: the function's outputs changed between calls", what);
}

/* num[o] = (f(x + eps v) - f(x - eps v)) / (2 eps); the inputs are restored. */
static bool numerical_jvp(fw_state *s, double *const *v, const char *what)
{
    perturb(s, v, s->o.eps);
    bool ok = eval_values(s, s->num, what);
    perturb(s, v, -s->o.eps);
    ok = ok && eval_values(s, s->vals, what);
    perturb(s, v, 0);
    for (int o = 0; ok && o < s->n_f; o++)
        for (int64_t k = 0; k < s->n[o]; k++)
            s->num[o][k] = (s->num[o][k] - s->vals[o][k]) / (2 * s->o.eps);
    return ok;
}

/* Output o's primal (the values of f on dual inputs) against those on plain inputs. */
static bool compare_primal(fw_state *s, const char *what, int o, tg_tensor *primal)
{
    double *got = s->vals[o];
    if (tg_tensor_to_doubles(primal, got, s->n[o]) != 0)
        return gc__fail(s->msg, s->msg_size, "%s: reading the primal of output %d: %s", what,
                        s->fout[o], last_error());
    for (int64_t k = 0; k < s->n[o]; k++)
        if (!gc__close_enough(got[k], s->plain[o][k], &s->o) &&
            !(isnan(got[k]) && isnan(s->plain[o][k])))
            return gc__fail(s->msg, s->msg_size,
                            "%s: output %d, output element %lld: the value on dual inputs is "
                            "%.10g, on plain inputs %.10g",
                            what, s->fout[o], (long long)k, got[k], s->plain[o][k]);
    return true;
}

/* Output o's tangent t (NULL: zero) against num[o]. */
static bool compare_tangent(fw_state *s, const char *what, int o, tg_tensor *y, tg_tensor *t)
{
    double *got = s->vals[o];
    if (!gc__read_like(t, y, got, s->n[o], what, "tangent of output", s->fout[o], s->msg,
                       s->msg_size))
        return false;
    for (int64_t k = 0; k < s->n[o]; k++)
        if (!gc__close_enough(got[k], s->num[o][k], &s->o))
            return gc__fail(s->msg, s->msg_size,
                            "%s: output %d, output element %lld: forward-mode %.10g%s, numerical "
                            "%.10g (atol %g, rtol %g)",
                            what, s->fout[o], (long long)k, got[k], t ? "" : " (no tangent)",
                            s->num[o][k], s->o.atol, s->o.rtol);
    return true;
}

/* f on the inputs made dual with v at a fresh level: every floating output's tangent against
 * num[]. Everything made here (duals, tangents, outputs, the level) is gone on return. */
static bool analytical_jvp(fw_state *s, double *const *v, const char *what)
{
    int level = tg_fw_dual_level_enter();
    if (level < 0)
        return gc__fail(s->msg, s->msg_size, "%s: entering a dual level failed: %s", what,
                        last_error());
    tg_tensor *args[GC_MAX_INPUTS], *duals[GC_MAX_INPUTS] = { NULL };
    tg_tensor *out[GC_MAX_OUTPUTS] = { NULL };
    int n_out = 0;
    bool ok = true;
    for (int i = 0; i < s->n_in; i++) args[i] = s->args[i];
    for (int i = 0; ok && i < s->n_diff; i++) {
        if (!v[i]) continue;
        tg_tensor *x = s->args[s->diff[i]];
        tg_tensor *t = gc__tensor_like(x, v[i]);
        duals[i] = t ? tg_make_dual(x, t, level) : NULL;
        tg_release(t); /* the dual keeps its own reference */
        if (!duals[i])
            ok = gc__fail(s->msg, s->msg_size, "%s: making input %d dual failed: %s", what,
                          s->diff[i], last_error());
        else args[s->diff[i]] = duals[i];
    }
    ok = ok && call_f(s, args, out, &n_out, what);
    if (ok && n_out != s->n_out)
        ok = gc__fail(s->msg, s->msg_size,
                      "%s: the function returned %d outputs on dual inputs, %d on plain ones", what,
                      n_out, s->n_out);
    for (int o = 0; ok && o < s->n_f; o++) {
        tg_tensor *y = out[s->fout[o]];
        tg_dual d = tg_unpack_dual(y, level);
        if (!d.primal)
            ok = gc__fail(s->msg, s->msg_size, "%s: unpacking output %d failed: %s", what,
                          s->fout[o], last_error());
        else ok = compare_primal(s, what, o, d.primal) && compare_tangent(s, what, o, y, d.tangent);
        kt_release_all(d.primal, d.tangent);
    }
    gc__release_all(out, n_out);
    gc__release_all(duals, s->n_diff);
    if (tg_fw_dual_level_exit(level) != 0 && ok)
        ok = gc__fail(s->msg, s->msg_size, "%s: exiting the dual level failed: %s", what,
                      last_error());
    return ok;
}

/* One direction, both sides. */
static bool check_direction(fw_state *s, double *const *v, const char *what)
{
    return numerical_jvp(s, v, what) && analytical_jvp(s, v, what);
}

/* Input i alone: its Jacobian column by column (one-hot v), or GC_VJPS random directions. */
static bool check_input(fw_state *s, int i, uint64_t *seed)
{
    double *v[GC_MAX_INPUTS] = { NULL };
    v[i] = calloc((size_t)(s->m[i] ? s->m[i] : 1), sizeof(double));
    char what[128];
    bool ok = true;
    if (s->m[i] <= s->o.full_max) {
        for (int64_t j = 0; ok && j < s->m[i]; j++) {
            snprintf(what, sizeof what, "Jacobian column of input %d, input element %lld",
                     s->diff[i], (long long)j);
            v[i][j] = 1;
            ok = check_direction(s, v, what);
            v[i][j] = 0;
        }
    } else {
        for (int r = 0; ok && r < GC_VJPS; r++) {
            snprintf(what, sizeof what, "random Jacobian-vector product %d of input %d", r,
                     s->diff[i]);
            gc__random_vector(v[i], s->m[i], seed);
            ok = check_direction(s, v, what);
        }
    }
    free(v[i]);
    return ok;
}

/* Every differentiated input dual at once, random tangents: formulas with several tangents. */
static bool check_all_inputs(fw_state *s, uint64_t *seed)
{
    double *v[GC_MAX_INPUTS] = { NULL };
    for (int i = 0; i < s->n_diff; i++) {
        v[i] = malloc(sizeof(double) * (size_t)(s->m[i] ? s->m[i] : 1));
        gc__random_vector(v[i], s->m[i], seed);
    }
    bool ok = check_direction(s, v, "all inputs dual at once (random tangents)");
    for (int i = 0; i < s->n_diff; i++) free(v[i]);
    return ok;
}

/* Finds the differentiated inputs (detaching them into args[]) and the floating outputs. */
static bool setup(fw_state *s, tg_tensor *const *in)
{
    for (int i = 0; i < s->n_in; i++) {
        tg_tensor *x = in[i];
        s->args[i] = x;
        if (!x || !tg_tensor_requires_grad(x)) continue;
        if (tg_tensor_dtype(x) != TG_FLOAT64)
            return gc__fail(s->msg, s->msg_size,
                            "input %d requires grad but is %s (gradcheck needs float64)", i,
                            tg_dtype_name(tg_tensor_dtype(x)));
        int k = s->n_diff++;
        s->diff[k] = i;
        s->m[k] = tg_tensor_numel(x);
        s->args[i] = tg_tensor_detach(x);
        s->orig[k] = malloc(sizeof(double) * (size_t)(s->m[k] ? s->m[k] : 1));
        if (!s->args[i] || tg_tensor_to_doubles(x, s->orig[k], s->m[k]) != 0)
            return gc__fail(s->msg, s->msg_size, "reading input %d: %s", i, last_error());
    }
    if (!s->n_diff) return gc__fail(s->msg, s->msg_size, "no input requires grad");
    tg_tensor *out[GC_MAX_OUTPUTS];
    if (!call_f(s, s->args, out, &s->n_out, "plain inputs")) return false;
    s->n_f = gc__floating_outputs(out, s->n_out, s->fout, s->n);
    for (int o = 0; o < s->n_f; o++) {
        size_t bytes = sizeof(double) * (size_t)(s->n[o] ? s->n[o] : 1);
        s->plain[o] = malloc(bytes);
        s->num[o] = malloc(bytes);
        s->vals[o] = malloc(bytes);
    }
    return eval_values(s, s->plain, "plain inputs");
}

static void teardown(fw_state *s)
{
    for (int k = 0; k < s->n_diff; k++) {
        tg_release(s->args[s->diff[k]]);
        free(s->orig[k]);
    }
    for (int o = 0; o < s->n_f; o++) {
        free(s->plain[o]);
        free(s->num[o]);
        free(s->vals[o]);
    }
}

bool gc_fwgradcheck(gc_func f, tg_tensor *const *in, int n_in, const gc_opts *opts, char *msg,
                    size_t msg_size)
{
    fw_state s = {
        .f = f, .n_in = n_in, .o = gc__defaults(opts), .msg = msg, .msg_size = msg_size
    };
    msg[0] = 0;
    if (n_in > GC_MAX_INPUTS) return gc__fail(msg, msg_size, "more than %d inputs", GC_MAX_INPUTS);
    uint64_t seed = s.o.seed ^ 0x6a09e667f3bcc908ULL;
    bool ok = setup(&s, in);
    for (int i = 0; ok && i < s.n_diff; i++) ok = check_input(&s, i, &seed);
    if (ok && s.n_diff > 1) ok = check_all_inputs(&s, &seed);
    teardown(&s);
    return ok;
}
