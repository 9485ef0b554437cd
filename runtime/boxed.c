/* Boxed calls by name: the one path shared by fallbacks, out-of-tree operators and dynamic
 * callers. In-tree operators come from the generated table, indexed once (sorted by name,
 * binary search; pthread_once makes the first lookup thread-safe); out-of-tree ones from the
 * registry. */
#include "tg_rt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Weak: runtime-only programs (the runtime's own tests) link without generated code. */
extern const tg_op_entry *tg__generated_ops(int *n) __attribute__((weak));

static const tg_op_entry **index_;
static int nindex;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b) {
    return strcmp((*(const tg_op_entry *const *)a)->name, (*(const tg_op_entry *const *)b)->name);
}

static void build_index(void) {
    int n = 0;
    const tg_op_entry *ops = tg__generated_ops ? tg__generated_ops(&n) : NULL;
    if (!ops || n <= 0) return;
    index_ = malloc((size_t)n * sizeof *index_);
    if (!index_) return;               /* lookups then fail with "unknown operator" */
    for (int i = 0; i < n; i++) index_[i] = &ops[i];
    qsort(index_, (size_t)n, sizeof *index_, by_name);
    nindex = n;
}

const tg_op_entry *tg__find_op(const char *name) {
    if (!name) return NULL;
    pthread_once(&index_once, build_index);
    const char *bare = strncmp(name, "aten::", 6) == 0 ? name + 6 : name;
    int lo = 0, hi = nindex - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(index_[mid]->name, bare);
        if (c == 0) return index_[mid];
        if (c < 0) lo = mid + 1; else hi = mid - 1;
    }
    return tg__registry_find(name);
}

int tg_call_boxed(const char *name, tg_stack *s) {
    const tg_op_entry *e = tg__find_op(name);
    if (!e) { tg__error("call_boxed", "unknown operator '%s'", name ? name : "(null)"); return -1; }
    if (!s) { tg__error(e->name, "no argument stack"); return -1; }
    tg_keyset ks = 0;
    for (int i = 0; i < s->n; i++) {
        const tg_ivalue *v = &s->v[i];
        if (v->tag == TG_IV_TENSOR && v->v.t) ks |= tg__tensor_keys(v->v.t);
        if (v->tag == TG_IV_TENSOR_LIST)
            for (int64_t j = 0; j < v->v.tensors.len; j++)
                if (v->v.tensors.data[j]) ks |= tg__tensor_keys(v->v.tensors.data[j]);
    }
    bool fallback = false;
    tg_fnptr fn = tg__dispatch_lookup(e, ks, &fallback);
    if (!fn) {
        if (fallback)
            tg__error(e->name, "no CUDA kernel, and the CPU fallback for boxed calls is not "
                      "available yet");
        return -1;
    }
    if (!e->call_boxed) { tg__error(e->name, "the operator has no boxed entry"); return -1; }
    return e->call_boxed(fn, s);
}
