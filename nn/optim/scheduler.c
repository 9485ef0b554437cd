/* Learning-rate schedules: torch's _LRScheduler (1.13) base (initial_lr, base_lrs, the initial
 * step, step() and step(epoch)), SequentialLR, and the position saved to a tg_state. The kinds'
 * formulas are schedules.c. */
#include "sched_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tg_lr_scheduler *tg__sched_alloc(const tg__sched_kind *kind, tg_optimizer *o)
{
    if (!o || !tg__optim_get_group(o, 0)) return tg_set_error(kind->name, "the optimizer is NULL");
    tg_lr_scheduler *s = calloc(1, sizeof *s);
    int n = tg_optimizer_num_groups(o);
    if (s) {
        s->kind = kind;
        s->opt = o;
        s->n_groups = n;
        s->last_epoch = -1;
        s->base_lrs = calloc((size_t)n, sizeof(double));
        s->last_lrs = calloc((size_t)n, sizeof(double));
        if (s->base_lrs && s->last_lrs) return s;
        tg_lr_scheduler_free(s);
    }
    return tg_set_error(kind->name, "out of memory");
}

void tg_lr_scheduler_free(tg_lr_scheduler *s)
{
    if (!s) return;
    if (s->kind && s->kind->fini) s->kind->fini(s);
    for (int i = 0; i < s->n_children; i++) tg_lr_scheduler_free(s->children[i]);
    free(s->children);
    free(s->milestones);
    free(s->base_lrs);
    free(s->last_lrs);
    free(s->max_lrs);
    free(s->min_lrs);
    free(s->max_m);
    free(s->base_m);
    free(s);
}

/* The groups' count must not have changed since the schedule was made. */
static int check_groups(const tg_lr_scheduler *s)
{
    if (tg_optimizer_num_groups(s->opt) == s->n_groups) return 0;
    return tg_set_error(s->kind->name,
                        "the optimizer has %d parameter groups, but had %d when the schedule "
                        "was made",
                        tg_optimizer_num_groups(s->opt), s->n_groups),
           -1;
}

/* step(epoch=None) or step(epoch): sets every group's lr. Nothing changes on an error. */
static int sched_step(tg_lr_scheduler *s, bool has_epoch, int64_t epoch)
{
    if (s->kind->get_lr == NULL) { /* SequentialLR */
        return tg_lr_scheduler_step(s);
    }
    if (check_groups(s) != 0) return -1;
    double *v = malloc(sizeof(double) * (size_t)s->n_groups);
    if (!v) return tg_set_error(s->kind->name, "out of memory"), -1;
    int64_t le = s->last_epoch, sc = s->step_count;
    s->step_count++;
    int rc;
    if (!has_epoch) {
        s->last_epoch++;
        rc = s->kind->get_lr(s, v);
    } else {
        s->last_epoch = epoch;
        rc = s->kind->closed_form ? s->kind->closed_form(s, v) : s->kind->get_lr(s, v);
    }
    /* assigned as torch assigns group['lr'], unchecked: OneCycleLR's last step may go past
     * min_lr (and below 0), which only a following optimizer step rejects */
    for (int g = 0; g < s->n_groups && rc == 0; g++) s->opt->groups[g].h.lr = v[g];
    if (rc != 0) {
        s->last_epoch = le;
        s->step_count = sc;
    }
    for (int g = 0; g < s->n_groups && rc == 0; g++) s->last_lrs[g] = tg_optimizer_lr(s->opt, g);
    free(v);
    return rc;
}

tg_lr_scheduler *tg__sched_init(tg_lr_scheduler *s)
{
    for (int g = 0; g < s->n_groups; g++) {
        tg__optim_group *gr = &s->opt->groups[g];
        if (isnan(gr->initial_lr)) gr->initial_lr = gr->h.lr; /* group.setdefault */
        s->base_lrs[g] = gr->initial_lr;
    }
    s->step_count = 0; /* _initial_step */
    if (sched_step(s, false, 0) != 0) {
        tg_lr_scheduler_free(s);
        return NULL;
    }
    return s;
}

/* ---- SequentialLR ---- */

static const tg__sched_kind sequential_kind = { "SequentialLR", NULL, NULL, NULL };

/* bisect_right(milestones, x) */
static int bisect_right(const int64_t *a, int n, int64_t x)
{
    int i = 0;
    while (i < n && a[i] <= x) i++;
    return i;
}

