/* The backward engine: tg_backward_fn and tg_grad_fn, and AccumulateGrad's apply.
 *
 * One backward is a "task" on the calling thread:
 *   1. discovery: an iterative depth-first walk from the roots' nodes counts, for every
 *      reachable node, the edges that lead into it (its dependencies);
 *   2. for tg_grad, a post-order pass marks which nodes must run (those from which a
 *      requested input's gradient can be reached) and which nodes' inputs are captured;
 *   3. execution: nodes whose dependencies are all satisfied wait in a max-heap on
 *      sequence_nr (the most recently created runs first); running one gathers its input
 *      buffer (zeros for outputs that got no gradient), runs hooks, calls apply, checks and
 *      reduces each produced gradient to the metadata the next node expects, adds it to that
 *      node's buffer and decrements its dependencies.
 *
 * All per-task state (entries, hash table, buffers, stacks, heap) lives in one reusable
 * per-thread workspace, so a small graph's backward makes no allocation of its own; a nested
 * backward (from a hook or an apply) gets a fresh workspace. Nothing is shared between
 * threads except the graph itself, so backwards of different graphs run concurrently. */
#include "autograd/autograd_private.h"
#include "autograd/engine_ops.h"
#include "profiler/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ workspace */

typedef struct entry {
    tg_node *node;
    int32_t deps;  /* edges from not-yet-run nodes into this one */
    int32_t buf;   /* first of node->num_outputs slots in ws->bufs, or -1 */
    bool needed;   /* runs apply (always, for tg_backward) */
    bool captured; /* tg_grad: some input's gradient is read from its buffer */
} entry;

typedef struct frame {
    int32_t e, next;
} frame;

typedef struct capture {
    tg_node *node; /* owned reference */
    int32_t input_nr;
    int32_t entry;   /* -1: not reached from the roots */
    tg_tensor *grad; /* owned */
} capture;

typedef struct workspace {
    bool in_use;
    entry *entries;
    int32_t nentries, capentries;
    int32_t *table;
    uint32_t table_mask; /* entry index or -1 */
    tg_tensor **bufs;
    int64_t nbufs, capbufs;
    frame *stack;
    int32_t capstack;
    int32_t *order;
    int32_t caporder; /* post-order (tg_grad only) */
    int32_t *heap;
    int32_t nheap, capheap;
} workspace;

typedef struct task {
    workspace *ws;
    bool keep_graph;
    bool grad_mode; /* create_graph */
    capture *caps;  /* tg_grad inputs, or NULL */
    int ncaps;
} task;

static _Thread_local workspace *cached_ws;
static pthread_key_t ws_key;
static pthread_once_t ws_key_once = PTHREAD_ONCE_INIT;

static void ws_free(workspace *ws)
{
    if (!ws) return;
    free(ws->entries);
    free(ws->table);
    free(ws->bufs);
    free(ws->stack);
    free(ws->order);
    free(ws->heap);
    free(ws);
}
static void ws_thread_exit(void *unused)
{
    (void)unused;
    ws_free(cached_ws);
    cached_ws = NULL;
}
static void ws_key_init(void) { pthread_key_create(&ws_key, ws_thread_exit); }

#define GROW32(ws, arr, cap, need) \
    grow_i32((void **)&(ws)->arr, &(ws)->cap, (need), sizeof *(ws)->arr)
static inline bool grow_i32(void **p, int32_t *cap, int64_t need, size_t sz)
{
    if (need <= *cap) return true; /* the common case, several times a node: no call */
    int64_t c = *cap;
    if (!tg__array_reserve(p, &c, need, sz, 16)) return false;
    if (c > INT32_MAX) return false;
    *cap = (int32_t)c;
    return true;
}

static workspace *ws_acquire(void)
{
    workspace *ws = cached_ws;
    if (ws && !ws->in_use) {
        ws->in_use = true;
        return ws;
    }
    ws = calloc(1, sizeof *ws);
    if (!ws) return tg__error("backward", "out of memory");
    ws->in_use = true;
    if (!cached_ws) {
        pthread_once(&ws_key_once, ws_key_init);
        pthread_setspecific(ws_key, &ws_key);
        cached_ws = ws;
    }
    return ws;
}

