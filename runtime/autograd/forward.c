/* Forward-mode AD (PyTorch's forward_ad): dual levels, the tangents tensors carry, make_dual
 * and unpack_dual, and what the generated autograd kernels call to read the inputs' tangents
 * and attach their outputs' (autograd.h, "forward mode").
 *
 * Levels are global, as in PyTorch: a stack of at most TG_MAX_DUAL_LEVELS, each with an id
 * that is never reused. A tensor keeps its tangents in its autograd meta as (level id, tangent)
 * pairs, so a tangent of a level that was exited simply never matches again; it is dropped the
 * next time the tensor gets a tangent, or with the tensor. `fw_dual` on the tensor is sticky:
 * it routes the tensor's operators to their autograd kernels (dispatch.c), which find out here
 * whether any tangent is live.
 *
 * While an autograd kernel computes the tangents of one level, that level is suspended on the
 * thread: the operators of the formula see the primal values (no tangent of that level, so no
 * recursion), and still the tangents of the other levels, which is what makes nested levels
 * give higher derivatives. */
#include "autograd/autograd_private.h"
#include "autograd/engine_ops.h"

#include <pthread.h>
#include <stdlib.h>

struct tg__fw_grads {
    int n;
    struct {
        uint64_t level_id;
        tg_tensor *tangent; /* owned */
    } e[TG_MAX_DUAL_LEVELS];
};

static pthread_mutex_t levels_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t level_ids[TG_MAX_DUAL_LEVELS];
static int nlevels; /* atomic: read without the lock by every autograd kernel */
static uint64_t next_level_id = 1;
static _Thread_local unsigned suspended; /* bit L: level L's tangents are hidden */

int tg__fw_levels(void) { return __atomic_load_n(&nlevels, __ATOMIC_ACQUIRE); }

int tg_fw_dual_level_enter(void)
{
    pthread_mutex_lock(&levels_lock);
    int n = nlevels;
    if (n >= TG_MAX_DUAL_LEVELS) {
        pthread_mutex_unlock(&levels_lock);
        return tg__fail("enter_dual_level", "at most %d dual levels can be nested",
                        TG_MAX_DUAL_LEVELS);
    }
    level_ids[n] = next_level_id++;
    __atomic_store_n(&nlevels, n + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&levels_lock);
    return n;
}

int tg_fw_dual_level_exit(int level)
{
    pthread_mutex_lock(&levels_lock);
    int n = nlevels;
    if (n == 0 || level != n - 1) {
        pthread_mutex_unlock(&levels_lock);
        if (n == 0) return tg__fail("exit_dual_level", "no dual level is entered");
        return tg__fail("exit_dual_level",
                        "Trying to exit a forward AD level that was not the last one that was "
                        "created. This is not supported. (level %d, the innermost is %d)",
                        level, n - 1);
    }
    __atomic_store_n(&nlevels, n - 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&levels_lock);
    suspended &= ~(1u << level);
    return 0;
}

static bool level_live(uint64_t id, int n)
{
    for (int l = 0; l < n; l++)
        if (level_ids[l] == id) return true;
    return false;
}

/* t's tangent at level L (borrowed), NULL when it has none. */
static tg_tensor *find_any(const tg_tensor *t, int level)
{
    if (!t || !t->fw_dual) return NULL;
    struct tg_autograd_meta *m = t->autograd;
    struct tg__fw_grads *g = m ? m->fw : NULL;
    if (!g) return NULL;
    uint64_t id = level_ids[level];
    tg_tensor *r = NULL;
    tg__meta_lock(m);
    for (int i = 0; i < g->n; i++)
        if (g->e[i].level_id == id) r = g->e[i].tangent;
    tg__meta_unlock(m);
    return r;
}

/* ... and NULL when L is suspended: what operators see. */
static tg_tensor *find(const tg_tensor *t, int level)
{
    return (suspended >> level) & 1 ? NULL : find_any(t, level);
}

/* The generated code asks for the tangents of the level it is computing, which it suspended. */
bool tg__fw_has(const tg_tensor *t, int level) { return find_any(t, level) != NULL; }

