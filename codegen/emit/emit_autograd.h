/* The parts of the autograd emitter (emit_autograd.c), private to them: per derivative entry
 * its backward node (emit_autograd_node.c) and its frame and descriptor
 * (emit_autograd_entry.c), per operator its autograd kernel (emit_autograd_kernel.c). Each
 * returns the code to place in the entry's or operator's shard of tg_autograd_<k>.c. The
 * protocol those call is the runtime's (runtime/autograd/record.h): this code is data and
 * the calls that hand it over. */
#ifndef TGEN_EMIT_AUTOGRAD_H
#define TGEN_EMIT_AUTOGRAD_H

#include "emit/emit_internal.h"
#include "formula/formula.h"

/* The templates of one run, loaded once. */
typedef struct tge_ag_templates {
    tgt_template node, node_type, not_generated, entry, table, array, input, save, output, term,
        formula, dim, kernel, out;
} tge_ag_templates;

tge_ag_templates tge_ag_load_templates(tge_ctx *c);

/* An entry's node: struct, compiled formulas, their table (`<node>_formulas`, with
 * *nformulas rows; NULL for none); for an entry tgen cannot compile (d->limit), a vtable whose
 * apply fails saying why. The node's type, which needs the entry's save table, is
 * tge_ag_entry's. */
const char *tge_ag_node(tge_ctx *c, const tge_ag_templates *t, const tgf_deriv *d,
                        const char **formulas, int *nformulas);
/* The frame and descriptor (tg_ag_entry `<name>_entry`) of an entry, with its node's type
 * (its formula table `formulas` of n rows), or, for an operator recording a NotImplemented
 * node (d NULL), of that operator alone. */
const char *tge_ag_entry(tge_ctx *c, const tge_ag_templates *t, const tga_op *op,
                         const tgf_deriv *d, const char *formulas, int nformulas);
/* The name of the descriptor (and frame) tge_ag_entry writes for (op, d). */
const char *tge_ag_entry_name(tge_ctx *c, const tga_op *op, const tgf_deriv *d);
/* The operator's autograd kernel: recording (d its entry, or NULL), or refusing out= calls. */
const char *tge_ag_kernel(tge_ctx *c, const tge_ag_templates *t, const tga_op *op,
                          const tgf_deriv *d);

/* The table `name` of `type` with the rows (NULL when there are none: C has no empty
 * arrays), rendered into *out. */
const char *tge_ag_table(tge_ctx *c, const tge_ag_templates *t, const char *type, const char *name,
                         const tgs_list *rows, tgs_list *out);

#endif