/* Resets for reuse; a workspace grown by a huge graph gives its memory back. */
static void ws_release(workspace *ws)
{
    for (int64_t i = 0; i < ws->nbufs; i++) tg_release(ws->bufs[i]);
    ws->nbufs = ws->nentries = ws->nheap = 0;
    ws->in_use = false;
    if (ws != cached_ws || ws->capentries > 4096) {
        bool cached = ws == cached_ws;
        ws_free(ws);
        if (cached) cached_ws = NULL;
        return;
    }
    if (ws->table) memset(ws->table, 0xff, ((size_t)ws->table_mask + 1) * sizeof *ws->table);
}

/* ------------------------------------------------------------------ node table */

static inline uint32_t hash_node(const tg_node *n, uint32_t mask)
{
    uint64_t h = (uint64_t)(uintptr_t)n * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & mask;
}

static int32_t table_find(const workspace *ws, const tg_node *n)
{
    for (uint32_t i = hash_node(n, ws->table_mask);; i = (i + 1) & ws->table_mask) {
        int32_t e = ws->table[i];
        if (e < 0 || ws->entries[e].node == n) return e;
    }
}

static bool table_rehash(workspace *ws, uint32_t size)
{
    int32_t *t = malloc((size_t)size * sizeof *t);
    if (!t) return false;
    memset(t, 0xff, (size_t)size * sizeof *t);
    free(ws->table);
    ws->table = t;
    ws->table_mask = size - 1;
    for (int32_t e = 0; e < ws->nentries; e++) {
        uint32_t i = hash_node(ws->entries[e].node, ws->table_mask);
        while (t[i] >= 0) i = (i + 1) & ws->table_mask;
        t[i] = e;
    }
    return true;
}

/* The entry of n, added when missing (*added set). -1 on OOM (error recorded). */
static int32_t entry_get(workspace *ws, tg_node *n, bool *added)
{
    *added = false;
    if (!ws->table && !table_rehash(ws, 16)) goto oom;
    uint32_t i = hash_node(n, ws->table_mask);
    for (;; i = (i + 1) & ws->table_mask) {
        int32_t e = ws->table[i];
        if (e < 0) break;
        if (ws->entries[e].node == n) return e;
    }
    if (!GROW32(ws, entries, capentries, ws->nentries + 1)) goto oom;
    int32_t e = ws->nentries++;
    ws->entries[e] = (entry){ n, 0, -1, true, false };
    ws->table[i] = e;
    *added = true;
    /* Keep the load factor under 1/2. */
    if ((uint32_t)ws->nentries * 2 > ws->table_mask + 1 &&
        !table_rehash(ws, (ws->table_mask + 1) * 2))
        goto oom;
    return e;
oom:
    tg__error("backward", "out of memory walking the graph");
    return -1;
}

/* ------------------------------------------------------------------ ready heap */

static inline uint64_t seq_of(const workspace *ws, int32_t e)
{
    return ws->entries[e].node->sequence_nr;
}

static bool heap_push(workspace *ws, int32_t e)
{
    if (!GROW32(ws, heap, capheap, ws->nheap + 1)) {
        tg__error("backward", "out of memory");
        return false;
    }
    int32_t i = ws->nheap++;
    uint64_t s = seq_of(ws, e);
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (seq_of(ws, ws->heap[p]) >= s) break;
        ws->heap[i] = ws->heap[p];
        i = p;
    }
    ws->heap[i] = e;
    return true;
}

static int32_t heap_pop(workspace *ws)
{
    int32_t top = ws->heap[0];
    int32_t last = ws->heap[--ws->nheap];
    int32_t n = ws->nheap, i = 0;
    uint64_t s = n ? seq_of(ws, last) : 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && seq_of(ws, ws->heap[c + 1]) > seq_of(ws, ws->heap[c])) c++;
        if (seq_of(ws, ws->heap[c]) <= s) break;
        ws->heap[i] = ws->heap[c];
        i = c;
    }
    if (n) ws->heap[i] = last;
    return top;
}

/* ------------------------------------------------------------------ discovery */

