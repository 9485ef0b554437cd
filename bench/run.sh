#!/usr/bin/env bash
# Runs every benchmark and prints one JSON line per measurement on stdout (format: BENCH.md and
# ../shared/bench-anchors/README.md); notes and a comparison table go to stderr. `make bench`
# calls it as `bench/run.sh build` after building build/bench/tg_bench and build/tgen.
#
#   bench/run.sh [BUILD_DIR]       default BUILD_DIR: build
#
# Environment:
#   OMP_NUM_THREADS / OPENBLAS_NUM_THREADS   threads (default 2), used by every part
#   BENCH_ONLY=a,b        only workloads whose name contains one of the words
#   BENCH_REPEATS=N       timed repeats (default 7)
#   BENCH_ANCHORS=0       skip the anchor programs and PyTorch even when they are present
#   BENCH_OUT=file        where the JSON lines are also saved (default BUILD_DIR/bench/results.jsonl)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPEATS=${BENCH_REPEATS:-7}
ONLY=${BENCH_ONLY:-}
ANCHORS=../shared/bench-anchors
PYTORCH_SPECS=../shared/pytorch-1.13.1
PY=/usr/bin/python3          # Debian's python sees python3-torch; a pyenv python3 may not
THREADS=${OMP_NUM_THREADS:-${OPENBLAS_NUM_THREADS:-2}}
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
CORETYPE=${OPENBLAS_CORETYPE:-auto}
OUT=${BENCH_OUT:-$BUILD/bench/results.jsonl}

note() { echo "bench: $*" >&2; }
# The instruction set tensorgen's CPU kernels run with (tg_cpu_capability(); TG_CPU_CAPABILITY
# forces one): the field of tg_bench's first JSON line on a trivial workload.
cpu_capability() {
  "$BUILD/bench/tg_bench" --only overhead_add_1elem --repeats 1 2>/dev/null |
    sed -n 's/.*"cpu_capability": "\([a-z0-9]*\)".*/\1/p' | head -1
}
wanted() {   # wanted NAME: true when BENCH_ONLY is empty or one of its words is in NAME
  [ -z "$ONLY" ] && return 0
  local w; IFS=, read -ra ws <<< "$ONLY"
  for w in "${ws[@]}"; do [ -n "$w" ] && [[ "$1" == *"$w"* ]] && return 0; done
  return 1
}
# Appends "coretype" to the anchors' lines (tg_bench prints it itself).
tag_coretype() { sed -u "s/}\$/, \"coretype\": \"$1\"}/"; }

for f in "$BUILD/bench/tg_bench" "$BUILD/tgen"; do
  [ -x "$f" ] || { echo "bench: $f is missing; run 'make bench' (or 'make' first)" >&2; exit 1; }
done
mkdir -p "$(dirname "$OUT")"
: > "$OUT"
note "threads=$THREADS OPENBLAS_CORETYPE=$CORETYPE cpu_capability=$(cpu_capability) cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p') nproc=$(nproc)"

# ---------------------------------------------------------------- tgen wall times
# Times a command: 1 warm-up run, then $REPEATS runs; prints the JSON line (seconds).
#   time_cmd [--allow-exit1] NAME CMD...
# A failing command is skipped, unless --allow-exit1 is given and it exits with status 1 (tgen
# reporting spec errors, e.g. on a newer PyTorch's files it does not fully accept): then it is
# timed anyway and the JSON line says "exit": 1.
time_cmd() {
  local allow1=0 rc extra=""
  [ "$1" = --allow-exit1 ] && { allow1=1; shift; }
  local name=$1; shift
  "$@" >/dev/null 2>&1; rc=$?
  if [ "$rc" -ne 0 ]; then
    if [ "$allow1" = 1 ] && [ "$rc" -eq 1 ]; then
      extra=', "exit": 1'; note "$name: '$*' exits 1 (spec errors); timed anyway"
    else
      note "$name skipped: '$*' failed"; "$@" 2>&1 | head -5 >&2; return
    fi
  fi
  local i t0 t1 times=()
  for ((i = 0; i < REPEATS; i++)); do
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v name="$name" -v ct="$CORETYPE" -v extra="$extra" -v src="${TIME_SRC:-tensorgen}" '
    { v[NR] = $1 }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "{\"name\": \"%s\", \"unit\": \"s\", \"value\": %.4f, \"best\": %.4f, \"median\": %.4f, \"n\": %d, \"threads\": 1, \"src\": \"%s\", \"coretype\": \"%s\"%s}\n", name, m, v[1], m, NR, src, ct, extra }'
}

