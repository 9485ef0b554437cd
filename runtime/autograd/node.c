/* Backward nodes: allocation, reference counting and iterative destruction; next edges; the
 * AccumulateGrad node of a leaf; recording helpers used by the generated autograd kernels.
 *
 * Ownership (autograd.h): a tensor owns its grad_fn, a node owns its next nodes and its
 * saved tensors, an AccumulateGrad node owns its leaf. Dropping the last reference to the
 * head of a long chain would free the chain recursively (node -> next node, or node -> saved
 * tensor -> its grad_fn -> ...), so tg_autograd_node_release never frees while another release on
 * this thread is freeing: nodes whose count reached zero go on a thread-local worklist that
 * the outermost release drains in a loop. A chain of a million nodes is freed with constant
 * stack depth. */
#include "autograd/autograd_private.h"
#include "autograd/engine_ops.h"
#include "profiler/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ per-thread state */

/* Nodes created on this thread get increasing sequence numbers: among ready nodes the engine
 * runs the most recently created first (PyTorch's order, which frees memory early). */
static _Thread_local uint64_t next_sequence_nr;

/* The free worklist. `draining` is set while the outermost release frees nodes. */
static _Thread_local tg_node **free_list;
static _Thread_local size_t free_len, free_cap;
static _Thread_local bool draining;
static _Thread_local bool key_registered; /* the exit destructor is armed */

static pthread_key_t node_key;
static pthread_once_t node_key_once = PTHREAD_ONCE_INIT;
static void cache_clear(void);
static void node_thread_exit(void *unused)
{
    (void)unused;
    free(free_list);
    free_list = NULL;
    free_len = free_cap = 0;
    cache_clear();
    key_registered = false; /* a later free during thread exit re-arms the key */
}
static void node_key_init(void) { pthread_key_create(&node_key, node_thread_exit); }

/* ------------------------------------------------------------------ allocation */

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

/* Freed nodes (and metas: tg__ag_block_alloc) are kept per thread by size class (64-byte steps up to 512 bytes, at most
 * CACHE_MAX each) and reused: a small graph's nodes then cost no malloc. A node freed on
 * another thread simply joins that thread's cache. Each allocation starts with a 16-byte
 * prefix holding its class. Sanitizer builds do not cache, so use-after-free is caught. */
#define CLASS_BYTES 64
#define NUM_CLASSES 8
#if defined(__SANITIZE_ADDRESS__)
#define CACHE_MAX 0
#else
#define CACHE_MAX 64
#endif
#define PREFIX 16

typedef struct cached_block {
    struct cached_block *next;
} cached_block;
static _Thread_local cached_block *cache_head[NUM_CLASSES];
static _Thread_local int cache_len[NUM_CLASSES];

static void ensure_thread_key(void)
{
    if (key_registered) return;
    pthread_once(&node_key_once, node_key_init);
    pthread_setspecific(node_key, &node_key);
    key_registered = true;
}

static void cache_clear(void)
{
    for (int c = 0; c < NUM_CLASSES; c++) {
        while (cache_head[c]) {
            cached_block *b = cache_head[c];
            cache_head[c] = b->next;
            free(b);
        }
        cache_len[c] = 0;
    }
}

void *tg__ag_block_alloc(size_t total)
{
    size_t cls = (total + PREFIX - 1) / CLASS_BYTES;
    char *p;
    if (cls < NUM_CLASSES && cache_head[cls]) {
        p = (char *)cache_head[cls];
        cache_head[cls] = cache_head[cls]->next;
        cache_len[cls]--;
    } else {
        p = malloc(cls < NUM_CLASSES ? (cls + 1) * CLASS_BYTES : total + PREFIX);
        if (!p) return NULL;
    }
    *(size_t *)p = cls;
    return p + PREFIX;
}

void tg__ag_block_free(void *q)
{
    char *p = (char *)q - PREFIX;
    size_t cls = *(size_t *)p;
    if (cls < NUM_CLASSES && cache_len[cls] < CACHE_MAX) {
        ensure_thread_key();
        ((cached_block *)p)->next = cache_head[cls];
        cache_head[cls] = (cached_block *)p;
        cache_len[cls]++;
        return;
    }
    free(p);
}

tg_node *tg_autograd_node_new(size_t size, const tg_node_vtable *vt, int num_outputs, int num_next)
{
    if (size < sizeof(tg_node) || num_outputs < 0 || num_next < 0)
        return tg__error("autograd", "invalid node layout for %s", vt ? vt->name : "?");
    size_t edges_at = align16(size);
    size_t outputs_at = edges_at + align16((size_t)num_next * sizeof(tg_edge));
    /* Only the first ndim sizes of each output are ever read, but the struct is zeroed
     * whole: it is small and generated code may copy it. */
    size_t total = outputs_at + (size_t)num_outputs * sizeof(tg_output_meta);
    char *p = tg__ag_block_alloc(total);
    if (!p) return tg__error("autograd", "out of memory allocating a %s node", vt->name);
    memset(p, 0, total);
    tg_node *n = (tg_node *)p;
    n->refcount = 1;
    n->vt = vt;
    n->sequence_nr = next_sequence_nr++;
    /* The forward end of the profiler's forward -> backward link (the engine records the
     * other end with the same pair). A leaf's AccumulateGrad has no forward op. */
    if (TG__UNLIKELY(tg__prof_active()) && vt != &tg__accumulate_vtable)
        n->prof_thread = tg__prof_node_created(n->sequence_nr);
    n->num_outputs = num_outputs;
    n->num_next = num_next;
    n->next = num_next ? (tg_edge *)(p + edges_at) : NULL;
    n->outputs = num_outputs ? (tg_output_meta *)(p + outputs_at) : NULL;
    return n;
}

