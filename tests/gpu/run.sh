#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU, from the repository root, over what tests/gpu/pack.sh
# packed: the whole test suite (the CUDA tests run instead of skipping), the examples on the
# GPU, and the GPU benchmarks with PyTorch's figures beside them (bench/torch_cuda.py, when the
# machine's python3 has torch with CUDA). Logs go to $OUT (default build/gpu-run/).
#
#   tests/gpu/run.sh [BUNDLE]       default: .dev/bundle.tar.xz
set -uo pipefail
cd "$(dirname "$0")/../.."
BUNDLE=${1:-.dev/bundle.tar.xz}
OUT=${OUT:-build/gpu-run}
mkdir -p "$OUT"
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall('.dev/x')" "$BUNDLE" || exit 1
cp -a .dev/x/build . 2>/dev/null || { mkdir -p build && cp -a .dev/x/build/. build/; }
# The CUDA runtime, cuBLAS and cuDNN where this machine keeps them (toolkit or Python wheels).
cudadirs=$(find /usr/local /opt /usr/lib -name 'libcublas.so.13' -o -name 'libcudnn.so.9' 2>/dev/null |
           xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$PWD/build:$PWD/.dev/x/lib:$cudadirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$OUT/gpu.txt"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >> "$OUT/gpu.txt"

step() { echo "== $*"; }
step "suite"
t0=$(date +%s)
TGEN=build/tgen timeout ${SUITE_TIMEOUT:-420} build/tests/tg_tests -j${JOBS:-16} --verbose 2>&1 |
  grep -vE '^\[(RUN |PASS)\]|^\[====\] Running' > "$OUT/tests.log"
echo "suite: $(( $(date +%s) - t0 )) s"
grep -E '^\[(FAIL|----)\]|Synthesis|CRASH|SIGSEGV|Assertion' "$OUT/tests.log" | tail -40

step "examples on the GPU"
build/examples/train_cnn --device cuda --epochs 3 --data .dev/x/data/digits.csv.gz > "$OUT/train_cnn.log" 2>&1
echo "train_cnn: exit $?"; tail -3 "$OUT/train_cnn.log"
build/examples/train_gpt --device cuda --data .dev/x/data/licenses --checkpoint "$OUT/gpt.safetensors" > "$OUT/train_gpt.log" 2>&1
echo "train_gpt: exit $?"; grep -E 'step|val|tokens' "$OUT/train_gpt.log" | tail -4
rm -f "$OUT/gpt.safetensors"

step "GPU benchmarks"
OMP_NUM_THREADS=2 build/bench/tg_bench --only cuda_,cublas_ > "$OUT/bench_tensorgen.jsonl" 2> "$OUT/bench_tensorgen.err"
python3 bench/torch_cuda.py > "$OUT/bench_pytorch.jsonl" 2> "$OUT/bench_pytorch.err"
python3 - "$OUT" <<'PY'
import json, sys
def load(p):
    try:
        return {j["name"]: j for j in map(json.loads, open(p)) if "name" in j}
    except FileNotFoundError:
        return {}
tg, pt = load(sys.argv[1] + "/bench_tensorgen.jsonl"), load(sys.argv[1] + "/bench_pytorch.jsonl")
for n, j in tg.items():
    p = pt.get(n)
    print("%-40s %12.3f %-8s %s" % (n, j["value"], j["unit"], "" if not p else "pytorch %.3f" % p["value"]))
PY
tail -3 "$OUT/bench_tensorgen.err" "$OUT/bench_pytorch.err"
