/* The model's own operations: appending entries while parsing, and finding an entry by name. */
#include <string.h>

#include "spec/frontend.h"

/* Appends p to the pointer array *arr of *n elements. The model's arrays carry no capacity:
 * it is the count rounded up to a power of two (at least 4), as tgs_grow leaves it. */
static void push_ptr(tgm_arena *a, void ***arr, int *n, void *p)
{
    int cap = 0;
    if (*n) {
        cap = 4;
        while (cap < *n) cap *= 2;
    }
    *TGS_PUSH(a, *arr, *n, cap) = p;
}

void tgm__add_func(tgm_model *m, tgm_func *f)
{
    push_ptr(m->arena, (void ***)&m->funcs, &m->nfuncs, f);
}

void tgm__add_deriv(tgm_model *m, tgm_derivative *d)
{
    push_ptr(m->arena, (void ***)&m->derivs, &m->nderivs, d);
}

tgm_func *tgm_find_func(const tgm_model *m, const char *full_name)
{
    if (m->func_index) return tgm__map_get(m->func_index, full_name);
    for (int i = 0; i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i]->schema.full_name, full_name)) return m->funcs[i];
    return NULL;
}
