/* An optimizer's state in a tg_state (torch's optimizer.state_dict() / load_state_dict()):
 * the groups' hyper-parameters and parameter names as metadata, each parameter's step count,
 * and its state tensors (snapshots: the saved tensors are clones, so later steps do not change
 * a checkpoint that is not yet written). Loading checks the whole file first, builds the new
 * state tensors, and only then replaces anything. Key layout: tg_nn_optim.h. */
#include "optim_internal.h"
#include "ops/clone.h"
#include "ops/copy.h"
#include "ops/zeros_like.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 1024
#define N_SLOTS 4

static const char *const slot_names[N_SLOTS] = { "momentum_buffer", "exp_avg", "exp_avg_sq",
                                                 "max_exp_avg_sq" };

static tg_tensor **slot_of(tg__optim_param *p, int k)
{
    tg_tensor **s[N_SLOTS] = { &p->momentum_buffer, &p->exp_avg, &p->exp_avg_sq,
                               &p->max_exp_avg_sq };
    return s[k];
}

/* Whether state slot k belongs to the optimizer's kind. */
static bool slot_used(const tg_optimizer *o, int k)
{
    return o->kind == TG_OPTIM_SGD ? k == 0 : k > 0;
}

/* key = prefix + formatted rest; 0, or -1 with an error when it does not fit. */
static int key(char *buf, const tg_optimizer *o, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int key(char *buf, const tg_optimizer *o, const char *prefix, const char *fmt, ...)
{
    int n = snprintf(buf, KEY_MAX, "%s", prefix);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && n < KEY_MAX) n += vsnprintf(buf + n, (size_t)(KEY_MAX - n), fmt, ap);
    va_end(ap);
    if (n < 0 || n >= KEY_MAX)
        return tg_set_error(tg_optimizer_name(o), "state key longer than %d bytes", KEY_MAX), -1;
    return 0;
}

/* The comma-separated names of a group's parameters (malloc'd), or NULL on out of memory. */
static char *group_names(const tg_optimizer *o, int g)
{
    size_t len = 1;
    for (int64_t i = 0; i < o->n_params; i++)
        if (o->params[i].group == g) len += strlen(o->params[i].name) + 1;
    char *s = malloc(len);
    if (!s) return tg_set_error(tg_optimizer_name(o), "out of memory");
    s[0] = '\0';
    for (int64_t i = 0; i < o->n_params; i++) {
        if (o->params[i].group != g) continue;
        if (s[0]) strcat(s, ",");
        strcat(s, o->params[i].name);
    }
    return s;
}

/* The hyper-parameters a kind has, as (name, field) pairs; doubles first, then flags. */
typedef struct hyper_field {
    const char *name;
    size_t offset;
    bool is_flag;
} hyper_field;
#define HF(f, flag)                                \
    {                                              \
#f, offsetof(tg_optim_group_opts, f), flag \
    }
static const hyper_field sgd_fields[] = { HF(lr, 0),           HF(momentum, 0), HF(dampening, 0),
                                          HF(weight_decay, 0), HF(nesterov, 1), HF(maximize, 1) };
static const hyper_field adam_fields[] = { HF(lr, 0),      HF(beta1, 0),        HF(beta2, 0),
                                           HF(eps, 0),     HF(weight_decay, 0), HF(amsgrad, 1),
                                           HF(maximize, 1) };
#undef HF

static const hyper_field *fields_of(const tg_optimizer *o, int *n)
{
    if (o->kind == TG_OPTIM_SGD) {
        *n = (int)(sizeof sgd_fields / sizeof sgd_fields[0]);
        return sgd_fields;
    }
    *n = (int)(sizeof adam_fields / sizeof adam_fields[0]);
    return adam_fields;
}

/* ---- save ---- */