bool tg__fw_has_list(tg_tensor *const *ts, int n, int level)
{
    for (int i = 0; i < n; i++)
        if (find_any(ts[i], level)) return true;
    return false;
}

bool tg__fw_any(tg_tensor *const *ts, int n)
{
    int levels = tg__fw_levels();
    if (!levels) return false;
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->fw_dual)
            for (int l = 0; l < levels; l++)
                if (find(ts[i], l)) return true;
    return false;
}

bool tg__fw_any_level(tg_tensor *const *ts, int n, int level)
{
    for (int i = 0; i < n; i++)
        if (find(ts[i], level)) return true;
    return false;
}

/* Attaches `tangent` (owned) to t at `level`, replacing the one there, dropping the tangents
 * of levels no longer entered. 0, or -1 with an error (out of memory). */
static int store_id(tg_tensor *t, tg_tensor *tangent, uint64_t id)
{
    struct tg_autograd_meta *m = tg__autograd_meta_get(t);
    if (!m) {
        tg_release(tangent);
        return -1;
    }
    tg_tensor *dropped[TG_MAX_DUAL_LEVELS + 1];
    int ndropped = 0, n = tg__fw_levels();
    tg__meta_lock(m);
    struct tg__fw_grads *g = m->fw;
    if (!g && !(g = m->fw = calloc(1, sizeof *g))) {
        tg__meta_unlock(m);
        tg_release(tangent);
        return tg__fail("forward AD", "out of memory for a tangent");
    }
    int k = 0;
    for (int i = 0; i < g->n; i++) {
        if (g->e[i].level_id == id || !level_live(g->e[i].level_id, n))
            dropped[ndropped++] = g->e[i].tangent;
        else g->e[k++] = g->e[i];
    }
    g->e[k].level_id = id;
    g->e[k].tangent = tangent;
    g->n = k + 1;
    t->fw_dual = true;
    tg__meta_unlock(m);
    for (int i = 0; i < ndropped; i++) tg_release(dropped[i]);
    return 0;
}

static int store(tg_tensor *t, tg_tensor *tangent, int level)
{
    return store_id(t, tangent, level_ids[level]);
}

/* A copy of t's (level id, tangent) pairs, each tangent retained: *g is released with
 * tg_release of each entry. g->n is 0 when t has none. */
static void snapshot(const tg_tensor *t, struct tg__fw_grads *g)
{
    struct tg_autograd_meta *m = t->fw_dual ? t->autograd : NULL;
    g->n = 0;
    if (!m || !m->fw) return;
    tg__meta_lock(m);
    *g = *m->fw;
    for (int i = 0; i < g->n; i++) tg_retain(g->e[i].tangent);
    tg__meta_unlock(m);
}

int tg__fw_copy_detached(tg_tensor *dst, const tg_tensor *src)
{
    struct tg__fw_grads g;
    snapshot(src, &g);
    int n = tg__fw_levels(), rc = 0;
    for (int i = 0; i < g.n; i++) {
        tg_tensor *t = g.e[i].tangent;
        if (rc == 0 && level_live(g.e[i].level_id, n)) {
            /* Without keeping t alive: t's history may lead back to the node saving dst. */
            tg_tensor *a = tg__alias_without_owner(t);
            if (!a) a = tg__detached_alias(t);
            if (!a || tg__fw_copy_detached(a, t)) {
                tg_release(a);
                rc = -1;
            } else {
                rc = store_id(dst, a, g.e[i].level_id);
            }
        }
        tg_release(t);
    }
    return rc;
}

void tg__fw_grads_free(struct tg__fw_grads *g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) tg_release(g->e[i].tangent);
    free(g);
}

