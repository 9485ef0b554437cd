#!/usr/bin/env bash
# The option spellings a newcomer writes (docs/c-api.md, "Options"), compiled with gcc and clang
# as a user would: every right spelling builds without a warning under -Wall -Wextra, and
# every wrong one fails with the compiler's default flags (a wrong spelling that compiled would
# be a silent wrong value or a crash). The values the right spellings give are checked by
# tests/api/test_options.c. Run from the repository root after `make gen`; takes a few seconds.
set -uo pipefail

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
inc=(-Iruntime -Inn -Igenerated)

# Each case is one statement inside a function given x (float [2, 3]) and w (float [4, 3]).
right=(
    'tg_tensor *r = tg_argmax(x, .dim = 1);'
    'tg_tensor *r = tg_argmax(x, .dim = TG_NONE_INT, .keepdim = true);'
    'tg_tensor *r = tg_sum(x, .dim = 0);'
    'tg_tensor *r = tg_sum(x, .dim = TG_INTS(0, 1), .dtype = TG_FLOAT64);'
    'tg_tensor *r = tg_slice(x, .dim = 1, .start = 2);'
    'tg_tensor *r = tg_clamp(x, .min = 3);'
    'tg_tensor *r = tg_clamp(x, .min = TG_NONE_FLOAT, .max = 0.5);'
    'tg_tensor *r = tg_scaled_dot_product_attention(x, x, x, .scale = 0.5);'
    'tg_tensor *r = tg_rms_norm(x, TG_INTS(3), .eps = 1e-2);'
    'tg_tensor *r = tg_max_pool2d(x, TG_INTS(2), .stride = 1, .padding = 1);'
    'tg_tensor *r = tg_zeros(TG_INTS(2), .dtype = TG_FLOAT64, .pin_memory = false);'
    'tg_tensor *r = tg_mse_loss(x, x, .reduction = TG_REDUCTION_SUM);'
    'tg_tensor *r = tg_linear(x, w, .bias = NULL);'
    'tg_tensor *r = tg_gelu(x, .approximate = "tanh");'
)
wrong=(
    'tg_tensor *r = tg_gelu(x, .approximate = 1);'             # str given a number
    'tg_tensor *r = tg_zeros(TG_INTS(2), .dtype = "float32");' # ScalarType given a string
    'tg_tensor *r = tg_linear(x, w, .bias = 1);'               # Tensor? given a number
    'tg_tensor *r = tg_linear(x, w, .bias = 0.5);'
    'tg_tensor *r = tg_view(x, 3);'                            # a positional int[] given a number
    'tg_tensor *r = tg_div_mode(x, x, 1);'                     # a positional str given a number
    'tg_tensor *r = tg_sum(x, .dim = "0");'                    # int[1]? given a string
)

write_case() { # file statement
    printf '#include "tensorgen.h"\ntg_tensor *f(tg_tensor *x, tg_tensor *w);\n' >"$1"
    printf 'tg_tensor *f(tg_tensor *x, tg_tensor *w)\n{\n    (void)x;\n    (void)w;\n    %s\n    return r;\n}\n' \
        "$2" >>"$1"
}

fails=0 ran=0
for cc in gcc clang; do
    command -v "$cc" >/dev/null || continue
    for i in "${!right[@]}"; do
        write_case "$dir/right$i.c" "${right[$i]}"
        ran=$((ran + 1))
        if ! out=$("$cc" -std=c11 -Wall -Wextra -Werror "${inc[@]}" -fsyntax-only "$dir/right$i.c" 2>&1); then
            echo "option_spellings: $cc rejects a right spelling: ${right[$i]}" >&2
            echo "$out" | head -5 >&2
            fails=$((fails + 1))
        fi
    done
    for i in "${!wrong[@]}"; do
        write_case "$dir/wrong$i.c" "${wrong[$i]}"
        ran=$((ran + 1))
        if "$cc" "${inc[@]}" -fsyntax-only "$dir/wrong$i.c" >/dev/null 2>&1; then
            echo "option_spellings: $cc (default flags) compiles a wrong spelling: ${wrong[$i]}" >&2
            fails=$((fails + 1))
        fi
    done
done
echo "option_spellings: $ran compilations, $fails unexpected"
[ "$fails" -eq 0 ]