tg_node *tg_autograd_node_retain(tg_node *n)
{
    if (n) tg__ref_inc(&n->refcount);
    return n;
}

/* Frees one node whose count is zero: its saved values, hooks and, for AccumulateGrad, its
 * leaf. Whatever those releases drop to zero is queued, not freed here. */
static void node_destroy(tg_node *n)
{
    if (tg__node_is_accumulate(n)) {
        tg__accumulate_node *a = (tg__accumulate_node *)n;
        struct tg_autograd_meta *m = a->variable->autograd;
        tg__meta_lock(m);
        if (m->grad_accumulator == n) m->grad_accumulator = NULL;
        tg__meta_unlock(m);
        tg_release(a->variable);
    } else if (n->vt->release_saved) {
        n->vt->release_saved(n);
    }
    tg__hook_list_free(n->pre_hooks);
    for (int i = 0; i < n->num_next; i++)
        if (n->next[i].node) tg_autograd_node_release(n->next[i].node);
    tg__ag_block_free(n);
}

static bool free_list_push(tg_node *n)
{
    if (free_len == free_cap) {
        ensure_thread_key();
        size_t cap = free_cap ? free_cap * 2 : 64;
        tg_node **l = realloc(free_list, cap * sizeof *l);
        if (!l) return false;
        free_list = l;
        free_cap = cap;
    }
    free_list[free_len++] = n;
    return true;
}

void tg_autograd_node_release(tg_node *n)
{
    if (!n) return;
    /* An AccumulateGrad node can be revived through its leaf's weak pointer by another
     * thread (tg__grad_accumulator), so its count always takes the atomic path. */
    bool last = tg__node_is_accumulate(n)
                    ? __atomic_sub_fetch(&n->refcount, 1, __ATOMIC_ACQ_REL) == 0
                    : tg__ref_dec(&n->refcount);
    if (!last) return;
    if (draining) {
        if (free_list_push(n)) return;
        /* Out of memory for the worklist: free right here (recursion, but only in OOM). */
        node_destroy(n);
        return;
    }
    draining = true;
    node_destroy(n);
    while (free_len) node_destroy(free_list[--free_len]);
    draining = false;
    if (free_cap > 4096) { /* do not keep a big list after a huge graph */
        free(free_list);
        free_list = NULL;
        free_cap = 0;
    }
}

/* ------------------------------------------------------------------ hook lists */

void tg__hook_list_free(struct tg_hook_list *h)
{
    while (h) {
        struct tg_hook_list *next = h->next;
        free(h);
        h = next;
    }
}

int tg__hook_list_append(struct tg_hook_list **list, tg_grad_hook fn, void *ctx, tg_tensor *retain,
                         int32_t input_nr)
{
    struct tg_hook_list *h = malloc(sizeof *h);
    if (!h) return tg__fail("register_hook", "out of memory");
    *h = (struct tg_hook_list){ NULL, fn, ctx, retain, input_nr };
    while (*list) list = &(*list)->next;
    *list = h;
    return 0;
}

void tg__hook_list_remove_retain(struct tg_hook_list **list, const tg_tensor *t)
{
    for (; *list; list = &(*list)->next) {
        if ((*list)->retain == t) {
            struct tg_hook_list *h = *list;
            *list = h->next;
            free(h);
            return;
        }
    }
}

/* ------------------------------------------------------------------ AccumulateGrad */

const tg_node_vtable tg__accumulate_vtable = {
    .name = "AccumulateGrad",
    .apply = tg__accumulate_apply,
    .release_saved = NULL,
};

static void output_meta_set(tg_output_meta *m, const tg_tensor *t)
{
    m->defined = true;
    m->ndim = t->ndim;
    for (int64_t i = 0; i < t->ndim; i++) m->sizes[i] = t->sizes[i];
    m->dtype = t->dtype;
    m->device = t->device;
}

