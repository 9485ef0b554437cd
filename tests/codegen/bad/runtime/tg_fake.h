/* A runtime header for the error table: tgen --runtime tests/codegen/bad/runtime. */
typedef struct tg_tensor tg_tensor;
double tg_item(const tg_tensor *t);
