#!/usr/bin/python3
"""PyTorch's figures for the functional-transform workloads of tg_bench
(bench/bench_functional.c), on the same shapes, float32, one JSON line per workload in
torch_bench.py's format: an MLP 784-512-10 (tanh) on a batch of 128.

  fwd_mlp_784_512_10_b128  the forward under torch.no_grad()                     src "torch"
  jvp_mlp_784_512_10_b128  jvp of the logits w.r.t. x, forward mode:
                           functorch.jvp (torch.func in later releases)          src "torch"
                           torch.autograd.forward_ad, a dual level by hand       src "torch_forward_ad"
                           torch.autograd.functional.jvp (the double-vjp trick)  src "torch_autograd_functional"
  hvp_mlp_784_512_10_b128  hvp of the cross-entropy loss w.r.t. the parameters:
                           functorch.jvp(functorch.grad(f)), forward-over-reverse src "torch"
                           (the loss as logsumexp - picked logit: 1.13 has no forward formula
                           for nll_loss_backward)
                           torch.autograd.functional.hvp (double backward)       src "torch_autograd_functional"

The jvp and hvp lines carry "ratio_to_fwd" (their median over the forward's of the same run).

Usage: /usr/bin/python3 bench/torch_functional.py [--threads 2] [--repeats 7] [--only a,b]"""
import argparse
import json
import math
import statistics
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w]
    names = ["fwd_mlp_784_512_10_b128", "jvp_mlp_784_512_10_b128", "hvp_mlp_784_512_10_b128"]
    if only and not any(w in n for n in names for w in only):
        return

    import torch
    import torch.nn.functional as F
    from torch.autograd import functional as AF
    import functorch
    import torch.autograd.forward_ad as fwAD
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    def want(name):
        return not only or any(w in name for w in only)

    def ms(name, fn, inner, src="torch", fwd=None):
        for _ in range(inner):
            fn()
        vals = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            vals.append((time.perf_counter() - t) / inner * 1e3)
        med = statistics.median(vals)
        line = {"name": name, "unit": "ms", "value": round(med, 4), "best": round(min(vals), 4),
                "median": round(med, 4), "n": len(vals), "threads": args.threads, "src": src}
        if fwd:
            line["ratio_to_fwd"] = round(med / fwd, 3)
        print(json.dumps(line), flush=True)
        return med

    x = torch.rand(128, 784)
    y = torch.randint(10, (128,))
    tx = torch.randn(128, 784)
    params = []
    for out_f, in_f in [(512, 784), (10, 512)]:  # nn.Linear's init
        bound = 1 / math.sqrt(in_f)
        params += [torch.rand(out_f, in_f) * 2 * bound - bound, torch.rand(out_f) * 2 * bound - bound]
    vp = tuple(torch.randn_like(p) for p in params)
    params = tuple(params)

    def mlp(x, W1, b1, W2, b2):
        return F.linear(torch.tanh(F.linear(x, W1, b1)), W2, b2)

    def logits(x):
        return mlp(x, *params)

    def loss(*p):
        return F.cross_entropy(mlp(x, *p), y)

    # PyTorch 1.13 has no forward-mode formula for nll_loss_backward nor
    # _log_softmax_backward_data, so forward-over-reverse cannot go through F.cross_entropy:
    # the same loss from logsumexp, whose backward is made of operators that have one.
    onehot = F.one_hot(y, 10).float()

    def loss_fwd_ok(*p):
        z = mlp(x, *p)
        return (torch.logsumexp(z, 1) - (z * onehot).sum(1)).mean()
    assert torch.allclose(loss(*params), loss_fwd_ok(*params))

    def fwd():
        with torch.no_grad():
            logits(x)

    f_ms = ms("fwd_mlp_784_512_10_b128", fwd, 20)
    if want("jvp_mlp_784_512_10_b128"):
        ms("jvp_mlp_784_512_10_b128", lambda: functorch.jvp(logits, (x,), (tx,)), 20, fwd=f_ms)
        def fwd_ad():
            with fwAD.dual_level():
                fwAD.unpack_dual(logits(fwAD.make_dual(x, tx)))
        ms("jvp_mlp_784_512_10_b128", fwd_ad, 20, src="torch_forward_ad", fwd=f_ms)
        ms("jvp_mlp_784_512_10_b128", lambda: AF.jvp(logits, (x,), (tx,)), 20,
           src="torch_autograd_functional", fwd=f_ms)
    if want("hvp_mlp_784_512_10_b128"):
        grad_loss = functorch.grad(loss_fwd_ok, argnums=(0, 1, 2, 3))
        ms("hvp_mlp_784_512_10_b128", lambda: functorch.jvp(grad_loss, params, vp), 10, fwd=f_ms)
        ms("hvp_mlp_784_512_10_b128", lambda: AF.hvp(loss, params, vp), 10,
           src="torch_autograd_functional", fwd=f_ms)


if __name__ == "__main__":
    main()
