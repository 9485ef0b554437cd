#!/usr/bin/env python3
"""PyTorch's figures for the GPU workloads of bench/bench_cuda.c, one JSON line each (the
format of BENCH.md), so that a GPU session prints both sides in one run.

Same sizes, same counting, same timing as bench_cuda.c: CUDA events around `inner` calls after
one warm-up repeat, `--repeats` repeats, median as "value", fastest as "best". Float32 matmuls
are full float32 (TF32 off) unless BENCH_TF32=1, as on tensorgen's side.

    python3 bench/torch_cuda.py [--repeats 7]
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F

N256M = 256 * 1024 * 1024


def emit(name, unit, secs, work=0.0, scale=0.0):
    """work > 0: a rate (work / s / 1e9); else seconds times scale."""
    vals = [work / s / 1e9 for s in secs] if work else [s * scale for s in secs]
    best = max(vals) if work else min(vals)
    print(json.dumps({"name": name, "unit": unit, "value": statistics.median(vals), "best": best,
                      "n": len(vals), "threads": torch.get_num_threads(), "src": "pytorch",
                      "device": torch.cuda.get_device_name(0),
                      "torch": torch.__version__}), flush=True)


def gpu_time(body, inner, repeats):
    for _ in range(inner):
        body()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    secs = []
    for _ in range(repeats):
        e0.record()
        for _ in range(inner):
            body()
        e1.record()
        e1.synchronize()
        secs.append(e0.elapsed_time(e1) * 1e-3 / inner)
    return secs


def host_time(body, inner, repeats):
    for _ in range(1000):
        body()
    secs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            body()
        torch.cuda.synchronize()
        secs.append((time.perf_counter() - t0) / inner)
    return secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    r = ap.parse_args().repeats
    tf32 = bool(os.environ.get("BENCH_TF32"))
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    dev = "cuda"

    a1, b1, o1 = (torch.randn(1, device=dev) for _ in range(3))
    emit("cuda_overhead_add_out_1elem", "ns/call",
         host_time(lambda: torch.add(a1, b1, out=o1), 100000, r), scale=1e9)

    a, b, out = (torch.rand(N256M, device=dev) for _ in range(3))
    emit("cuda_add_256M_out", "GB/s", gpu_time(lambda: torch.add(a, b, out=out), 5, r),
         work=3 * 4.0 * N256M)
    emit("cuda_sum_256M", "GB/s", gpu_time(lambda: a.sum(), 5, r), work=4.0 * N256M)
    del a, b, out

    for dt, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for n in (4096, 8192):
            a, b = torch.randn(n, n, device=dev, dtype=dt), torch.randn(n, n, device=dev, dtype=dt)
            out = torch.empty(n, n, device=dev, dtype=dt)
            name = "cuda_mm_%d_%s%s" % (n, tag, "_tf32" if tf32 and tag == "f32" else "")
            emit(name, "GFLOP/s", gpu_time(lambda: torch.mm(a, b, out=out), 3, r),
                 work=2.0 * n ** 3)
            del a, b, out

    for rows, cols in ((4096, 1024), (8192, 8192), (65536, 128)):
        x = torch.randn(rows, cols, device=dev)
        emit("cuda_softmax_%dx%d_lastdim" % (rows, cols), "ms",
             gpu_time(lambda: torch.softmax(x, -1), 20, r), scale=1e3)
        del x

    widths = (784, 512, 512, 10)
    params = []
    for i in range(3):
        bound = 1.0 / widths[i] ** 0.5
        params.append((torch.rand(widths[i + 1], widths[i], device=dev) * 2 * bound - bound)
                      .requires_grad_())
        params.append((torch.rand(widths[i + 1], device=dev) * 2 * bound - bound)
                      .requires_grad_())
    x, y = torch.rand(128, 784, device=dev), torch.randint(0, 10, (128,), device=dev)

    def mlp_step():
        h = x
        for i in range(3):
            h = F.linear(h, params[2 * i], params[2 * i + 1])
            if i < 2:
                h = torch.relu(h)
        loss = F.cross_entropy(h, y)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-0.01)

    emit("cuda_mlp_784_512_512_10_b128_sgd_step", "ms/step", gpu_time(mlp_step, 50, r), scale=1e3)

    xi = torch.rand(8, 64, 56, 56, device=dev)
    w = torch.rand(64, 64, 3, 3, device=dev) * 0.01
    with torch.no_grad():
        emit("cuda_conv2d_fwd", "ms", gpu_time(lambda: F.conv2d(xi, w, padding=1), 20, r),
             scale=1e3)
    xi.requires_grad_()
    w.requires_grad_()

    def conv_fwdbwd():
        xi.grad = None
        w.grad = None
        F.conv2d(xi, w, padding=1).sum().backward()

    emit("cuda_conv2d_fwdbwd", "ms", gpu_time(conv_fwdbwd, 10, r), scale=1e3)


if __name__ == "__main__":
    main()
