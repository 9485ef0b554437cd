/* Out-of-tree operators (the TORCH_LIBRARY idea): a library registers its tgen-generated table
 * under its own namespace at load time. Registration takes a write lock; lookups a read lock
 * (in-tree operators never come here: they are found lock-free in boxed.c). The caller's
 * entries must stay valid for the life of the process (they are static tables). */
#include "dispatch/dispatch_private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct reg {
    char *full; /* "ns::name.overload" (owned) */
    const tg_op_entry *e;
} reg;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static reg *regs;
static int nregs, capregs;

static const reg *find_locked(const char *name)
{
    bool qualified = strstr(name, "::") != NULL;
    for (int i = 0; i < nregs; i++) {
        if (qualified ? strcmp(regs[i].full, name) == 0 : strcmp(regs[i].e->name, name) == 0)
            return &regs[i];
    }
    return NULL;
}

int tg_register_ops(const char *ns, tg_op_entry *entries, int n)
{
    const char *op = "register_ops";
    if (!ns || !*ns || strstr(ns, "::")) return tg__fail(op, "invalid namespace");
    if (n < 0 || (n > 0 && !entries)) return tg__fail(op, "invalid operator table");
    size_t nslen = strlen(ns);
    pthread_rwlock_wrlock(&lock);
    int rc = 0, added = 0;
    if (nregs + n > capregs) {
        int cap = capregs ? capregs : 16;
        while (cap < nregs + n) cap *= 2;
        reg *r = realloc(regs, (size_t)cap * sizeof *r);
        if (!r) {
            tg__error(op, "out of memory");
            rc = -1;
            goto out;
        }
        regs = r;
        capregs = cap;
    }
    for (int i = 0; i < n; i++) {
        if (!entries[i].name || !*entries[i].name) {
            tg__error(op, "%s: entry %d has no name", ns, i);
            rc = -1;
            break;
        }
        char *full = malloc(nslen + 2 + strlen(entries[i].name) + 1);
        if (!full) {
            tg__error(op, "out of memory");
            rc = -1;
            break;
        }
        strcpy(full, ns);
        strcat(full, "::");
        strcat(full, entries[i].name);
        if (find_locked(full)) {
            tg__error(op, "operator %s is already registered", full);
            free(full);
            rc = -1;
            break;
        }
        regs[nregs].full = full;
        regs[nregs].e = &entries[i];
        nregs++; /* visible to find_locked for duplicate checks within the batch */
        added++;
    }
    if (rc) { /* all or nothing */
        for (int i = 0; i < added; i++) free(regs[nregs - 1 - i].full);
        nregs -= added;
    }
out:
    pthread_rwlock_unlock(&lock);
    return rc;
}

const tg_op_entry *tg__registry_find(const char *name)
{
    pthread_rwlock_rdlock(&lock);
    const reg *r = find_locked(name);
    const tg_op_entry *e = r ? r->e : NULL;
    pthread_rwlock_unlock(&lock);
    return e;
}