tgen_bench() {
  if wanted tgen_check_pytorch_specs; then
    if [ -f "$PYTORCH_SPECS/native_functions.yaml" ]; then
      time_cmd tgen_check_pytorch_specs "$BUILD/tgen" --check \
        "$PYTORCH_SPECS/native_functions.yaml" "$PYTORCH_SPECS/derivatives.yaml"
    else
      note "tgen_check_pytorch_specs skipped: $PYTORCH_SPECS is absent"
    fi
  fi
  if wanted tgen_check_synthetic_20k; then
    # 20,000 generated entries (tuple returns, many arguments, autogen, formulas): anything
    # superlinear in tgen's checks shows here (bench/gen_synthetic_spec.py).
    local syn; syn=$(mktemp -d)
    if python3 bench/gen_synthetic_spec.py --entries 20000 "$syn/native.yaml" "$syn/derivs.yaml"; then
      time_cmd tgen_check_synthetic_20k "$BUILD/tgen" --check --strict "$syn/native.yaml" \
        "$syn/derivs.yaml"
    else
      note "tgen_check_synthetic_20k skipped: bench/gen_synthetic_spec.py failed"
    fi
    rm -rf "$syn"
  fi
  if wanted tgen_check_pytorch_2_15; then
    local p215=../shared/pytorch-2.15.0
    if [ -f "$p215/native_functions.yaml" ] && [ -f "$p215/derivatives.yaml" ]; then
      time_cmd --allow-exit1 tgen_check_pytorch_2_15 "$BUILD/tgen" --check \
        "$p215/native_functions.yaml" "$p215/derivatives.yaml"
    else
      note "tgen_check_pytorch_2_15 skipped: $p215 is absent"
    fi
  fi
  # Every file of ../shared/thirdparty-specs/ checked as `make check-thirdparty-specs` checks it
  # (issue 35: under 0.5 s together): the sum of the tgen runs' wall times, from the script's
  # last line, median of $REPEATS runs.
  if wanted tgen_check_thirdparty_specs; then
    if [ -d ../shared/thirdparty-specs ]; then
      local i ms=()
      for ((i = 0; i < REPEATS; i++)); do
        ms+=("$(CHECK_ONLY=1 tests/codegen/check_thirdparty_specs.sh "$BUILD/tgen" 2>/dev/null |
                sed -n 's/.* \([0-9]*\) ms of wall time$/\1/p')")
      done
      printf '%s\n' "${ms[@]}" | sort -g | awk -v ct="$CORETYPE" '
        { v[NR] = $1 / 1000 }
        END { if (NR == 0 || v[1] == "") exit
              m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "{\"name\": \"tgen_check_thirdparty_specs\", \"unit\": \"s\", \"value\": %.4f, \"best\": %.4f, \"median\": %.4f, \"n\": %d, \"threads\": 1, \"src\": \"tensorgen\", \"coretype\": \"%s\"}\n", m, v[1], m, NR, ct }'
    else
      note "tgen_check_thirdparty_specs skipped: ../shared/thirdparty-specs is absent"
    fi
  fi
  # The full PyTorch surface (every entry and derivative; --runtime as `make gen`), generated
  # into an emptied scratch directory each run, so every file is rendered and written (issue
  # 10's goal: under 0.3 s). The directory is in /dev/shm when there is one: 2,700 of the
  # files are per-operator headers, and creating them on a slow virtual disk costs more than
  # tgen itself (about 0.9 s on one VM), which would time the disk. torchgen (Debian's python3-torch 1.13, when installed) generating
  # ATen's C++ from the same 1.13.1 file is the reference.
  local v
  for v in 1.13.1 2.15.0; do
    local name="tgen_gen_pytorch_${v%.*}_specs" dir=../shared/pytorch-$v tmp
    name=${name//./_}
    wanted "$name" || continue
    if [ -f "$dir/native_functions.yaml" ] && [ -f "$dir/derivatives.yaml" ]; then
      tmp=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
      time_cmd "$name" sh -c 'rm -rf "$1"/out && exec "$2" --gen \
        --native "$3/native_functions.yaml" --derivatives "$3/derivatives.yaml" \
        --runtime runtime --templates templates --out "$1/out" --docs "$1/out"' \
        sh "$tmp" "$BUILD/tgen" "$dir"
      rm -rf "$tmp"
    else
      note "$name skipped: $dir is absent"
    fi
  done
  if wanted torchgen_gen_pytorch_1_13_specs; then
    local tg=/usr/lib/python3/dist-packages/torchgen tmp
    if [ -d "$tg/packaged/ATen/templates" ] && [ -f "$PYTORCH_SPECS/native_functions.yaml" ]; then
      tmp=$(mktemp -d)
      mkdir -p "$tmp/src/native"
      cp -r "$tg/packaged/ATen/templates" "$tmp/src/"
      cp "$PYTORCH_SPECS/native_functions.yaml" "$PYTORCH_SPECS/tags.yaml" "$tmp/src/native/"
      REPEATS=3 TIME_SRC=pytorch time_cmd torchgen_gen_pytorch_1_13_specs sh -c \
        'rm -rf "$1/out" && exec "$2" -m torchgen.gen -s "$1/src" -d "$1/out"' sh "$tmp" "$PY"
      rm -rf "$tmp"
    else
      note "torchgen_gen_pytorch_1_13_specs skipped: no torchgen at $tg"
    fi
  fi
  if wanted tgen_gen_project_specs; then
    # What `make gen` does (parse, validate, render every file, write those whose text
    # changed), pointed at a scratch directory so the checked-in generated/ is not touched.
    # The untimed warm-up run fills it, so timed runs compare and write nothing, like a
    # `make gen` on an up-to-date tree.
    local tmp; tmp=$(mktemp -d)
    local derivs=(); [ -f specs/derivatives.yaml ] && derivs=(--derivatives specs/derivatives.yaml)
    time_cmd tgen_gen_project_specs "$BUILD/tgen" --gen --native specs/native_functions.yaml \
      "${derivs[@]}" --templates templates --out "$tmp" --docs "$tmp"
    rm -rf "$tmp"
  fi
}

# ---------------------------------------------------------------- anchors and PyTorch
anchor_bench() {
  if [ "${BENCH_ANCHORS:-1}" = 0 ]; then note "anchors skipped (BENCH_ANCHORS=0)"; return; fi
  if [ ! -d "$ANCHORS" ]; then note "anchors skipped: $ANCHORS is absent"; return; fi
  local dir=$BUILD/anchors; mkdir -p "$dir"
  # Build lines from the anchors' README.
  if wanted stream_add || wanted stream_sum || wanted add_16M || wanted sum_16M; then
    if gcc -O3 -march=native -ffast-math -fopenmp -o "$dir/bandwidth" "$ANCHORS/bandwidth.c" 2>/dev/null; then
      "$dir/bandwidth" | grep -E '"stream_(add|sum)"' | tag_coretype none
    else note "anchor bandwidth did not build"; fi
  fi
  if wanted cblas_sgemm_ || wanted mm_; then
    if gcc -O3 -march=native -o "$dir/blas_bench" "$ANCHORS/blas_bench.c" -lopenblas 2>/dev/null; then
      "$dir/blas_bench" | tag_coretype "$CORETYPE"
    else note "anchor blas_bench did not build (libopenblas-dev?)"; fi
  fi
  if "$PY" -c 'import torch' 2>/dev/null; then
    local sel=overhead_torch_add,overhead_autograd,add_16M,exp_16M,sum_16M,mm_,softmax,mlp
    [ -n "$ONLY" ] && sel=$ONLY
    "$PY" "$ANCHORS/torch_bench.py" --threads "$THREADS" --repeats "$REPEATS" --only "$sel" \
      | tag_coretype "$CORETYPE"
    # The workloads torch_bench.py lacks (vector math, amax, strided sum, var): our own script.
    "$PY" bench/torch_pointwise.py --threads "$THREADS" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"} \
      | tag_coretype "$CORETYPE"
    # Vision: conv2d and the ResNet-8 step from the anchors, pooling and batch norm from ours.
    if wanted conv2d_ || wanted resnet8; then
      "$PY" "$ANCHORS/torch_cnn.py" --threads "$THREADS" --repeats "$REPEATS" \
        --only "${ONLY:-conv2d_fwd,conv2d_fwdbwd,resnet8}" | grep -v '"resnet8_info"' \
        | tag_coretype "$CORETYPE"
    fi
    "$PY" bench/torch_vision.py --threads "$THREADS" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"} \
      | tag_coretype "$CORETYPE"
    # Language models: the small workloads and the character GPT from ours, GPT-2 124M from
    # the anchors, on the checkpoint tg_bench loaded.
    "$PY" bench/torch_lm.py --threads "$THREADS" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"} \
      | tag_coretype "$CORETYPE"
    # The data loader: one epoch of augmented digits, DataLoader(num_workers=2).
    "$PY" bench/torch_loader.py --threads "$THREADS" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"} \
      | tag_coretype "$CORETYPE"
    # Functional transforms: the MLP's forward, jvp and hvp (torch.func's functorch in 1.13,
    # forward_ad by hand, and torch.autograd.functional).
    "$PY" bench/torch_functional.py --threads "$THREADS" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"} \
      | tag_coretype "$CORETYPE"
    if [ -n "${TG_BENCH_GPT2_DIR:-}" ]; then
      "$PY" "$ANCHORS/torch_gpt2.py" --ckpt "$TG_BENCH_GPT2_DIR/gpt2_124m_rand.bin" \
        --tokens "$TG_BENCH_GPT2_DIR/tok_124m.bin" --B 4 --T 64 --warmup 1 --steps 3 \
        --threads "$THREADS" --cfg "torch_t$THREADS" --name gpt2_124m_b4_t64_step \
        | tag_coretype "$CORETYPE"
    fi
    # PyTorch's best configuration for the BLAS-heavy MLP on 2 cores (as run_all.sh): ATen on
    # one thread, OpenBLAS's own pool on two, so the two pools do not fight for the cores.
    if wanted mlp_784_512_512_10_b128_sgd_step; then
      OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=2 "$PY" "$ANCHORS/torch_bench.py" --child --threads 1 \
        --repeats "$REPEATS" --only mlp \
        | sed -u 's/"src": "torch"/"src": "torch_omp1_blas2"/' | tag_coretype "$CORETYPE"
    fi
  else
    note "PyTorch figures skipped: $PY cannot import torch (apt-get install python3-torch)"
  fi
  # libtorch's C++ overhead (dispatcher, autograd) without Python, when libtorch-dev is there.
  if wanted overhead_autograd || wanted overhead_add; then
    if [ -x "$dir/libtorch_overhead" ] && [ "$dir/libtorch_overhead" -nt "$ANCHORS/libtorch_overhead.cpp" ] ||
       g++ -O2 -std=c++17 -o "$dir/libtorch_overhead" "$ANCHORS/libtorch_overhead.cpp" \
         -I/usr/include/torch/csrc/api/include -ltorch -ltorch_cpu -lc10 2>/dev/null; then
      "$dir/libtorch_overhead" 1 | tag_coretype "$CORETYPE"
    else
      note "anchor libtorch_overhead did not build (libtorch-dev?)"
    fi
  fi
}

# ---------------------------------------------------------------- GPT-2 124M data
# The random GPT-2 124M checkpoint and tokens of the anchors (gen_llmc_data.py, about 500 MB,
# made once into $BUILD/anchors/gpt2): tg_bench reads them from TG_BENCH_GPT2_DIR, torch_gpt2.py
# from the same files, so both start from the same weights and the first losses must agree.
GPT2_DIR=$BUILD/anchors/gpt2
if wanted gpt2_124m_b4_t64_step && [ -f "$ANCHORS/gen_llmc_data.py" ]; then
  if [ ! -s "$GPT2_DIR/gpt2_124m_rand.bin" ] || [ ! -s "$GPT2_DIR/tok_124m.bin" ]; then
    "$PY" "$ANCHORS/gen_llmc_data.py" --out "$GPT2_DIR" --preset 124m >/dev/null 2>&1 ||
      note "gen_llmc_data.py failed: gpt2_124m_b4_t64_step skipped (python3-numpy?)"
  fi
  [ -s "$GPT2_DIR/gpt2_124m_rand.bin" ] && export TG_BENCH_GPT2_DIR=$GPT2_DIR
fi

# ---------------------------------------------------------------- run
{
  "$BUILD/bench/tg_bench" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"}
  if [ -x "$BUILD/bench/tg_bench_shared" ]; then
    "$BUILD/bench/tg_bench_shared" --repeats "$REPEATS" ${ONLY:+--only "$ONLY"}
  fi
  tgen_bench
  anchor_bench
} | tee "$OUT"

# ---------------------------------------------------------------- comparison (stderr)
# One row per tensorgen workload: its median next to PyTorch's and the baseline's from this run.
awk '
  function field(k,   m) { if (match($0, "\"" k "\": \"?[^,\"}]*")) { m = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": "?/, "", m); return m } return "" }
  { v[field("src") ":" field("name")] = field("value"); u[field("name")] = field("unit")
    if (field("src") == "tensorgen") order[++n] = field("name") }
  function get(k) { return (k in v) ? v[k] : "-" }
  END {
    if (!n) exit
    torch["overhead_add_1elem"] = "overhead_torch_add_1elem"; torch["overhead_add_out_1elem"] = "overhead_torch_add_out_1elem"
    base["add_16M_out"] = "stream:stream_add_16M"; base["add_16M_alloc"] = "stream:stream_add_16M"
    base["sum_16M"] = "stream:stream_sum_16M"
    for (s = 256; s <= 2048; s *= 2) base["mm_" s] = "openblas-direct:blas_sgemm_" s
    base["overhead_add_1elem"] = "libtorch:cpp_at_add_1elem"; base["overhead_add_out_1elem"] = "libtorch:cpp_at_add_out_1elem"
    base["overhead_autograd_mul_sum_backward_1elem"] = "libtorch:cpp_autograd_mul_sum_backward_1elem"
    base["mlp_784_512_512_10_b128_sgd_step"] = "torch_omp1_blas2:mlp_784_512_512_10_b128_sgd_step"
    printf "\n%-34s %-8s %12s %12s %12s  %s\n", "workload", "unit", "tensorgen", "torch", "baseline", "(baseline)" > "/dev/stderr"
    for (i = 1; i <= n; i++) {
      w = order[i]; t = (w in torch) ? torch[w] : w
      printf "%-34s %-8s %12s %12s %12s  %s\n", w, u[w], get("tensorgen:" w), get("torch:" t),
             (w in base) ? get(base[w]) : "-", (w in base) ? base[w] : "" > "/dev/stderr"
    }
  }' "$OUT"
note "JSON lines saved in $OUT"
