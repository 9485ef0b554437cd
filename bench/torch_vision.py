#!/usr/bin/python3
"""PyTorch's figures for the vision workloads of tg_bench that ../shared/bench-anchors/
torch_cnn.py does not time: max_pool2d 3x3 stride 2 padding 1 on 8x64x112x112 and batch_norm
(training) on 32x64x56x56, each forward + backward of .sum(), on the same shapes as
bench/bench_vision.c. One JSON line per workload in torch_bench.py's format ("src": "torch");
bench/run.sh runs it beside tg_bench (torch_cnn.py gives conv2d and the ResNet-8 step).

Usage: /usr/bin/python3 bench/torch_vision.py [--threads 2] [--repeats 7] [--only a,b]"""
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
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    def want(name):
        return not only or any(w in name for w in only)

    def ms(name, fn, inner=2, warm=1):
        if not want(name):
            return
        for _ in range(warm * inner):
            fn()
        vals = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            vals.append((time.perf_counter() - t) / inner * 1e3)
        med = statistics.median(vals)
        print(json.dumps({"name": name, "unit": "ms", "value": round(med, 4),
                          "best": round(min(vals), 4), "median": round(med, 4), "n": len(vals),
                          "threads": args.threads, "src": "torch"}), flush=True)

    x = torch.rand(8, 64, 112, 112, requires_grad=True)

    def maxpool():
        x.grad = None
        F.max_pool2d(x, 3, 2, 1).sum().backward()
    ms("maxpool2d_fwdbwd", maxpool)

    b = torch.rand(32, 64, 56, 56, requires_grad=True)
    w = torch.ones(64, requires_grad=True)
    bias = torch.zeros(64, requires_grad=True)
    rm, rv = torch.zeros(64), torch.ones(64)

    def batchnorm():
        b.grad = w.grad = bias.grad = None
        F.batch_norm(b, rm, rv, w, bias, training=True, momentum=0.1, eps=1e-5).sum().backward()
    ms("batchnorm2d_train_fwdbwd", batchnorm)


if __name__ == "__main__":
    main()
