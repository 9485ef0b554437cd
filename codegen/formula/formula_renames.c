/* Autograd helpers PyTorch renamed without changing them: an older derivatives file (PyTorch
 * 1.5's, and the vendors' copies of it) calls them by their old name. A call whose name is
 * neither an operator nor a vocabulary function is resolved against the new name when the old
 * one is in this table (formula_resolve.c), and `tgen --check` says once how many calls were
 * (tgf_renames_note). Only true renames belong here: the same arguments, in the same order,
 * computing the same gradient. A helper whose signature or meaning changed is a vocabulary
 * entry of the release's own file instead (specs/autograd_functions-1.5.yaml). */
#include <string.h>

#include "formula/formula.h"
#include "base/strbuf.h"

static const struct {
    const char *old_name, *name;
} renames[] = {
    /* (grad, dim, indices, sizes, keepdim): the gradient of kthvalue, max.dim, sort, ... */
    { "index_select_backward", "value_selecting_reduction_backward" },
    /* (grad, sparse, dense, alpha): grad @ dense^T * alpha on the sparse operand's pattern;
     * the new name also takes the other sparse layouts */
    { "_sparse_addmm_sparse_backward", "mm_mat1_sparse_backward" },
};

enum { NRENAMES = sizeof renames / sizeof renames[0] };

int tgf_renames_count(void) { return NRENAMES; }

int tgf_rename_find(const char *old_name)
{
    if (!strncmp(old_name, "at::", 4)) old_name += 4;
    for (int i = 0; i < NRENAMES; i++)
        if (!strcmp(renames[i].old_name, old_name)) return i;
    return -1;
}

const char *tgf_rename_target(int i) { return renames[i].name; }

const char *tgf_renames_note(tgm_arena *a, const int *uses)
{
    tgs_list l = { 0 };
    for (int i = 0; uses && i < NRENAMES; i++)
        if (uses[i])
            tgs_list_addf(&l, a, "%s %d (now %s)", renames[i].old_name, uses[i], renames[i].name);
    return l.n ? tgs_list_join(&l, a, ", ") : NULL;
}
