/* The --select hooks of tgen's command line (select_cli.c; cli.c calls them once the core
 * spec has loaded and validated). Each returns the number of errors. */
#ifndef TGEN_SELECT_CLI_H
#define TGEN_SELECT_CLI_H

#include "emit/emit.h"
#include "spec/model.h"

/* --check --select FILE (given once or more): reads and resolves each selection and computes
 * its closure over the spec (whose C view is built once for all); *lines gets the summary lines
 * of the selections that check, in order. Returns the errors of all. */
int tgk_cli_check(const tgm_model *m, const char *const *paths, int npaths, const char **lines);
/* --gen --select FILE [--select-objects NM]: generates, into o->out_dir, only the selection's
 * closure; with NM (`nm -o` of the objects, docs/generated-code.md "Selective builds") also
 * writes selected_objects.txt there, the objects to link. */
int tgk_cli_gen(const tgm_model *m, const char *path, const char *objects, const tge_options *o);

#endif
