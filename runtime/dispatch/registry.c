/* Operators by name, and what operator libraries and backends registered (the TORCH_LIBRARY /
 * TORCH_LIBRARY_IMPL and m.fallback ideas): libraries' operators by name, kernels added to
 * operators' rows (unboxed, in the row itself, or boxed, kept here), and one boxed fallback per
 * key. tensorgen's own operators come from the generated table (tg__generated_ops), indexed
 * once (sorted by name, binary search; pthread_once makes the first lookup thread-safe): that
 * index needs no lock.
 *
 * Registration takes the write lock; lookups on the slow paths (calls by name, keys without an
 * unboxed kernel) the read lock. The fast path never comes here: it reads a row's kernel with
 * one atomic load, and a row's slot is written here with an atomic store. Libraries' rows and
 * names must stay valid while they are registered (they are their static tables). */
#include "dispatch/dispatch_private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;

/* Libraries' operators, sorted by name ("ns::op.overload"). */
static tg_op_entry **ops;
static int nops;
static int64_t capops;

/* A kernel registered into a row: unboxed ones live in the row (this record remembers who put
 * them there, to take them out again), boxed ones only here. */
typedef struct kernel_reg {
    tg_op_entry *row;
    int key;
    tg_boxed_kernel boxed; /* NULL for an unboxed kernel */
    void *ctx;
    const tg_library *owner; /* NULL: registered by hand, for the life of the process */
} kernel_reg;
static kernel_reg *kregs;
static int nkregs;
static int64_t capkregs;

/* One per key; CUDA's is built in (the CPU kernel on copies). */
static struct {
    tg_boxed_kernel fn;
    void *ctx;
} fallbacks[TG_NUM_KEYS] = { [TG_KEY_CUDA] = { tg__cuda_cpu_fallback, NULL } };

static const tg_library **libs;
static int nlibs;
static int64_t caplibs;

/* ---- tensorgen's own operators ---- */

static tg_op_entry **index_;
static int nindex;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b)
{
    return strcmp((*(tg_op_entry *const *)a)->name, (*(tg_op_entry *const *)b)->name);
}

static void build_index(void)
{
    int n = 0;
    tg_op_entry *const *ops = tg__generated_ops(&n);
    if (!ops || n <= 0) return;
    index_ = malloc((size_t)n * sizeof *index_);
    if (!index_) return; /* lookups then fail with "unknown operator" */
    for (int i = 0; i < n; i++) index_[i] = ops[i];
    qsort(index_, (size_t)n, sizeof *index_, by_name);
    nindex = n;
}