tg_lr_scheduler *tg_sequential_lr_new(tg_optimizer *o, tg_lr_scheduler *const *schedules, int n,
                                      tg_int_list milestones)
{
    const char *op = sequential_kind.name;
    tg_lr_scheduler *s = NULL;
    const char *err = NULL;
    if (n < 1 || !schedules) err = "expects at least one schedule";
    for (int i = 0; !err && i < n; i++)
        if (!schedules[i] || schedules[i]->opt != o)
            err = "Sequential Schedulers expects all schedulers to belong to the same optimizer";
    if (!err && milestones.len != n - 1) {
        tg_set_error(op,
                     "Sequential Schedulers expects number of schedulers provided to be one more "
                     "than the number of milestone points, but got number of schedulers %d and "
                     "the number of milestones to be equal to %lld",
                     n, (long long)milestones.len);
        err = "";
    }
    if (!err) s = tg__sched_alloc(&sequential_kind, o);
    if (s) {
        s->children = malloc(sizeof *s->children * (size_t)n);
        s->milestones = malloc(sizeof(int64_t) * (size_t)(n > 1 ? n - 1 : 1));
        if (!s->children || !s->milestones) err = "out of memory";
    }
    if (err || !s) {
        if (err && *err) tg_set_error(op, "%s", err);
        for (int i = 0; i < n && schedules; i++) tg_lr_scheduler_free(schedules[i]);
        tg_lr_scheduler_free(s);
        return NULL;
    }
    memcpy(s->children, schedules, sizeof *s->children * (size_t)n);
    s->n_children = n;
    if (n > 1) memcpy(s->milestones, milestones.data, sizeof(int64_t) * (size_t)(n - 1));
    s->n_milestones = n - 1;
    s->last_epoch = 0; /* last_epoch + 1 */
    /* Reset the lrs to their initial values, "undo" the children's initial steps, and perform
     * the initial step of the first one only. */
    for (int g = 0; g < s->n_groups; g++) o->groups[g].h.lr = o->groups[g].initial_lr;
    for (int i = 0; i < n; i++) s->children[i]->last_epoch -= 1;
    tg_lr_scheduler *first = s->children[0];
    first->step_count = 0;
    if (sched_step(first, false, 0) != 0) {
        tg_lr_scheduler_free(s);
        return NULL;
    }
    memcpy(s->last_lrs, first->last_lrs, sizeof(double) * (size_t)s->n_groups);
    return s;
}

static int sequential_step(tg_lr_scheduler *s)
{
    int64_t e = s->last_epoch + 1;
    int idx = bisect_right(s->milestones, s->n_milestones, e);
    tg_lr_scheduler *c = s->children[idx];
    int rc =
        idx > 0 && s->milestones[idx - 1] == e ? sched_step(c, true, 0) : sched_step(c, false, 0);
    if (rc != 0) return -1;
    s->last_epoch = e;
    memcpy(s->last_lrs, c->last_lrs, sizeof(double) * (size_t)s->n_groups);
    return 0;
}

/* ---- the public calls ---- */

int tg_lr_scheduler_step(tg_lr_scheduler *s)
{
    if (!s) return tg_set_error("lr_scheduler", "the schedule is NULL"), -1;
    if (s->kind == &sequential_kind) return sequential_step(s);
    return sched_step(s, false, 0);
}

double tg_lr_scheduler_last_lr(const tg_lr_scheduler *s, int group)
{
    if (!s) return tg_set_error("lr_scheduler", "the schedule is NULL"), NAN;
    if (group < 0 || group >= s->n_groups)
        return tg_set_error(s->kind->name, "group %d does not exist (the optimizer has %d)", group,
                            s->n_groups),
               NAN;
    return s->last_lrs[group];
}

int64_t tg_lr_scheduler_last_epoch(const tg_lr_scheduler *s) { return s ? s->last_epoch : -1; }

/* ---- state ---- */

#define KEY_MAX 512

static const char *key(char *buf, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *key(char *buf, const char *prefix, const char *fmt, ...)
{
    int n = snprintf(buf, KEY_MAX, "%s", prefix);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && n < KEY_MAX) n += vsnprintf(buf + n, (size_t)(KEY_MAX - n), fmt, ap);
    va_end(ap);
    if (n < 0 || n >= KEY_MAX) return tg_set_error("lr_scheduler", "state key too long");
    return buf;
}