/* Counts dependencies of every node reachable from entries [0, nroots). For tg_grad also
 * records the post-order in ws->order. 0 or -1 + error. */
static int discover(task *tk, int32_t nroots)
{
    workspace *ws = tk->ws;
    int32_t sp = 0, norder = 0;
    for (int32_t r = 0; r < nroots; r++) {
        if (!GROW32(ws, stack, capstack, sp + 1)) goto oom;
        ws->stack[sp++] = (frame){ r, 0 };
        while (sp) {
            frame *f = &ws->stack[sp - 1];
            tg_node *n = ws->entries[f->e].node;
            if (f->next < n->num_next) {
                tg_node *m = n->next[f->next++].node;
                if (!m) continue;
                bool added;
                int32_t e = entry_get(ws, m, &added);
                if (e < 0) return -1;
                ws->entries[e].deps++;
                if (added) {
                    if (!GROW32(ws, stack, capstack, sp + 1)) goto oom;
                    ws->stack[sp++] = (frame){ e, 0 };
                }
                continue;
            }
            if (tk->caps) {
                if (!GROW32(ws, order, caporder, norder + 1)) goto oom;
                ws->order[norder++] = f->e;
            }
            sp--;
        }
    }
    if (!tk->caps) return 0;
    /* tg_grad: a node runs only when a captured gradient lies below it. */
    for (int c = 0; c < tk->ncaps; c++) {
        int32_t e = table_find(ws, tk->caps[c].node);
        tk->caps[c].entry = e;
        if (e >= 0) ws->entries[e].captured = true;
    }
    for (int32_t k = 0; k < norder; k++) {
        entry *en = &ws->entries[ws->order[k]];
        bool need = false;
        for (int j = 0; j < en->node->num_next && !need; j++) {
            tg_node *m = en->node->next[j].node;
            if (!m) continue;
            const entry *x = &ws->entries[table_find(ws, m)];
            need = x->needed || x->captured;
        }
        en->needed = need;
    }
    return 0;
oom:
    tg__error("backward", "out of memory walking the graph");
    return -1;
}

/* ------------------------------------------------------------------ gradients */

static bool same_shape(const tg_tensor *t, const tg_output_meta *m)
{
    if (t->ndim != m->ndim) return false;
    for (int64_t i = 0; i < m->ndim; i++)
        if (t->sizes[i] != m->sizes[i]) return false;
    return true;
}

/* Checks gradient g (owned) that `fn` produced at index j against the metadata its consumer
 * expects, reducing a broadcast gradient and casting its dtype. Returns the gradient to use
 * (owned), or NULL + error (g released). */
static tg_tensor *validate_grad(const tg_node *fn, int j, tg_tensor *g, const tg_output_meta *m)
{
    bool shape_ok = same_shape(g, m);
    if (TG__LIKELY(shape_ok && g->dtype == m->dtype && g->device.type == m->device.type)) return g;
    char a[256], b[256];
    const char *name = fn ? fn->vt->name : "backward";
    if (g->device.type != m->device.type || g->device.index != m->device.index) {
        tg__error(NULL,
                  "Function %s returned an invalid gradient at index %d - expected "
                  "device %s:%d but got %s:%d",
                  name, j, tg__device_type_name((tg_device_type)m->device.type), m->device.index,
                  tg__device_type_name((tg_device_type)g->device.type), g->device.index);
        tg_release(g);
        return NULL;
    }
    if (!shape_ok && !tg__expandable_to(m->sizes, m->ndim, g->sizes, g->ndim)) {
        tg__error(NULL,
                  "Function %s returned an invalid gradient at index %d - got %s but "
                  "expected shape compatible with %s",
                  name, j, tg__shape_str(a, sizeof a, g->sizes, g->ndim),
                  tg__shape_str(b, sizeof b, m->sizes, m->ndim));
        tg_release(g);
        return NULL;
    }
    /* The dimensions to sum: g's leading extra ones and those where m has size 1. */
    int64_t dims[TG_MAX_DIMS], nd = 0, lead = g->ndim - m->ndim;
    for (int64_t i = 0; i < g->ndim; i++)
        if (i < lead || (g->sizes[i] != m->sizes[i - lead] && m->sizes[i - lead] == 1))
            dims[nd++] = i;
    tg_tensor *r = tg__autograd_sum_to(g, dims, nd, m);
    tg_release(g);
    return r;
}