tg_tensor *tg__fw_output_alias(tg_tensor *r, int level)
{
    if (!r) return NULL;
    /* Shares r's storage and version counter without keeping r alive (a formula's operators
     * may save it, and r keeps the tangent they make). */
    tg_tensor *a = tg__alias_without_owner(r);
    if (!a) a = tg__detached_alias(r);
    if (!a) return NULL;
    struct tg_autograd_meta *rm = r->autograd;
    if (rm && rm->grad_fn) { /* r's history, so that the tangent's is r's too */
        struct tg_autograd_meta *m = tg__autograd_meta_get(a);
        if (!m) {
            tg_release(a);
            return NULL;
        }
        m->grad_fn = tg_autograd_node_retain(rm->grad_fn);
        m->output_nr = rm->output_nr;
        a->requires_grad = true;
    } else {
        a->requires_grad = r->requires_grad;
    }
    /* The tangents r already has at the other levels (nested levels' cross terms). */
    struct tg__fw_grads g;
    snapshot(r, &g);
    int rc = 0;
    for (int i = 0; i < g.n; i++) {
        if (rc == 0 && g.e[i].level_id != level_ids[level])
            rc = store_id(a, tg_retain(g.e[i].tangent), g.e[i].level_id);
        tg_release(g.e[i].tangent);
    }
    if (rc) {
        tg_release(a);
        return NULL;
    }
    return a;
}

int tg__fw_suspend(int level)
{
    int prev = (int)suspended;
    suspended |= 1u << level;
    return prev;
}

void tg__fw_resume(int prev) { suspended = (unsigned)prev; }

static tg_output_meta meta_of(const tg_tensor *t)
{
    tg_output_meta m = { .defined = true, .ndim = t->ndim, .dtype = t->dtype, .device = t->device };
    for (int64_t i = 0; i < t->ndim; i++) m.sizes[i] = t->sizes[i];
    return m;
}

tg_tensor *tg__fw_tangent_or_zeros(tg_tensor *t, int level)
{
    if (!t) return NULL;
    tg_tensor *g = find_any(t, level);
    if (g) return tg_retain(g);
    tg_output_meta m = meta_of(t);
    if (!tg_dtype_is_floating(m.dtype)) m.dtype = TG_FLOAT32; /* an index tensor's (unused) */
    return tg__autograd_zeros(&m);
}

tg_tensor_list tg__fw_tangents_or_zeros(tg_tensor_list l, int level)
{
    tg_tensor **data = calloc((size_t)(l.len > 0 ? l.len : 1), sizeof *data);
    if (!data) {
        tg__error("forward AD", "out of memory for a list of tangents");
        return (tg_tensor_list){ NULL, 0 };
    }
    for (int64_t i = 0; i < l.len; i++)
        if (l.data[i] && !(data[i] = tg__fw_tangent_or_zeros(l.data[i], level))) {
            tg_tensor_list_release((tg_tensor_list){ data, i });
            return (tg_tensor_list){ NULL, 0 };
        }
    return (tg_tensor_list){ data, l.len };
}

/* The tangent (owned) fitted to `out`: its shape (a formula may give a broadcastable one:
 * expanded), its dtype (converted). NULL with an error naming op when it cannot be. */
static bool broadcasts_to(const tg_tensor *t, const tg_tensor *out)
{
    if (t->ndim > out->ndim) return false;
    for (int64_t i = 1; i <= t->ndim; i++) {
        int64_t a = t->sizes[t->ndim - i], b = out->sizes[out->ndim - i];
        if (a != b && a != 1) return false;
    }
    return true;
}

static tg_tensor *fit(const char *op, const tg_tensor *out, tg_tensor *tangent)
{
    if (!tg__same_sizes(out, tangent) && broadcasts_to(tangent, out)) {
        /* The terms that ran were broadcast by the operator (add(x, b) with only b dual): the
         * full tangent, as a tensor of its own (an in-place op may write it later). */
        tg_output_meta m = meta_of(out);
        m.dtype = tangent->dtype;
        tg_tensor *z = tg__autograd_zeros(&m);
        tg_tensor *full = z ? tg__autograd_accumulate(z, tangent) : NULL;
        tg_release(z);
        tg_release(tangent);
        if (!full) return NULL;
        tangent = full;
    }
    if (!tg__same_sizes(out, tangent)) {
        char a[128], b[128];
        tg__error(op,
                  "forward AD: the tangent formula gave a tangent of size %s for an output of "
                  "size %s",
                  tg__shape_str(a, sizeof a, tangent->sizes, tangent->ndim),
                  tg__shape_str(b, sizeof b, out->sizes, out->ndim));
        tg_release(tangent);
        return NULL;
    }
    if (tangent->dtype == out->dtype) return tangent;
    tg_output_meta m = meta_of(out);
    tg_tensor *r = tg__autograd_sum_to(tangent, NULL, 0, &m);
    tg_release(tangent);
    return r;
}