int tg_lr_scheduler_save_state(const tg_lr_scheduler *s, tg_state *st, const char *prefix)
{
    if (!s || !st) return tg_set_error("lr_scheduler", "save_state: NULL argument"), -1;
    if (!prefix) prefix = "";
    char k[KEY_MAX];
    if (!key(k, prefix, "kind") || tg_state_put_meta(st, k, s->kind->name) != 0 ||
        !key(k, prefix, "last_epoch") || tg_state_put_int(st, k, s->last_epoch) != 0 ||
        !key(k, prefix, "step_count") || tg_state_put_int(st, k, s->step_count) != 0)
        return -1;
    for (int g = 0; g < s->n_groups; g++)
        if (!key(k, prefix, "base_lrs.%d", g) || tg_state_put_double(st, k, s->base_lrs[g]) != 0 ||
            !key(k, prefix, "last_lrs.%d", g) || tg_state_put_double(st, k, s->last_lrs[g]) != 0)
            return -1;
    for (int i = 0; i < s->n_children; i++) {
        char sub[KEY_MAX];
        if (!key(sub, prefix, "schedulers.%d.", i) ||
            tg_lr_scheduler_save_state(s->children[i], st, sub) != 0)
            return -1;
    }
    return 0;
}

/* The saved position of s and its children, checked, into pos[] (4 + 2 * groups values per
 * schedule, depth first); *at counts them. */
static int read_state(const tg_lr_scheduler *s, tg_state *st, const char *prefix, double *pos,
                      int *at)
{
    char k[KEY_MAX];
    if (!key(k, prefix, "kind")) return -1;
    const char *kind = tg_state_meta(st, k);
    if (!kind || strcmp(kind, s->kind->name) != 0)
        return tg_set_error(s->kind->name, "load_state: '%s' is '%s', not '%s'", k,
                            kind ? kind : "(absent)", s->kind->name),
               -1;
    int64_t le, sc;
    if (!key(k, prefix, "last_epoch") || tg_state_get_int(st, k, &le) != 0 ||
        !key(k, prefix, "step_count") || tg_state_get_int(st, k, &sc) != 0)
        return -1;
    if (!key(k, prefix, "base_lrs.%d", s->n_groups)) return -1;
    if (tg_state_meta(st, k))
        return tg_set_error(s->kind->name,
                            "load_state: '%s' exists, but the optimizer has %d groups", k,
                            s->n_groups),
               -1;
    pos[(*at)++] = (double)le;
    pos[(*at)++] = (double)sc;
    for (int g = 0; g < s->n_groups; g++) {
        if (!key(k, prefix, "base_lrs.%d", g) || tg_state_get_double(st, k, &pos[(*at)++]) != 0 ||
            !key(k, prefix, "last_lrs.%d", g) || tg_state_get_double(st, k, &pos[(*at)++]) != 0)
            return -1;
    }
    for (int i = 0; i < s->n_children; i++) {
        char sub[KEY_MAX];
        if (!key(sub, prefix, "schedulers.%d.", i) ||
            read_state(s->children[i], st, sub, pos, at) != 0)
            return -1;
    }
    return 0;
}

static void apply_state(tg_lr_scheduler *s, const double *pos, int *at)
{
    s->last_epoch = (int64_t)pos[(*at)++];
    s->step_count = (int64_t)pos[(*at)++];
    for (int g = 0; g < s->n_groups; g++) {
        s->base_lrs[g] = pos[(*at)++];
        s->last_lrs[g] = pos[(*at)++];
    }
    for (int i = 0; i < s->n_children; i++) apply_state(s->children[i], pos, at);
}

static int count_values(const tg_lr_scheduler *s)
{
    int n = 2 + 2 * s->n_groups;
    for (int i = 0; i < s->n_children; i++) n += count_values(s->children[i]);
    return n;
}

int tg_lr_scheduler_load_state(tg_lr_scheduler *s, tg_state *st, const char *prefix)
{
    if (!s || !st) return tg_set_error("lr_scheduler", "load_state: NULL argument"), -1;
    if (!prefix) prefix = "";
    double *pos = malloc(sizeof(double) * (size_t)count_values(s));
    if (!pos) return tg_set_error(s->kind->name, "out of memory"), -1;
    int at = 0;
    int rc = read_state(s, st, prefix, pos, &at);
    if (rc == 0) {
        at = 0;
        apply_state(s, pos, &at);
    }
    free(pos);
    return rc;
}