/* Adds gradient g (owned) into input `input_nr` of entry e's buffer. 0 or -1 + error. */
static int buffer_add(workspace *ws, int32_t e, int32_t input_nr, tg_tensor *g)
{
    entry *en = &ws->entries[e];
    if (en->buf < 0) {
        int k = en->node->num_outputs;
        if (!tg__array_reserve((void **)&ws->bufs, &ws->capbufs, ws->nbufs + k, sizeof *ws->bufs,
                               64)) {
            tg_release(g);
            return tg__fail("backward", "out of memory");
        }
        en->buf = (int32_t)ws->nbufs;
        for (int i = 0; i < k; i++) ws->bufs[ws->nbufs++] = NULL;
    }
    tg_tensor **slot = &ws->bufs[en->buf + input_nr];
    if (!*slot) {
        *slot = g;
        return 0;
    }
    tg_tensor *sum = tg__autograd_accumulate(*slot, g);
    tg_release(g);
    tg_release(*slot);
    *slot = sum;
    return sum ? 0 : -1;
}

/* A copy of g with its own storage, for a .grad that must not alias a tensor someone else
 * holds. With grad mode on (create_graph) the copy is made by an op, so it has history. */
static tg_tensor *grad_copy(tg_tensor *g, const tg_output_meta *m)
{
    if (g->device.type == TG_CPU && !tg__grad_enabled_tls) {
        tg_tensor *c = tg__empty("AccumulateGrad", g->sizes, g->ndim, g->dtype, g->device);
        if (c && tg__copy_into("AccumulateGrad", c, g) != 0) {
            tg_release(c);
            return NULL;
        }
        return c;
    }
    tg_tensor *z = tg__autograd_zeros(m);
    tg_tensor *c = z ? tg__autograd_accumulate(z, g) : NULL;
    tg_release(z);
    return c;
}

/* ------------------------------------------------------------------ AccumulateGrad */

/* g may become var's .grad itself: only the engine holds it, it owns its storage, and it has
 * var's layout. */
static bool stealable(const tg_tensor *g, const tg_tensor *var, bool graph)
{
    if (__atomic_load_n(&g->refcount, __ATOMIC_ACQUIRE) != 1 || g->view_base ||
        __atomic_load_n(&g->storage->refcount, __ATOMIC_ACQUIRE) != 1)
        return false;
    if (g->dtype != var->dtype || g->device.type != var->device.type || g->ndim != var->ndim)
        return false;
    for (int64_t i = 0; i < g->ndim; i++)
        if (g->sizes[i] != var->sizes[i]) return false;
    return (graph || !g->requires_grad) && tg__is_contiguous(g);
}

int tg__accumulate_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    (void)out;
    tg_tensor *var = ((tg__accumulate_node *)n)->variable, *g = grads[0];
    struct tg_autograd_meta *m = var->autograd;
    bool graph = tg__grad_enabled_tls;
    tg_tensor *drop = NULL;
    int rc = 0;
    /* The lock serialises concurrent backwards accumulating into one leaf (PyTorch holds a
     * mutex here too). */
    tg__meta_lock(m);
    tg_tensor *old = m->grad;
    if (!old) {
        tg_tensor *c = stealable(g, var, graph) ? tg_retain(g) : grad_copy(g, &n->outputs[0]);
        if (c) m->grad = c;
        else rc = -1;
    } else if (!graph && old->device.type == TG_CPU && !old->requires_grad &&
               tg__is_contiguous(old)) {
        /* In place, so that whoever holds .grad (an optimizer) sees the sum. */
        tg_tensor *sum = tg__autograd_accumulate(old, g);
        if (!sum || tg__copy_into("AccumulateGrad", old, sum) != 0) rc = -1;
        tg_release(sum);
    } else {
        tg_tensor *sum = tg__autograd_accumulate(old, g);
        if (sum) {
            m->grad = sum;
            drop = old;
        } else {
            rc = -1;
        }
    }
    tg__meta_unlock(m);
    tg_release(drop);
    return rc;
}

