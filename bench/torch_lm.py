#!/usr/bin/python3
"""PyTorch's figures for the language-model workloads of tg_bench (bench/bench_lm.c), on the
same shapes, float32, one JSON line per workload in torch_bench.py's format ("src": "torch"):
layernorm_fwdbwd, sdpa_causal_fwdbwd (PyTorch 1.13 has no
scaled_dot_product_attention: the explicit causal attention of the anchors' torch_gpt2.py),
embedding_fwdbwd and gpt_char_step (examples/train_gpt.c's model and optimizer).
../shared/bench-anchors/torch_gpt2.py gives gpt2_124m_b4_t64_step.

Usage: /usr/bin/python3 bench/torch_lm.py [--threads 2] [--repeats 7] [--only a,b]"""
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

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    def want(name):
        return not only or any(w in name for w in only)

    def ms(name, fn, inner=2, warm=1, unit="ms"):
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
        print(json.dumps({"name": name, "unit": unit, "value": round(med, 4),
                          "best": round(min(vals), 4), "median": round(med, 4), "n": len(vals),
                          "threads": args.threads, "src": "torch"}), flush=True)

    if want("layernorm_fwdbwd"):
        x = torch.rand(4096, 768, requires_grad=True)
        w = torch.rand(768, requires_grad=True)
        b = torch.rand(768, requires_grad=True)

        def layernorm():
            x.grad = w.grad = b.grad = None
            F.layer_norm(x, (768,), w, b).sum().backward()
        ms("layernorm_fwdbwd", layernorm, inner=4)

    if want("sdpa_causal_fwdbwd"):
        B, H, T, d = 4, 12, 256, 64
        q, k, v = (torch.rand(B, H, T, d, requires_grad=True) for _ in range(3))
        mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)

        def sdpa():
            q.grad = k.grad = v.grad = None
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
            att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
            (att @ v).sum().backward()
        ms("sdpa_causal_fwdbwd", sdpa)

    if want("embedding_fwdbwd"):
        w = torch.rand(50257, 768, requires_grad=True)
        idx = (torch.rand(4, 64) * 50256).long()

        def embedding():
            w.grad = None
            F.embedding(idx, w).sum().backward()
        ms("embedding_fwdbwd", embedding)

    if want("gpt_char_step"):
        ms("gpt_char_step", char_gpt_step(torch, nn, F), inner=1, unit="ms/step")


def char_gpt_step(torch, nn, F):
    """examples/train_gpt.c's model (4 layers, 4 heads, 128 channels, context 128, vocabulary
    86, tied head, GELU tanh) and AdamW step on one batch of 16 x 128."""
    L, NH, C, T, V, B = 4, 4, 128, 128, 86, 16

    class Block(nn.Module):
        def __init__(s):
            super().__init__()
            s.ln_1, s.c_attn, s.c_proj = nn.LayerNorm(C), nn.Linear(C, 3 * C), nn.Linear(C, C)
            s.ln_2, s.c_fc, s.mlp_proj = nn.LayerNorm(C), nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

        def forward(s, x, mask):
            b, t, _ = x.shape
            q, k, v = s.c_attn(s.ln_1(x)).split(C, dim=2)
            q, k, v = (u.view(b, t, NH, C // NH).transpose(1, 2) for u in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // NH))
            att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
            x = x + s.c_proj((att @ v).transpose(1, 2).contiguous().view(b, t, C))
            return x + s.mlp_proj(F.gelu(s.c_fc(s.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(s):
            super().__init__()
            s.wte, s.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
            s.h = nn.ModuleList([Block() for _ in range(L)])
            s.ln_f = nn.LayerNorm(C)
            s.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

        def forward(s, idx, targets):
            x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1]))
            for blk in s.h:
                x = blk(x, s.mask)
            logits = F.linear(s.ln_f(x), s.wte.weight)
            return F.cross_entropy(logits.view(-1, V), targets.view(-1))

    m = GPT()
    decay = [p for p in m.parameters() if p.dim() == 2]
    rest = [p for p in m.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": rest, "weight_decay": 0.0}], lr=1e-3, betas=(0.9, 0.95))
    tok = torch.arange(B * T + 1) * 7919 % V
    x, y = tok[:-1].view(B, T), tok[1:].view(B, T)

    def step():
        opt.zero_grad(set_to_none=True)
        m(x, y).backward()
        opt.step()
    return step


if __name__ == "__main__":
    main()