static int save_groups(tg_optimizer *o, tg_state *s, const char *prefix)
{
    char k[KEY_MAX];
    int nf;
    const hyper_field *f = fields_of(o, &nf);
    for (int g = 0; g < o->n_groups; g++) {
        const tg__optim_group *gr = &o->groups[g];
        for (int j = 0; j < nf; j++) {
            const char *field = (const char *)&gr->h + f[j].offset;
            if (key(k, o, prefix, "param_groups.%d.%s", g, f[j].name) != 0) return -1;
            int rc = f[j].is_flag ? tg_state_put_int(s, k, *(const int *)field)
                                  : tg_state_put_double(s, k, *(const double *)field);
            if (rc != 0) return -1;
        }
        if (!isnan(gr->initial_lr) && (key(k, o, prefix, "param_groups.%d.initial_lr", g) != 0 ||
                                       tg_state_put_double(s, k, gr->initial_lr) != 0))
            return -1;
        char *names = group_names(o, g);
        int rc = names && key(k, o, prefix, "param_groups.%d.params", g) == 0 &&
                         tg_state_put_meta(s, k, names) == 0
                     ? 0
                     : -1;
        free(names);
        if (rc != 0) return -1;
    }
    return 0;
}

static int save_param(tg_optimizer *o, tg__optim_param *p, tg_state *s, const char *prefix)
{
    char k[KEY_MAX];
    if (p->step == 0 && !p->exp_avg && !p->momentum_buffer) return 0; /* no state yet */
    if (key(k, o, prefix, "state.%s.step", p->name) != 0 || tg_state_put_int(s, k, p->step) != 0)
        return -1;
    for (int j = 0; j < N_SLOTS; j++) {
        tg_tensor *t = *slot_of(p, j);
        if (!t) continue;
        if (key(k, o, prefix, "state.%s.%s", p->name, slot_names[j]) != 0) return -1;
        tg_tensor *c = NULL;
        TG_NO_GRAD {
            c = tg_clone(t);
        }
        int rc = c ? tg_state_put_tensor(s, k, c) : -1;
        tg_release(c);
        if (rc != 0) return -1;
    }
    return 0;
}

int tg_optimizer_save_state(tg_optimizer *o, tg_state *s, const char *prefix)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    if (!s) return tg_set_error(tg_optimizer_name(o), "save_state: the state is NULL"), -1;
    if (!prefix) prefix = "";
    char k[KEY_MAX];
    int token = tg_scope_suspend();
    int rc = key(k, o, prefix, "kind") == 0 && tg_state_put_meta(s, k, tg_optimizer_name(o)) == 0 &&
                     key(k, o, prefix, "num_groups") == 0 &&
                     tg_state_put_int(s, k, o->n_groups) == 0 && save_groups(o, s, prefix) == 0
                 ? 0
                 : -1;
    for (int64_t i = 0; i < o->n_params && rc == 0; i++)
        rc = save_param(o, &o->params[i], s, prefix);
    tg_scope_resume(token);
    return rc;
}

/* ---- load: check ---- */