/* ------------------------------------------------------------------ hooks */

static tg_tensor *run_hooks(const struct tg_hook_list *h, bool filter, int32_t input_nr,
                            tg_tensor *g)
{
    for (; h; h = h->next) {
        if (!h->fn || (filter && h->input_nr != input_nr)) continue;
        tg_tensor *r = h->fn(g, h->ctx);
        if (r) {
            tg_release(g);
            g = r;
        }
    }
    return g;
}

/* retain_grad: t.grad = g (a copy), or t.grad + g. 0 or -1 + error. */
static int retain_into(tg_tensor *t, tg_tensor *g, const tg_output_meta *meta)
{
    struct tg_autograd_meta *m = t->autograd;
    tg_tensor *old = tg__autograd_meta_grad(m);
    tg_tensor *v = old ? tg__autograd_accumulate(old, g) : grad_copy(g, meta);
    tg_release(old);
    if (!v) return -1;
    tg__meta_lock(m);
    tg_tensor *prev = m->grad;
    m->grad = v;
    tg__meta_unlock(m);
    tg_release(prev);
    return 0;
}

/* Tensor hooks, then retain_grad, on the gradients in slots[0, num_outputs). */
static int run_pre_hooks(tg_node *n, tg_tensor **slots)
{
    if (tg__node_is_accumulate(n)) {
        struct tg_autograd_meta *m = ((tg__accumulate_node *)n)->variable->autograd;
        if (m->hooks && slots[0]) slots[0] = run_hooks(m->hooks, false, 0, slots[0]);
        return 0;
    }
    if (!n->pre_hooks) return 0;
    for (int i = 0; i < n->num_outputs; i++)
        if (slots[i]) slots[i] = run_hooks(n->pre_hooks, true, i, slots[i]);
    for (const struct tg_hook_list *h = n->pre_hooks; h; h = h->next) {
        if (!h->retain || !slots[h->input_nr]) continue;
        if (retain_into(h->retain, slots[h->input_nr], &n->outputs[h->input_nr])) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ execution */

#define SMALL 8

/* Sends out[j] (owned) along n's edge j and counts the edge as done. 0 or -1 + error. */
static int propagate(task *tk, tg_node *n, int j, tg_tensor *g)
{
    workspace *ws = tk->ws;
    tg_edge edge = n->next[j];
    if (!edge.node) {
        tg_release(g);
        return 0;
    }
    int32_t te = table_find(ws, edge.node);
    entry *t = &ws->entries[te];
    if (g && (t->needed || t->captured)) {
        g = validate_grad(n, j, g, &edge.node->outputs[edge.input_nr]);
        if (!g || buffer_add(ws, te, edge.input_nr, g)) return -1;
        t = &ws->entries[te];
    } else {
        tg_release(g);
    }
    if (--t->deps == 0 && (t->needed || t->captured) && !heap_push(ws, te)) return -1;
    return 0;
}

static int run_node(task *tk, int32_t e)
{
    workspace *ws = tk->ws;
    entry en = ws->entries[e];
    tg_node *n = en.node;
    int k = n->num_outputs, nn = n->num_next;
    tg_tensor **slots = en.buf >= 0 ? &ws->bufs[en.buf] : NULL;
    bool any = false;
    for (int i = 0; slots && i < k; i++) any |= slots[i] != NULL;
    if (any && run_pre_hooks(n, slots)) return -1;
    for (int c = 0; c < tk->ncaps; c++)
        if (tk->caps[c].entry == e && slots)
            tk->caps[c].grad = tg_retain(slots[tk->caps[c].input_nr]);
    if (!en.needed) return 0; /* tg_grad: nothing below needs it (slots freed later) */

    int rc = 0;
    if (any) {
        tg_tensor *gbuf[SMALL], *obuf[SMALL];
        tg_tensor **grads = k <= SMALL ? gbuf : calloc((size_t)k, sizeof *grads);
        tg_tensor **out = nn <= SMALL ? obuf : calloc((size_t)nn, sizeof *out);
        if (!grads || !out) {
            if (grads != gbuf) free(grads);
            if (out != obuf) free(out);
            return tg__fail("backward", "out of memory");
        }
        /* Move the gradients out of the buffer: AccumulateGrad may then adopt one as .grad. */
        for (int i = 0; i < k; i++) {
            grads[i] = slots[i];
            slots[i] = NULL;
            /* Zeros for an output nothing flowed back to; an output the forward left
             * undefined stays NULL, as PyTorch's undefined gradient. */
            if (!grads[i] && n->outputs[i].defined &&
                !(grads[i] = tg__autograd_zeros(&n->outputs[i])))
                rc = -1;
        }
        for (int j = 0; j < nn; j++) out[j] = NULL;
        if (rc == 0 && TG__UNLIKELY(tg__prof_active())) {
            int64_t token = tg__prof_begin_backward(n->vt->name, n->sequence_nr, n->prof_thread);
            rc = n->vt->apply(n, grads, out);
            tg__prof_end(token);
        } else if (rc == 0) {
            rc = n->vt->apply(n, grads, out);
        }
        if (rc && !tg__has_error())
            tg__error(NULL, "Function %s failed without an error message", n->vt->name);
        for (int i = 0; i < k; i++) tg_release(grads[i]);
        for (int j = 0; j < nn; j++) {
            if (rc == 0) rc = propagate(tk, n, j, out[j]);
            else tg_release(out[j]);
        }
        if (grads != gbuf) free(grads);
        if (out != obuf) free(out);
    } else {
        /* No gradient reached this node: nothing flows on, but its edges are done. */
        for (int j = 0; j < nn && rc == 0; j++) rc = propagate(tk, n, j, NULL);
    }
    if (!tk->keep_graph && !tg__node_is_accumulate(n)) {
        if (n->vt->release_saved) n->vt->release_saved(n);
        n->saved_released = true;
    }
    return rc;
}

/* ------------------------------------------------------------------ tasks */

static char *size_str(char *buf, size_t cap, const tg_tensor *t)
{
    char s[256];
    snprintf(buf, cap, "torch.Size(%s)", tg__shape_str(s, sizeof s, t->sizes, t->ndim));
    return buf;
}

/* The edge that receives t's gradient: its grad_fn, or its accumulator if a leaf. A new
 * reference, or NULL + error. */
static tg_node *gradient_edge(tg_tensor *t, int32_t *input_nr)
{
    *input_nr = 0;
    if (t->autograd && t->autograd->grad_fn) {
        *input_nr = t->autograd->output_nr;
        return tg_autograd_node_retain(t->autograd->grad_fn);
    }
    return tg__grad_accumulator(t);
}

/* ------------------------------------------------------------------ the engine's entry */

/* What tg_backward and tg_grad ask of the engine: outputs[i] is seeded with grad_outputs[i]
 * (or ones when there are none). With inputs (tg_grad), their gradients are captured into
 * grads_out instead of being accumulated into leaves. */
typedef struct request {
    const char *op; /* "backward" or "grad", for messages */
    tg_tensor *const *outputs;
    int nout;
    tg_tensor *const *grad_outputs; /* ngrad_outputs == 0: implicit ones */
    int ngrad_outputs;
    tg_tensor *const *inputs; /* NULL for tg_backward */
    int nin;
    tg_tensor **grads_out; /* nin slots (tg_grad) */
    bool keep_graph, create_graph, allow_unused;
} request;

/* The graph's ends: a node (and input number) per output to start from, and one per input
 * to capture. Small calls use the inline arrays. Every filled slot holds a node reference. */
typedef struct graph_ends {
    tg_node **roots;
    int32_t *root_nr;
    int nroots;
    capture *caps; /* NULL for tg_backward */
    int ncaps;
    tg_node *roots_buf[SMALL];
    int32_t root_nr_buf[SMALL];
    capture caps_buf[SMALL];
} graph_ends;

/* PyTorch's checks of the arguments, before anything is allocated. 0 or -1 + error. */
static int check_request(const request *r)
{
    char a[300], b[300];
    if (r->nout <= 0) return tg__fail(r->op, "no tensors to differentiate");
    if (r->ngrad_outputs && r->ngrad_outputs != r->nout)
        return tg__fail(r->op, "grad_outputs has %d tensors but there are %d outputs",
                        r->ngrad_outputs, r->nout);
    for (int i = 0; i < r->nout; i++) {
        tg_tensor *out = r->outputs[i];
        if (!out) return -1;
        if (!out->requires_grad)
            return tg__fail(r->op,
                            "element %d of tensors does not require grad and does not have a "
                            "grad_fn",
                            i);
        tg_tensor *g = r->ngrad_outputs ? r->grad_outputs[i] : NULL;
        if (g) {
            bool same = g->ndim == out->ndim;
            for (int64_t d = 0; same && d < g->ndim; d++) same = g->sizes[d] == out->sizes[d];
            if (!same)
                return tg__fail(r->op,
                                "Mismatch in shape: grad_output[%d] has a shape of %s and "
                                "output[%d] has a shape of %s.",
                                i, size_str(a, sizeof a, g), i, size_str(b, sizeof b, out));
        } else if (tg__numel(out) != 1)
            return tg__fail(r->op, "grad can be implicitly created only for scalar outputs");
    }
    for (int i = 0; i < r->nin; i++) {
        if (!r->inputs[i]) return -1;
        if (!r->inputs[i]->requires_grad)
            return tg__fail(r->op, "One of the differentiated Tensors does not require grad");
    }
    return 0;
}

/* Fills g with the gradient edges of the outputs and inputs. 0, or -1 + error; either way
 * ends_release undoes what was filled. */
static int ends_collect(const request *r, graph_ends *g)
{
    g->nroots = g->ncaps = 0;
    g->roots = r->nout <= SMALL ? g->roots_buf : calloc((size_t)r->nout, sizeof *g->roots);
    g->root_nr = r->nout <= SMALL ? g->root_nr_buf : calloc((size_t)r->nout, sizeof *g->root_nr);
    g->caps = !r->inputs        ? NULL
              : r->nin <= SMALL ? g->caps_buf
                                : calloc((size_t)r->nin, sizeof *g->caps);
    if (!g->roots || !g->root_nr || (r->inputs && !g->caps))
        return tg__fail(r->op, "out of memory");
    for (; g->ncaps < r->nin; g->ncaps++) {
        capture *c = &g->caps[g->ncaps];
        c->grad = NULL;
        c->entry = -1;
        if (!(c->node = gradient_edge(r->inputs[g->ncaps], &c->input_nr))) return -1;
    }
    for (; g->nroots < r->nout; g->nroots++)
        if (!(g->roots[g->nroots] = gradient_edge(r->outputs[g->nroots], &g->root_nr[g->nroots])))
            return -1;
    return 0;
}

/* Releases the ends; on success (rc == 0) hands each captured gradient to grads_out. */
static void ends_release(graph_ends *g, int rc, tg_tensor **grads_out)
{
    for (int i = 0; i < g->nroots; i++) tg_autograd_node_release(g->roots[i]);
    for (int i = 0; i < g->ncaps; i++) {
        tg_autograd_node_release(g->caps[i].node);
        if (rc == 0) grads_out[i] = tg_scope_track(g->caps[i].grad);
        else tg_release(g->caps[i].grad);
    }
    if (g->caps && g->caps != g->caps_buf) free(g->caps);
    if (g->roots && g->roots != g->roots_buf) free(g->roots);
    if (g->root_nr && g->root_nr != g->root_nr_buf) free(g->root_nr);
}

/* Enters the roots into the workspace (they come first: discovery starts from entries
 * [0, nroot_entries)), counts every node's dependencies, seeds each root's buffer with its
 * gradient, and queues the roots that are ready. 0 or -1 + error. */
static int seed_roots(task *tk, const request *r, const graph_ends *g)
{
    workspace *ws = tk->ws;
    for (int i = 0; i < g->nroots; i++) {
        bool added;
        if (entry_get(ws, g->roots[i], &added) < 0) return -1;
    }
    int32_t nroot_entries = ws->nentries;
    if (discover(tk, nroot_entries)) return -1;
    for (int i = 0; i < g->nroots; i++) {
        int32_t e = table_find(ws, g->roots[i]);
        tg_tensor *grad = r->ngrad_outputs && r->grad_outputs[i]
                              ? tg_retain(r->grad_outputs[i])
                              : tg__autograd_ones_like(r->outputs[i]);
        if (grad) grad = validate_grad(NULL, i, grad, &g->roots[i]->outputs[g->root_nr[i]]);
        if (!grad || buffer_add(ws, e, g->root_nr[i], grad)) return -1;
    }
    for (int32_t e = 0; e < nroot_entries; e++) {
        entry *en = &ws->entries[e];
        if (en->deps == 0 && (en->needed || en->captured) && !heap_push(ws, e)) return -1;
    }
    return 0;
}

/* Runs the graph: with grad mode set to create_graph, inner calls' results owned by the
 * engine (not the caller's scope), nodes in dependency order. 0 or -1 + error. */
static int run_graph(task *tk, const request *r, const graph_ends *g)
{
    bool prev_mode = tg_set_grad_enabled(r->create_graph);
    int scope_token = tg_scope_suspend();
    int rc = seed_roots(tk, r, g);
    while (rc == 0 && tk->ws->nheap) rc = run_node(tk, heap_pop(tk->ws));
    tg_scope_resume(scope_token);
    tg_set_grad_enabled(prev_mode);
    return rc;
}

/* tg_grad: every input must have been reached unless allow_unused. */
static int check_all_used(const request *r, const graph_ends *g)
{
    for (int i = 0; i < g->ncaps; i++) {
        if (!g->caps[i].grad && !r->allow_unused)
            return tg__fail(r->op,
                            "One of the differentiated Tensors appears to not have been used in "
                            "the graph. Set allow_unused=True if this is the desired behavior.");
    }
    return 0;
}

/* The engine behind tg_backward and tg_grad. 0 or -1 + error. */
static int execute(const request *r)
{
    if (check_request(r)) return -1;
    graph_ends g;
    workspace *ws = NULL;
    int rc = ends_collect(r, &g);
    if (rc == 0 && !(ws = ws_acquire())) rc = -1;
    if (rc == 0) {
        task tk = { ws, r->keep_graph || r->create_graph, r->create_graph, g.caps, g.ncaps };
        rc = run_graph(&tk, r, &g);
    }
    if (rc == 0) rc = check_all_used(r, &g);
    if (ws) ws_release(ws);
    ends_release(&g, rc, r->grads_out);
    return rc;
}

int tg_backward_fn(tg_tensor *root, tg_backward_opts opts)
{
    if (!root) {
        if (!tg__has_error()) tg__error("backward", "root is NULL");
        return -1;
    }
    tg_tensor *g[1] = { opts.grad };
    request r = { .op = "backward",
                  .outputs = &root,
                  .nout = 1,
                  .grad_outputs = g,
                  .ngrad_outputs = opts.grad ? 1 : 0,
                  .keep_graph = opts.retain_graph,
                  .create_graph = opts.create_graph };
    return execute(&r);
}

int tg_grad_fn(tg_tensor_list outputs, tg_tensor_list inputs, tg_tensor **grads, tg_grad_opts opts)
{
    for (int64_t i = 0; grads && i < inputs.len; i++) grads[i] = NULL;
    if (!grads || inputs.len <= 0)
        return tg__fail("grad", "grad requires at least one input and an array for the gradients");
    if (outputs.len > INT32_MAX || inputs.len > INT32_MAX)
        return tg__fail("grad", "too many tensors");
    request r = { .op = "grad",
                  .outputs = outputs.data,
                  .nout = (int)outputs.len,
                  .grad_outputs = opts.grad_outputs.data,
                  .ngrad_outputs = (int)opts.grad_outputs.len,
                  .inputs = inputs.data,
                  .nin = (int)inputs.len,
                  .grads_out = grads,
                  .keep_graph = opts.retain_graph,
                  .create_graph = opts.create_graph,
                  .allow_unused = opts.allow_unused };
    return execute(&r);
}