int tg__fw_set(const char *op, tg_tensor *out, tg_tensor *tangent, int level)
{
    if (!tangent) return -1;
    if (!out || !tg_dtype_is_floating(out->dtype)) { /* integral outputs have no tangent */
        tg_release(tangent);
        return 0;
    }
    if (!(tangent = fit(op, out, tangent))) return -1;
    return store(out, tangent, level);
}

/* The tangent of view `self` inside its base's tangent `bt` (laid out like the base), or NULL
 * (no error) when the base's tangent has another layout. */
static tg_tensor *view_of_base_tangent(const tg_tensor *self, const tg_tensor *base, tg_tensor *bt)
{
    if (!tg__same_sizes(base, bt) || bt->dtype != self->dtype) return NULL;
    for (int64_t i = 0; i < base->ndim; i++)
        if (base->sizes[i] > 1 && base->strides[i] != bt->strides[i]) return NULL;
    return tg__make_view(bt, self->sizes, self->strides, self->ndim,
                         bt->storage_offset + (self->storage_offset - base->storage_offset));
}

int tg__fw_set_inplace(const char *op, tg_tensor *self, tg_tensor *tangent, int level)
{
    if (!tangent) return -1;
    if (!(tangent = fit(op, self, tangent))) return -1;
    tg_tensor *old = find_any(self, level);
    tg_tensor *base = self->view_base;
    if (!old && base && tg_dtype_is_floating(base->dtype)) {
        /* An in-place op gives a view a tangent: the base gets one (zeros where the view does
         * not reach), and the view's is the matching view of it, so both stay consistent. */
        tg_tensor *bt = find_any(base, level);
        if (!bt) {
            tg_output_meta m = meta_of(base);
            tg_tensor *z = tg__autograd_zeros(&m);
            if (!z || store(base, z, level)) {
                tg_release(tangent);
                return -1;
            }
            bt = z;
        }
        tg_tensor *v = view_of_base_tangent(self, base, bt);
        if (!v) {
            tg_release(tangent);
            return tg__fail(op, "forward AD: an in-place operation on a view whose base's tangent "
                                "is laid out differently from the base is not supported");
        }
        if (store(self, v, level)) {
            tg_release(tangent);
            return -1;
        }
        old = v;
    }
    if (!old) return store(self, tangent, level);
    if (old == tangent) { /* the formula wrote the old tangent in place (self_t.fill_(0)) */
        tg_release(tangent);
        return 0;
    }
    /* Written into the tangent in place: views of self share it (their tangents are views of
     * it), as PyTorch does. */
    int sc = tg__fw_suspend(level);
    tg_tensor *r = tg__autograd_copy_(old, tangent);
    tg__fw_resume(sc);
    tg_release(tangent);
    tg_release(r);
    return r ? 0 : -1;
}

int tg__fw_set_list(const char *op, tg_tensor_list outs, tg_tensor_list tangents, int level)
{
    if (!tangents.data) return -1;
    int rc = 0;
    if (tangents.len != outs.len)
        rc = tg__fail(op, "forward AD: the tangent formula gave %lld tensors for %lld outputs",
                      (long long)tangents.len, (long long)outs.len);
    for (int64_t i = 0; rc == 0 && i < outs.len; i++) {
        tg_tensor *t = tangents.data[i];
        if (t) rc = tg__fw_set(op, outs.data[i], tg_retain(t), level);
    }
    tg_tensor_list_release(tangents);
    return rc;
}

