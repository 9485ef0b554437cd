#!/usr/bin/python3
"""PyTorch's figures for the tg_bench workloads that ../shared/bench-anchors/torch_bench.py
does not time: vector math (sigmoid, tanh, log, sin, sqrt, pow), reductions (amax, the strided
sum, var) on the same shapes and inputs as bench/tg_bench.c. One JSON line per workload, in
torch_bench.py's format ("src": "torch"); bench/run.sh runs it beside tg_bench.

Usage: /usr/bin/python3 bench/torch_pointwise.py [--threads 2] [--repeats 7] [--only a,b]
OMP_NUM_THREADS must be set before this starts (bench/run.sh does)."""
import argparse
import json
import statistics
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w]

    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    def want(name):
        return not only or any(w in name for w in only)

    def times(fn, inner=10, warm=2):
        """Seconds per call, one figure per repeat of `inner` calls (as tg_bench)."""
        for _ in range(warm * inner):
            fn()
        out = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            out.append((time.perf_counter() - t) / inner)
        return out

    def emit(name, unit, vals, higher_better):
        best = max(vals) if higher_better else min(vals)
        med = statistics.median(vals)
        print(json.dumps({"name": name, "unit": unit, "value": round(med, 4),
                          "best": round(best, 4), "median": round(med, 4), "n": len(vals),
                          "threads": args.threads, "src": "torch"}), flush=True)

    def gbps(name, nbytes, fn):
        if want(name):
            emit(name, "GB/s", [nbytes / t / 1e9 for t in times(fn)], True)

    def ms(name, fn):
        if want(name):
            emit(name, "ms", [t * 1e3 for t in times(fn)], False)

    n = 16 * 1024 * 1024
    x, z = torch.rand(n), torch.empty(n)
    for op in ("sigmoid", "tanh", "log", "sin", "sqrt"):
        f = getattr(torch, op)
        gbps(f"{op}_16M_out", 2 * 4 * n, lambda f=f: f(x, out=z))
    gbps("pow_16M_out", 2 * 4 * n, lambda: torch.pow(x, 2.5, out=z))
    gbps("gelu_16M_out", 2 * 4 * n, lambda: torch._C._nn.gelu(x, out=z))
    gbps("gelu_tanh_16M_out", 2 * 4 * n, lambda: torch._C._nn.gelu(x, approximate="tanh", out=z))
    gbps("amax_16M", 4 * n, lambda: torch.amax(x))
    m = torch.rand(4096, 4096)
    gbps("sum_16M_strided", 4 * n, lambda: torch.sum(m, dim=0))
    r = torch.rand(4096, 1024)
    ms("var_4096x1024_lastdim", lambda: torch.var(r, dim=-1))


if __name__ == "__main__":
    main()
