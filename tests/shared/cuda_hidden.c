/* Proves the CUDA libraries are out of reach in the environment tests/shared/run.sh runs the
 * CPU suite in: each soname given (what libtensorgen_cuda.so needs: libcudart.so.N,
 * libcublas.so.N) must fail to load.   cuda_hidden SONAME...   exit 0 when none loads */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int loaded = 0;
    for (int i = 1; i < argc; i++)
        if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
            fprintf(stderr, "cuda_hidden: %s is still reachable\n", argv[i]);
            loaded++;
        }
    if (!loaded) printf("cuda_hidden: %d CUDA libraries out of reach\n", argc - 1);
    return loaded ? 1 : 0;
}
