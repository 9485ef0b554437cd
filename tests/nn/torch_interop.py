#!/usr/bin/env python3
"""State dicts against PyTorch (`make test-nn-torch`): files PyTorch writes load into
tensorgen's modules and give PyTorch's outputs, and files tensorgen writes load into PyTorch
with load_state_dict(strict=True).

    torch_interop.py NN_INTEROP

Runs with Debian's python3-torch and python3-torchvision (random weights, no download):
  1. torchvision's resnet18 (random weights and random batch-norm statistics, eval mode) and a
     GPT-2 written here with Hugging Face's module names and Conv1D layers (GPT2LMHeadModel:
     transformer.wte ... lm_head tied to wte), their state dicts written as safetensors files
     the way Hugging Face does (tied weights once), inputs and PyTorch's outputs beside them;
  2. the C side (tests/nn/interop/nn_interop.c) loads them strictly (0 missing, 0 unexpected),
     compares its outputs with PyTorch's to 1e-5 and writes its own state dicts;
  3. those files load here with load_state_dict(strict=True) and reproduce the outputs.
The safetensors files are written and read by the few lines below (8-byte header length, JSON
header, raw little-endian data), so that no package beyond torch is needed.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}


def save_file(tensors, path):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_file(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        b, e = h["data_offsets"]
        t = torch.frombuffer(bytearray(raw[8 + n + b:8 + n + e]), dtype=TORCH_DTYPES[h["dtype"]])
        out[name] = t.reshape(h["shape"])
    return out


# ---- GPT-2 in Hugging Face's layout (transformers.models.gpt2, written out) ----
class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.randn(nf) * 0.02)

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, e, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = Conv1D(3 * e, e)
        self.c_proj = Conv1D(e, e)

    def forward(self, x):
        b, t, e = x.shape
        q, k, v = self.c_attn(x).split(e, dim=2)
        q, k, v = (z.view(b, t, self.heads, e // self.heads).transpose(1, 2) for z in (q, k, v))
        w = (q @ k.transpose(-1, -2)) / math.sqrt(e // self.heads)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        w = w.masked_fill(~mask, torch.finfo(w.dtype).min).softmax(-1)
        y = (w @ v).transpose(1, 2).reshape(b, t, e)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, e):
        super().__init__()
        self.c_fc = Conv1D(4 * e, e)
        self.c_proj = Conv1D(e, 4 * e)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, e, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(e)
        self.attn = Attention(e, heads)
        self.ln_2 = nn.LayerNorm(e)
        self.mlp = MLP(e)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, vocab, positions, e, layers, heads):
        super().__init__()
        self.wte = nn.Embedding(vocab, e)
        self.wpe = nn.Embedding(positions, e)
        self.h = nn.ModuleList(Block(e, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(e)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, **cfg):
        super().__init__()
        self.transformer = GPT2Model(**cfg)
        self.lm_head = nn.Linear(cfg["e"], cfg["vocab"], bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, idx):
        return self.lm_head(self.transformer(idx))


GPT_CFG = dict(vocab=101, positions=32, e=64, layers=2, heads=4)


def layer_zoo():
    """Each layer of nn/ with PyTorch's version of it, an input and the output: name -> (module,
    inputs, train mode). The C side builds the same layers (nn_interop.c, zoo[])."""
    mask = torch.rand(5, 4) < 0.3
    mask[:, 0] = False  # every query sees at least one key
    causal = torch.full((6, 6), float("-inf")).triu(1)
    return {
        "lin": (nn.Linear(5, 4), [torch.randn(3, 5)], False),
        "c1": (nn.Conv1d(4, 6, 3, stride=2, padding=1), [torch.randn(2, 4, 9)], False),
        "c2": (nn.Conv2d(4, 6, 3, padding=1, groups=2), [torch.randn(2, 4, 7, 7)], False),
        "ct": (nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
               [torch.randn(2, 4, 5, 5)], False),
        "bn": (nn.BatchNorm2d(4), [torch.randn(3, 4, 5, 5)], True),
        "bn1": (nn.BatchNorm1d(4), [torch.randn(6, 4)], False),
        "ln": (nn.LayerNorm(6), [torch.randn(2, 3, 6)], False),
        "gn": (nn.GroupNorm(2, 4), [torch.randn(2, 4, 3, 3)], False),
        "emb": (nn.Embedding(10, 5, padding_idx=2), [torch.tensor([[1, 2, 9], [2, 0, 4]])], False),
        "mha": (nn.MultiheadAttention(8, 2), [torch.randn(5, 2, 8), torch.randn(4, 2, 8),
                                              torch.randn(4, 2, 8), mask], False),
        "mhab": (nn.MultiheadAttention(8, 2, batch_first=True),
                 [torch.randn(3, 6, 8)] * 3 + [causal], False),
    }


def run_zoo(zoo):
    """The zoo's state dicts (before running: BatchNorm's statistics change in training mode),
    inputs and outputs, under "zoo.<name>." keys."""
    sd, io = {}, {}
    for name, (m, inputs, train) in zoo.items():
        randomise(m)
        m.train(train)
        for k, t in m.state_dict().items():
            sd[f"zoo.{name}.{k}"] = t.clone()
        with torch.no_grad():
            if isinstance(m, nn.MultiheadAttention):
                q, k, v, mask = inputs
                y = m(q, k, v, attn_mask=mask, need_weights=False)[0]
            else:
                y = m(inputs[0])
        for i, x in enumerate(inputs):
            io[f"zoo.{name}.in{i}"] = x if x.dtype != torch.bool else x.to(torch.int64)
        io[f"zoo.{name}.out"] = y
        if isinstance(m, nn.BatchNorm2d):  # the statistics after one training batch
            io[f"zoo.{name}.running_mean"] = m.running_mean.clone()
            io[f"zoo.{name}.running_var"] = m.running_var.clone()
    return sd, io


def randomise(model):
    """Random values everywhere, batch-norm statistics included (eval mode then uses them)."""
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if t.dtype == torch.int64:
                t.fill_(7)
            elif name.endswith("running_var"):
                t.uniform_(0.5, 1.5)
            elif name.endswith(("running_mean", "bias")):
                t.uniform_(-0.1, 0.1)
            elif name.endswith("weight") and t.dim() == 1:
                t.uniform_(0.8, 1.2)
    return model.eval()


def hf_state_dict(model):
    """The state dict as Hugging Face saves it: a tensor shared by two names saved once."""
    seen, out = set(), {}
    for name, t in model.state_dict().items():
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        out[name] = t
    return out


def check_close(what, ours, ref, tol=1e-5):
    err = (ours - ref).abs().max().item()
    scale = max(1.0, ref.abs().max().item())
    print(f"  {what}: max |difference| {err:.3g} (scale {scale:.3g})")
    if not err <= tol * scale:
        sys.exit(f"torch_interop: {what} differs from PyTorch's by {err}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    prog = sys.argv[1]
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        resnet = randomise(torchvision.models.resnet18())
        gpt = randomise(GPT2LMHeadModel(**GPT_CFG))
        x = torch.randn(2, 3, 64, 64)
        idx = torch.randint(0, GPT_CFG["vocab"], (3, 17))
        with torch.no_grad():
            io = {"resnet_x": x, "resnet_logits": resnet(x), "gpt_idx": idx, "gpt_logits": gpt(idx)}
        save_file(hf_state_dict(resnet), os.path.join(d, "resnet18.safetensors"))
        save_file(hf_state_dict(gpt), os.path.join(d, "gpt2.safetensors"))
        zoo_sd, zoo_io = run_zoo(layer_zoo())
        io.update(zoo_io)
        save_file(zoo_sd, os.path.join(d, "zoo.safetensors"))
        save_file(io, os.path.join(d, "io.safetensors"))
        print("torch_interop: PyTorch wrote resnet18 and GPT-2 state dicts; the C side loads them")
        subprocess.run([prog, d], check=True)

        print("torch_interop: tensorgen's files in PyTorch (load_state_dict strict=True)")
        for name, cls, inp, key in (("resnet18", lambda: torchvision.models.resnet18(), x, "resnet_logits"),
                                    ("gpt2", lambda: GPT2LMHeadModel(**GPT_CFG), idx, "gpt_logits")):
            fresh = cls().eval()
            sd = load_file(os.path.join(d, f"tensorgen_{name}.safetensors"))
            result = fresh.load_state_dict(sd, strict=True)
            if result.missing_keys or result.unexpected_keys:
                sys.exit(f"torch_interop: {name}: {result}")
            with torch.no_grad():
                check_close(f"{name} logits after PyTorch loads tensorgen's file", fresh(inp), io[key])
    print("torch_interop: OK")


if __name__ == "__main__":
    main()
