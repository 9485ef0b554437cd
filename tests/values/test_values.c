/* The value table (kt_case.h): every registered case on the CPU (against PyTorch's values where
 * the family has fixtures, and its strided, out= and in-place forms), and on CUDA against the
 * CPU: the emulator runs them all (make test-cuda-emu); without a device they skip. Each case
 * runs in its own process. */
#include "kt_case.h"

ParameterizedTestParameters(values, cpu) { return kt_index_params(kt_num_cases()); }

ParameterizedTest(int *index, values, cpu) { kt_run_cpu(*index); }

ParameterizedTestParameters(values, cuda) { return kt_index_params(kt_num_cases()); }

ParameterizedTest(int *index, values, cuda)
{
#ifndef TG_WITH_CUDA
    (void)index;
    KT_SKIP_NO_CUDA_BUILD();
#else
    const kt_case *c = kt_case_at(*index);
    if (c->flags & KT_CPU_ONLY) cr_skip_test("%s [%s]: a CPU path", c->op, c->label);
    KT_REQUIRE_DEVICE("values::cuda");
    kt_run_on(*index, TG_DEVICE_CUDA(0));
#endif
}

Test(values, cases_name_real_operators)
{
    for (int i = 0; i < kt_num_cases(); i++) {
        const kt_case *c = kt_case_at(i);
        cr_expect(cover_is_operator(c->op), "case %d [%s] names '%s', not an operator", i, c->label,
                  c->op);
        for (const char *const *o = c->also; o && *o; o++)
            cr_expect(cover_is_operator(*o), "%s [%s] names '%s', not an operator", c->op, c->label,
                      *o);
        cr_expect(!c->ref || c->dtypes.n, "%s [%s]: fixture values need dtypes", c->op, c->label);
    }
}
