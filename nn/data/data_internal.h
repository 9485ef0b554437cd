/* What nn/data/'s files share and nothing else sees. */
#ifndef TG_NN_DATA_INTERNAL_H
#define TG_NN_DATA_INTERNAL_H

#include "tg_nn_data.h"

/* Bytes of one sample of the field. */
int64_t tg__data_field_bytes(const tg_data_field *fd);
/* A (lead, sizes...) contiguous CPU tensor of the field, uninitialised, a new reference that no
 * open scope records. NULL with an error. */
tg_tensor *tg__data_field_tensor(const tg_data_field *fd, int64_t lead);

#endif
