/* libtensorgen.so.0 loads with dlopen, the way every language binding loads a library, in a
 * process that has already loaded other libraries with thread-locals of their own: libgomp and
 * OpenBLAS first, then tensorgen (which used to need more static TLS than glibc keeps for
 * dlopen). Then a small computation through dlsym'ed functions must give the right value.
 *   dlopen_after_deps LIBTENSORGEN LIBGOMP LIBOPENBLAS        exit 0 when it works */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "tensorgen.h" /* declarations only: the program does not link the library */

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIBTENSORGEN LIBGOMP LIBOPENBLAS\n", argv[0]);
        return 2;
    }
    for (int i = 2; i < 4; i++)
        if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) {
            fprintf(stderr, "cannot load %s: %s\n", argv[i], dlerror());
            return 1;
        }
    void *tg = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!tg) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    /* x = [0, 1, ..., 9] * 2, y = x . x (matmul of two vectors), then its value. */
    __typeof__(tg_tensor_from_data) *from_data = (void *)dlsym(tg, "tg_tensor_from_data");
    __typeof__(tg_mul_scalar) *mul_scalar = (void *)dlsym(tg, "tg_mul_scalar");
    __typeof__(tg_matmul) *matmul = (void *)dlsym(tg, "tg_matmul");
    __typeof__(tg_item) *item = (void *)dlsym(tg, "tg_item");
    __typeof__(tg_release) *release = (void *)dlsym(tg, "tg_release");
    if (!from_data || !mul_scalar || !matmul || !item || !release) {
        fprintf(stderr, "a public function is not exported: %s\n", dlerror());
        return 1;
    }
    double v[10];
    for (int i = 0; i < 10; i++) v[i] = i;
    tg_tensor *x = from_data(v, (int64_t[]){ 10 }, 1, TG_FLOAT64);
    tg_tensor *x2 = mul_scalar(x, 2);
    tg_tensor *y = matmul(x2, x2);
    double got = item(y), want = 4 * 285; /* 4 * sum of i^2, i < 10 */
    release(y);
    release(x2);
    release(x);
    if (got != want) {
        fprintf(stderr, "wrong value: %g, want %g\n", got, want);
        return 1;
    }
    printf("dlopen after libgomp and OpenBLAS: ok (%g)\n", got);
    return 0;
}