/* The groups as the file has them, into out[o->n_groups]. */
static int load_groups(tg_optimizer *o, tg_state *s, const char *prefix, tg__optim_group *out)
{
    const char *op = tg_optimizer_name(o);
    char k[KEY_MAX];
    if (key(k, o, prefix, "kind") != 0) return -1;
    const char *kind = tg_state_meta(s, k);
    if (!kind || strcmp(kind, op) != 0)
        return tg_set_error(op, "load_state: '%s' is %s%s%s, not %s", k, kind ? "'" : "(absent)",
                            kind ? kind : "", kind ? "'" : "", op),
               -1;
    int64_t ng;
    if (key(k, o, prefix, "num_groups") != 0 || tg_state_get_int(s, k, &ng) != 0) return -1;
    if (ng != o->n_groups)
        return tg_set_error(op,
                            "loaded state dict has a different number of parameter groups ('%s' "
                            "is %lld, the optimizer has %d)",
                            k, (long long)ng, o->n_groups),
               -1;
    int nf;
    const hyper_field *f = fields_of(o, &nf);
    for (int g = 0; g < o->n_groups; g++) {
        out[g] = o->groups[g];
        if (key(k, o, prefix, "param_groups.%d.params", g) != 0) return -1;
        const char *names = tg_state_meta(s, k);
        char *mine = group_names(o, g);
        if (!mine) return -1;
        bool same = names && strcmp(names, mine) == 0;
        if (!same)
            tg_set_error(op,
                         "loaded state dict contains a parameter group that doesn't match the "
                         "optimizer's group: '%s' is '%s' but group %d has '%s'",
                         k, names ? names : "(absent)", g, mine);
        free(mine);
        if (!same) return -1;
        for (int j = 0; j < nf; j++) {
            char *field = (char *)&out[g].h + f[j].offset;
            if (key(k, o, prefix, "param_groups.%d.%s", g, f[j].name) != 0) return -1;
            int64_t v;
            if (f[j].is_flag) {
                if (tg_state_get_int(s, k, &v) != 0) return -1;
                *(int *)field = v != 0;
            } else if (tg_state_get_double(s, k, (double *)field) != 0) {
                return -1;
            }
        }
        if (key(k, o, prefix, "param_groups.%d.initial_lr", g) != 0) return -1;
        out[g].initial_lr = NAN;
        if (tg_state_meta(s, k) && tg_state_get_double(s, k, &out[g].initial_lr) != 0) return -1;
        if (tg__optim_check_hyper(o, &out[g].h) != 0) return -1;
    }
    return 0;
}

/* A saved state tensor fits parameter t: shape and dtype. */
static int check_saved(const tg_optimizer *o, const char *k, tg_tensor *saved, tg_tensor *t)
{
    const char *op = tg_optimizer_name(o);
    char a[256], b[256];
    int64_t nd = tg_tensor_dim(t);
    if (tg_tensor_dim(saved) != nd ||
        memcmp(tg_tensor_sizes(saved), tg_tensor_sizes(t), sizeof(int64_t) * (size_t)nd) != 0)
        return tg_set_error(op, "load_state: '%s' has shape %s but the parameter has shape %s", k,
                            tg__optim_shape_str(a, sizeof a, saved),
                            tg__optim_shape_str(b, sizeof b, t)),
               -1;
    if (tg_tensor_dtype(saved) != tg_tensor_dtype(t))
        return tg_set_error(op, "load_state: '%s' has dtype %s but the parameter has dtype %s", k,
                            tg_dtype_name(tg_tensor_dtype(saved)),
                            tg_dtype_name(tg_tensor_dtype(t))),
               -1;
    return 0;
}

/* Every "<prefix>state." tensor names a parameter and a state of this kind. */
static int check_unknown(tg_optimizer *o, tg_state *s, const char *prefix)
{
    char k[KEY_MAX];
    if (key(k, o, prefix, "state.") != 0) return -1;
    size_t kl = strlen(k);
    for (int64_t t = 0; t < tg_state_num_tensors(s); t++) {
        const char *name = tg_state_tensor_name(s, t);
        if (strncmp(name, k, kl) != 0) continue;
        bool known = false;
        for (int64_t i = 0; i < o->n_params && !known; i++) {
            size_t pl = strlen(o->params[i].name);
            const char *rest = name + kl;
            if (strncmp(rest, o->params[i].name, pl) != 0 || rest[pl] != '.') continue;
            for (int j = 0; j < N_SLOTS && !known; j++)
                known = slot_used(o, j) && strcmp(rest + pl + 1, slot_names[j]) == 0;
        }
        if (!known)
            return tg_set_error(tg_optimizer_name(o),
                                "load_state: unexpected key '%s' (no such parameter or state)",
                                name),
                   -1;
    }
    return 0;
}