/* Takes a reference to n unless its count already reached zero (it is being freed). */
static bool node_try_retain(tg_node *n)
{
    int64_t c = __atomic_load_n(&n->refcount, __ATOMIC_RELAXED);
    while (c > 0)
        if (__atomic_compare_exchange_n(&n->refcount, &c, c + 1, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return true;
    return false;
}

tg_node *tg__grad_accumulator(tg_tensor *t)
{
    struct tg_autograd_meta *m = tg__autograd_meta_get(t);
    if (!m) return NULL;
    tg__meta_lock(m);
    tg_node *n = m->grad_accumulator;
    if (n && node_try_retain(n)) {
        tg__meta_unlock(m);
        return n;
    }
    n = tg_autograd_node_new(sizeof(tg__accumulate_node), &tg__accumulate_vtable, 1, 0);
    if (n) {
        n->sequence_nr = UINT64_MAX; /* accumulate as soon as the gradient is ready */
        ((tg__accumulate_node *)n)->variable = tg_retain(t);
        output_meta_set(&n->outputs[0], t);
        m->grad_accumulator = n;
    }
    tg__meta_unlock(m);
    return n;
}

/* ------------------------------------------------------------------ recording */

void tg_autograd_node_set_next_edge(tg_node *n, int i, const tg_tensor *t)
{
    tg_edge *e = &n->next[i];
    if (e->node) tg_autograd_node_release(e->node);
    *e = (tg_edge){ NULL, 0 };
    if (!t || !t->requires_grad) return;
    if (t->autograd && t->autograd->grad_fn) {
        e->node = tg_autograd_node_retain(t->autograd->grad_fn);
        e->input_nr = t->autograd->output_nr;
        return;
    }
    /* A leaf: gradients go to its accumulator. On OOM the edge stays empty and an error is
     * recorded, which the autograd kernel's caller sees. */
    e->node = tg__grad_accumulator((tg_tensor *)t);
}

bool tg_autograd_any_requires_grad(tg_tensor *const *ts, int n)
{
    if (!tg__grad_enabled_tls) return false;
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->requires_grad) return true;
    return false;
}

void tg_autograd_set_history(tg_tensor *t, tg_node *n, int output_nr)
{
    struct tg_autograd_meta *m = tg__autograd_meta_get(t);
    if (!m) return;
    tg_node *old = m->grad_fn;
    if (old == n && m->output_nr == output_nr) return;
    m->grad_fn = tg_autograd_node_retain(n);
    m->output_nr = output_nr;
    t->requires_grad = true;
    output_meta_set(&n->outputs[output_nr], t);
    /* retain_grad follows the tensor to its new history (an in-place op rebased it). */
    if (m->retains_grad) {
        if (old) tg__hook_list_remove_retain(&old->pre_hooks, t);
        if (tg__hook_list_append(&n->pre_hooks, NULL, NULL, t, output_nr)) m->retains_grad = false;
    }
    if (old) tg_autograd_node_release(old);
}

int tg_autograd_check_inplace(const char *op, const tg_tensor *t)
{
    if (!t || !tg__grad_enabled_tls) return 0;
    bool leaf = !t->autograd || !t->autograd->grad_fn;
    if (t->view_base) {
        const tg_tensor *b = t->view_base;
        bool base_leaf = !b->autograd || !b->autograd->grad_fn;
        if (b->requires_grad && base_leaf)
            return tg__fail(op, "a view of a leaf Variable that requires grad is being used in an "
                                "in-place operation.");
        if (t->requires_grad || b->requires_grad)
            return tg__fail(op, "in-place operations on views of tensors that require grad are not "
                                "supported by autograd; clone() the view first or use the "
                                "out-of-place operation");
        return 0;
    }
    if (leaf && t->requires_grad)
        return tg__fail(op, "a leaf Variable that requires grad is being used in an in-place "
                            "operation.");
    return 0;
}

int tg_autograd_check_out(const char *op, tg_tensor *const *ts, int n)
{
    if (tg__fw_any(ts, n))
        return tg__fail(NULL,
                        "Trying to use forward AD with %s_out that does not support it because it "
                        "is an out= function",
                        op);
    if (!tg_autograd_any_requires_grad(ts, n)) return 0;
    return tg__fail(NULL,
                    "%s(): functions with out=... arguments don't support automatic "
                    "differentiation, but one of the arguments requires grad.",
                    op);
}

int tg_autograd_not_implemented(const char *what)
{
    return tg__fail(NULL, "the derivative for '%s' is not implemented.", what);
}

/* ------------------------------------------------------------------ inspection */

tg_tensor *tg_autograd_fit_grad(const tg_node *node, int i, tg_tensor *g)
{
    const tg_output_meta *m = &node->next[i].node->outputs[node->next[i].input_nr];
    int64_t numel = 1;
    for (int64_t k = 0; k < m->ndim; k++) numel *= m->sizes[k];
    bool same = g->ndim == m->ndim;
    for (int64_t k = 0; same && k < m->ndim; k++) same = g->sizes[k] == m->sizes[k];
    if (numel != 0 || same) return g;
    tg_release(g);
    return tg__autograd_zeros(m);
}

const char *tg_node_name(const tg_node *n) { return n ? n->vt->name : NULL; }

int tg_node_num_next(const tg_node *n) { return n ? n->num_next : 0; }

tg_node *tg_node_next(const tg_node *n, int i, int *input_nr)
{
    if (!n || i < 0 || i >= n->num_next) {
        if (input_nr) *input_nr = 0;
        if (n)
            tg__error("node_next", "index %d out of range for %s with %d next functions", i,
                      n->vt->name, n->num_next);
        return NULL;
    }
    if (input_nr) *input_nr = n->next[i].input_nr;
    return n->next[i].node;
}
