#!/usr/bin/env python3
"""Writes a synthetic native_functions.yaml and a matching derivatives.yaml for timing
`tgen --check --strict` (bench/run.sh, tgen_check_synthetic_20k) on inputs far larger than the
project's spec, so that anything superlinear in tgen shows.

    bench/gen_synthetic_spec.py [--entries N] [--args K] [--formula-bytes B] NATIVE DERIVS

Entries cycle through four shapes: tuple returns `-> (Tensor a, Tensor b)` (each with a
formula using grads[0] and grads[1]), many defaulted arguments (8 to 40), a functional entry
and its in-place sibling with `autogen:` of their out= variant, and a plain unary entry with a formula. --args adds one
entry with K arguments; --formula-bytes one entry whose formula is about B bytes (a balanced
sum, so it stays within the formula depth limit)."""
import argparse

BASE = """- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: add
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul
- func: mul.Scalar(Tensor self, Scalar other) -> Tensor
  dispatch:
    CPU: mul_scalar
- func: neg(Tensor self) -> Tensor
  dispatch:
    CPU: neg
"""


def balanced_sum(terms):
    """`(a + b) + (c + d)`: depth log2(len(terms)), size linear."""
    while len(terms) > 1:
        terms = ["(%s + %s)" % (terms[i], terms[i + 1]) if i + 1 < len(terms) else terms[i]
                 for i in range(0, len(terms), 2)]
    return terms[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=20000)
    ap.add_argument("--args", type=int, default=0)
    ap.add_argument("--formula-bytes", type=int, default=0)
    ap.add_argument("native")
    ap.add_argument("derivs")
    o = ap.parse_args()
    nat, der = [BASE], []
    for i in range(o.entries):
        shape = i % 4
        if shape == 0:
            nat.append("- func: syn%d(Tensor self, Tensor other) -> (Tensor a, Tensor b)\n"
                       "  dispatch:\n    CPU: syn%d\n" % (i, i))
            der.append("- name: syn%d(Tensor self, Tensor other) -> (Tensor a, Tensor b)\n"
                       "  self: grads[0] * other + grads[1]\n  other: grads[1] * self\n" % i)
        elif shape == 1:
            k = 8 + i % 33
            args = ", ".join("int a%d=%d" % (j, j) for j in range(k))
            nat.append("- func: syn%d(Tensor self, %s, *, float eps=1e-05) -> Tensor\n"
                       "  variants: function, method\n  dispatch:\n    CPU: syn%d\n" % (i, args, i))
        elif shape == 2:
            nat.append("- func: syn%d(Tensor self, Scalar alpha=1) -> Tensor\n"
                       "  dispatch:\n    CPU: syn%d\n" % (i, i))
            nat.append("- func: syn%d_(Tensor(a!) self, Scalar alpha=1) -> Tensor(a!)\n"
                       "  autogen: syn%d.out\n  dispatch:\n    CPU: syn%d_\n" % (i, i, i))
        else:
            sig = "syn%d(Tensor self, Scalar alpha=1) -> Tensor" % i
            nat.append("- func: %s\n  dispatch:\n    CPU: syn%d\n" % (sig, i))
            der.append("- name: %s\n  self: -grad * 2 + grad\n" % sig)
    if o.args:
        args = ", ".join("Tensor t%d" % j for j in range(o.args))
        sig = "syn_wide(Tensor self, %s) -> Tensor" % args
        nat.append("- func: %s\n  dispatch:\n    CPU: syn_wide\n" % sig)
        der.append("- name: %s\n  self: grad * t%d\n" % (sig, o.args - 1))
    if o.formula_bytes:
        n = max(2, o.formula_bytes // 11)
        sig = "syn_long(Tensor self, Tensor other) -> Tensor"
        nat.append("- func: %s\n  dispatch:\n    CPU: syn_long\n" % sig)
        der.append("- name: %s\n  self: %s\n" % (sig, balanced_sum(["grad * other"] * n)))
    with open(o.native, "w") as f:
        f.write("\n".join(nat))
    with open(o.derivs, "w") as f:
        f.write("\n".join(der))


if __name__ == "__main__":
    main()