tg_tensor *tg__fw_add_term(tg_tensor *acc, tg_tensor *term, bool negate)
{
    if (!term) {
        tg_release(acc);
        return NULL;
    }
    tg_tensor *r =
        !acc ? (negate ? tg__autograd_neg(term) : tg_retain(term))
             : (negate ? tg__autograd_sub(acc, term) : tg__autograd_accumulate(acc, term));
    tg_release(acc);
    tg_release(term);
    return r;
}

int tg__fw_not_compiled(const char *op, const char *why)
{
    return tg__fail(op,
                    "forward AD is not implemented for '%s': tgen does not compile its "
                    "`result:` formula (%s)",
                    op, why);
}

int tg__fw_not_implemented(const char *op)
{
    return tg__fail(op,
                    "forward AD is not implemented for '%s' (derivatives.yaml has no `result:` "
                    "formula for it)",
                    op);
}

/* ------------------------------------------------------------------ make_dual, unpack_dual */

static int check_level(const char *op, int level)
{
    int n = tg__fw_levels();
    if (n == 0)
        return tg__fail(op, "Trying to create a dual Tensor for forward AD but no level exists, "
                            "make sure to enter_dual_level() first.");
    if (level < 0 || level >= n)
        return tg__fail(op, "dual level %d is not entered (levels 0 to %d are)", level, n - 1);
    return 0;
}

tg_tensor *tg_make_dual(tg_tensor *primal, tg_tensor *tangent, int level)
{
    const char *op = "make_dual";
    if (!primal || !tangent) return tg__error(op, "%s is NULL", primal ? "tangent" : "primal");
    if (check_level(op, level)) return NULL;
    if (!tg_dtype_is_floating(primal->dtype))
        return tg__error(op, "Expected primal to be floating point or complex, but got: %s",
                         tg__dtype_torch_name(primal->dtype));
    if (!tg_dtype_is_floating(tangent->dtype))
        return tg__error(op, "Expected tangent to be floating point or complex, but got: %s",
                         tg__dtype_torch_name(tangent->dtype));
    if (!tg__same_sizes(primal, tangent)) {
        char a[128], b[128];
        return tg__error(op,
                         "Trying to set a forward gradient that has a different size than that "
                         "of the original Tensor, this is not supported. Tensor is of size %s "
                         "while the given forward gradient is of size %s.",
                         tg__shape_str(a, sizeof a, primal->sizes, primal->ndim),
                         tg__shape_str(b, sizeof b, tangent->sizes, tangent->ndim));
    }
    if (tangent->dtype != primal->dtype)
        return tg__error(op, "the tangent's dtype (%s) differs from the primal's (%s)",
                         tg__dtype_torch_name(tangent->dtype), tg__dtype_torch_name(primal->dtype));
    if (tangent->device.type != primal->device.type ||
        tangent->device.index != primal->device.index)
        return tg__error(op, "the tangent is on another device than the primal");
    if (find_any(primal, level))
        return tg__error(op,
                         "Making a dual Tensor based on a Tensor that already has a forward "
                         "gradient at the same level %d is not supported.",
                         level);
    int sc = tg_scope_suspend();
    tg_tensor *v = tg__autograd_alias(primal);
    tg_scope_resume(sc);
    if (!v || store(v, tg_retain(tangent), level)) {
        tg_release(v);
        return NULL;
    }
    return tg_scope_track(v);
}

tg_dual tg_unpack_dual(tg_tensor *t, int level)
{
    tg_dual r = { NULL, NULL };
    if (!t) {
        tg__error("unpack_dual", "tensor is NULL");
        return r;
    }
    int n = tg__fw_levels();
    if (level < 0 || level >= n) {
        tg__error("unpack_dual", "dual level %d is not entered (%d levels are)", level, n);
        return r;
    }
    int sc = tg_scope_suspend(), fs = tg__fw_suspend(level);
    r.primal = tg__autograd_alias(t);
    tg__fw_resume(fs);
    tg_scope_resume(sc);
    if (!r.primal) return r;
    tg_tensor *g = find_any(t, level);
    r.primal = tg_scope_track(r.primal);
    r.tangent = g ? tg_scope_track(tg_retain(g)) : NULL;
    return r;
}