static tg_op_entry *builtin_find(const char *name)
{
    pthread_once(&index_once, build_index);
    int lo = 0, hi = nindex - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(index_[mid]->name, name);
        if (c == 0) return index_[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

/* ---- libraries' operators ---- */

/* Index of `name` in ops, or where it would go (*found false). */
static int op_slot(const char *name, bool *found)
{
    int lo = 0, hi = nops;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(ops[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = false;
    return lo;
}

/* A row by name, the lock held: tensorgen's own ("add.Tensor", "aten::add.Tensor": the
 * lock-free index) or a library's ("myops::nms"). */
static tg_op_entry *find_row_locked(const char *name)
{
    if (!strncmp(name, "aten::", 6)) return builtin_find(name + 6);
    if (!strstr(name, "::")) return builtin_find(name);
    bool found;
    int i = op_slot(name, &found);
    return found ? ops[i] : NULL;
}

tg_op_entry *tg__registry_find(const char *name)
{
    pthread_rwlock_rdlock(&lock);
    tg_op_entry *e = find_row_locked(name);
    pthread_rwlock_unlock(&lock);
    return e;
}

const char *tg__registry_suggest(const char *bare)
{
    const char *like = NULL;
    size_t n = strlen(bare);
    pthread_rwlock_rdlock(&lock);
    for (int i = 0; i < nops && !like; i++) {
        const char *sep = strstr(ops[i]->name, "::");
        if (sep && strlen(sep + 2) == n && !strcmp(sep + 2, bare)) like = ops[i]->name;
    }
    pthread_rwlock_unlock(&lock);
    return like;
}

static const kernel_reg *find_kernel_locked(const tg_op_entry *row, int key)
{
    for (int i = 0; i < nkregs; i++)
        if (kregs[i].row == row && kregs[i].key == key) return &kregs[i];
    return NULL;
}

bool tg__registry_boxed_kernel(const tg_op_entry *e, int key, tg_boxed_kernel *fn, void **ctx)
{
    pthread_rwlock_rdlock(&lock);
    const kernel_reg *r = find_kernel_locked(e, key);
    bool found = r && r->boxed;
    if (found) *fn = r->boxed, *ctx = r->ctx;
    pthread_rwlock_unlock(&lock);
    return found;
}

bool tg__registry_fallback(int key, tg_boxed_kernel *fn, void **ctx)
{
    pthread_rwlock_rdlock(&lock);
    *fn = fallbacks[key].fn;
    *ctx = fallbacks[key].ctx;
    pthread_rwlock_unlock(&lock);
    return *fn != NULL;
}

/* ---- kernels ---- */

/* Keys a kernel may be registered for: devices (Autograd kernels come from derivatives). */
static bool kernel_key(int key) { return key >= TG_KEY_CPU && key <= TG_KEY_BACKEND_LAST; }

/* Adds a kernel to row (the lock held). 0, or -1 with an error naming the operator. */
static int add_kernel_locked(tg_op_entry *row, int key, tg_fnptr fn, tg_boxed_kernel boxed,
                             void *ctx, const tg_library *owner)
{
    if (tg__row_kernel(row, key) || find_kernel_locked(row, key))
        return tg__fail(row->name, "a kernel for key %s is already registered",
                        tg_dispatch_key_name(key));
    if (!tg__array_reserve((void **)&kregs, &capkregs, nkregs + 1, sizeof *kregs, 16))
        return tg__fail(row->name, "out of memory registering a kernel");
    kregs[nkregs++] = (kernel_reg){ row, key, boxed, ctx, owner };
    if (fn) __atomic_store_n(&row->kernels[key], fn, __ATOMIC_RELEASE);
    return 0;
}

/* The row of `op` for a registration: NULL with an error naming what is wrong. */
static tg_op_entry *row_for(const char *what, const char *op, int key, bool have_fn)
{
    if (!op) return tg__error(what, "no operator name");
    if (!kernel_key(key))
        return tg__error(what,
                         "%s: kernels are registered for CPU, CUDA or a backend's key "
                         "(%d to %d), not key %d",
                         op, TG_KEY_BACKEND_FIRST, TG_KEY_BACKEND_LAST, key);
    if (!have_fn) return tg__error(what, "%s: no kernel given", op);
    tg_op_entry *row = find_row_locked(op);
    if (!row) return tg__error(what, "unknown operator '%s'", op);
    return row;
}

int tg_register_kernel(const char *op, int key, tg_fnptr kernel)
{
    pthread_rwlock_wrlock(&lock);
    tg_op_entry *row = row_for("register_kernel", op, key, kernel != NULL);
    int rc = row ? add_kernel_locked(row, key, kernel, NULL, NULL, NULL) : -1;
    pthread_rwlock_unlock(&lock);
    return rc;
}

int tg_register_boxed_kernel(const char *op, int key, tg_boxed_kernel fn, void *ctx)
{
    pthread_rwlock_wrlock(&lock);
    tg_op_entry *row = row_for("register_boxed_kernel", op, key, fn != NULL);
    int rc = row ? add_kernel_locked(row, key, NULL, fn, ctx, NULL) : -1;
    pthread_rwlock_unlock(&lock);
    return rc;
}

int tg_register_fallback(int key, tg_boxed_kernel fn, void *ctx)
{
    const char *what = "register_fallback";
    if (!kernel_key(key))
        return tg__fail(what,
                        "fallbacks are registered for CPU, CUDA or a backend's key "
                        "(%d to %d), not key %d",
                        TG_KEY_BACKEND_FIRST, TG_KEY_BACKEND_LAST, key);
    if (!fn) return tg__fail(what, "no fallback given");
    pthread_rwlock_wrlock(&lock);
    int rc = 0;
    if (fallbacks[key].fn)
        rc = tg__fail(what, "key %s already has a fallback", tg_dispatch_key_name(key));
    else fallbacks[key].fn = fn, fallbacks[key].ctx = ctx;
    pthread_rwlock_unlock(&lock);
    return rc;
}

/* ---- libraries ---- */

static bool is_registered_locked(const tg_library *lib)
{
    for (int i = 0; i < nlibs; i++)
        if (libs[i] == lib) return true;
    return false;
}

/* Checks a library before anything is added. 0, or -1 with an error. */
static int check_library_locked(const tg_library *lib, const char *what)
{
    size_t nslen = lib->ns ? strlen(lib->ns) : 0;
    if (lib->nops > 0 && (!lib->ns || !nslen || strstr(lib->ns, ":") || !lib->ops))
        return tg__fail(what, "a library with operators needs a namespace and a table");
    if (lib->ns && !strcmp(lib->ns, "aten"))
        return tg__fail(what, "the namespace 'aten' is tensorgen's own");
    for (int i = 0; i < lib->nops; i++) {
        const char *name = lib->ops[i]->name;
        if (!name || strncmp(name, lib->ns, nslen) || strncmp(name + nslen, "::", 2))
            return tg__fail(what, "%s: operator %d is not named %s::...", lib->ns, i, lib->ns);
        bool found;
        op_slot(name, &found);
        for (int j = 0; j < i && !found; j++) found = !strcmp(lib->ops[j]->name, name);
        if (found) return tg__fail(what, "operator %s is already registered", name);
    }
    for (int i = 0; i < lib->nkernels; i++) {
        const tg_kernel_entry *k = &lib->kernels[i];
        if (!row_for(what, k->op, k->key, k->kernel != NULL)) return -1;
    }
    return 0;
}

/* Whether `row` is one of lib's. */
static bool owns_row(const tg_library *lib, const tg_op_entry *row)
{
    for (int i = 0; i < lib->nops; i++)
        if (lib->ops[i] == row) return true;
    return false;
}

/* Takes out every kernel `lib` added and every kernel added to its rows. */
static void drop_kernels_locked(const tg_library *lib)
{
    int keep = 0;
    for (int i = 0; i < nkregs; i++) {
        kernel_reg *r = &kregs[i];
        bool own_row = owns_row(lib, r->row);
        if (r->owner != lib && !own_row) {
            kregs[keep++] = *r;
            continue;
        }
        if (!r->boxed) __atomic_store_n(&r->row->kernels[r->key], NULL, __ATOMIC_RELEASE);
    }
    nkregs = keep;
}

static int register_locked(const tg_library *lib)
{
    const char *what = "library_register";
    if (lib->abi != TG_LIBRARY_ABI)
        return tg__fail(what,
                        "library '%s' was generated for ABI %d; this libtensorgen has ABI %d "
                        "(regenerate it with this tgen)",
                        lib->ns ? lib->ns : "(no namespace)", lib->abi, TG_LIBRARY_ABI);
    if (is_registered_locked(lib)) return 0;
    if (check_library_locked(lib, what)) return -1;
    if (!tg__array_reserve((void **)&ops, &capops, nops + lib->nops, sizeof *ops, 16) ||
        !tg__array_reserve((void **)&libs, &caplibs, nlibs + 1, sizeof *libs, 16))
        return tg__fail(what, "out of memory");
    for (int i = 0; i < lib->nkernels; i++) {
        const tg_kernel_entry *k = &lib->kernels[i];
        if (add_kernel_locked(find_row_locked(k->op), k->key, k->kernel, NULL, NULL, lib)) {
            drop_kernels_locked(lib); /* all or nothing */
            return -1;
        }
    }
    for (int i = 0; i < lib->nops; i++) {
        bool found;
        int at = op_slot(lib->ops[i]->name, &found);
        memmove(&ops[at + 1], &ops[at], (size_t)(nops - at) * sizeof *ops);
        ops[at] = lib->ops[i];
        nops++;
    }
    libs[nlibs++] = lib;
    return 0;
}

int tg_library_register(const tg_library *lib)
{
    if (!lib) return tg__fail("library_register", "no library");
    pthread_rwlock_wrlock(&lock);
    int rc = register_locked(lib);
    pthread_rwlock_unlock(&lock);
    return rc;
}

bool tg__registry_any_library(bool (*match)(const tg_library *lib, void *ctx), void *ctx)
{
    pthread_rwlock_rdlock(&lock);
    bool found = false;
    for (int i = 0; i < nlibs && !found; i++) found = match(libs[i], ctx);
    pthread_rwlock_unlock(&lock);
    return found;
}

void tg_library_unregister(const tg_library *lib)
{
    if (!lib) return;
    pthread_rwlock_wrlock(&lock);
    if (is_registered_locked(lib)) {
        drop_kernels_locked(lib);
        int keep = 0;
        for (int i = 0; i < nops; i++)
            if (!owns_row(lib, ops[i])) ops[keep++] = ops[i];
        nops = keep;
        keep = 0;
        for (int i = 0; i < nlibs; i++)
            if (libs[i] != lib) libs[keep++] = libs[i];
        nlibs = keep;
    }
    pthread_rwlock_unlock(&lock);
}