/* Parameter p's saved state: its step and tensors (borrowed from s) into steps / saved[]. */
static int load_param(tg_optimizer *o, tg__optim_param *p, tg_state *s, const char *prefix,
                      int64_t *steps, tg_tensor **saved)
{
    const char *op = tg_optimizer_name(o);
    char k[KEY_MAX];
    *steps = 0;
    if (key(k, o, prefix, "state.%s.step", p->name) != 0) return -1;
    bool has_step = tg_state_meta(s, k) != NULL;
    if (has_step && tg_state_get_int(s, k, steps) != 0) return -1;
    if (*steps < 0) return tg_set_error(op, "load_state: '%s' is negative", k), -1;
    for (int j = 0; j < N_SLOTS; j++) {
        saved[j] = NULL;
        if (!slot_used(o, j) || key(k, o, prefix, "state.%s.%s", p->name, slot_names[j]) != 0)
            continue;
        bool needed = has_step && o->kind != TG_OPTIM_SGD && (j == 1 || j == 2);
        if (!tg_state_has_tensor(s, k)) {
            if (needed) return tg_set_error(op, "load_state: missing key '%s'", k), -1;
            continue;
        }
        if (!has_step)
            return tg_set_error(op, "load_state: '%s' without '%sstate.%s.step'", k, prefix,
                                p->name),
                   -1;
        if (!*p->slot)
            return tg_set_error(op, "load_state: '%s' for parameter '%s', which is NULL", k,
                                p->name),
                   -1;
        saved[j] = tg_state_tensor(s, k);
        if (!saved[j] || check_saved(o, k, saved[j], *p->slot) != 0) return -1;
    }
    return 0;
}

/* ---- load: commit ---- */

/* New state tensors for every parameter (copies of saved[] on the parameters' devices). */
static int build_state(tg_optimizer *o, tg_tensor **saved, tg_tensor **made)
{
    int rc = 0;
    TG_NO_GRAD {
        for (int64_t i = 0; i < o->n_params * N_SLOTS && rc == 0; i++) {
            if (!saved[i]) continue;
            made[i] = tg_zeros_like(*o->params[i / N_SLOTS].slot);
            rc = made[i] ? tg_drop(tg_copy_(made[i], saved[i])) : -1;
        }
    }
    return rc;
}

int tg_optimizer_load_state(tg_optimizer *o, tg_state *s, const char *prefix)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    if (!s) return tg_set_error(tg_optimizer_name(o), "load_state: the state is NULL"), -1;
    if (!prefix) prefix = "";
    tg__optim_group *groups = calloc((size_t)o->n_groups, sizeof *groups);
    int64_t *steps = calloc((size_t)o->n_params, sizeof *steps);
    tg_tensor **saved = calloc((size_t)(o->n_params * N_SLOTS), sizeof *saved);
    tg_tensor **made = calloc((size_t)(o->n_params * N_SLOTS), sizeof *made);
    int token = tg_scope_suspend();
    int rc = groups && steps && saved && made ? 0 : -1;
    if (rc != 0) tg_set_error(tg_optimizer_name(o), "out of memory");
    if (rc == 0) rc = load_groups(o, s, prefix, groups);
    if (rc == 0) rc = check_unknown(o, s, prefix);
    for (int64_t i = 0; i < o->n_params && rc == 0; i++)
        rc = load_param(o, &o->params[i], s, prefix, &steps[i], &saved[i * N_SLOTS]);
    if (rc == 0) rc = build_state(o, saved, made);
    if (rc == 0) {
        memcpy(o->groups, groups, sizeof *groups * (size_t)o->n_groups);
        for (int64_t i = 0; i < o->n_params; i++) {
            tg__optim_param *p = &o->params[i];
            tg__optim_param_clear_state(p);
            p->step = steps[i];
            for (int j = 0; j < N_SLOTS; j++) {
                *slot_of(p, j) = made[i * N_SLOTS + j];
                made[i * N_SLOTS + j] = NULL;
            }
        }
    }
    for (int64_t i = 0; made && i < o->n_params * N_SLOTS; i++) tg_release(made[i]);
    tg_scope_resume(token);
    free(groups);
    free(steps);
    free(saved);
    free(made);
    return rc;
}
