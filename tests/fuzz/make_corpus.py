#!/usr/bin/env python3
"""Writes the seed corpora of tgen's fuzz harnesses (tests/fuzz/README.md) into OUTDIR/<harness>/.

Sources: the project's specs/, templates/ and tests/codegen/ inputs, and PyTorch's spec files in
../shared/pytorch-*/ beside the repository (skipped when absent, as in CI checkouts without
them). Each seed is a file named by the hash of its text, so a rerun rewrites the same names
and duplicates collapse. Seeds are build output: nothing here is committed but this script.

  schema    every `func:` and `name:` schema string, one per file
  native    native_functions.yaml files, and chunks of ENTRIES entries of the large ones
  derivs    derivatives.yaml chunks (for the harness's fixed specs/native_functions.yaml)
  template  the templates/ files
  extends   backend files and kernel libraries (tests/codegen's, and ../shared/thirdparty-specs'
            that fit)
  gen       a native chunk, `#@derivatives`, the derivative entries of its functions; the
            (native, derivatives) pairs of tests/codegen/errors.tsv, of the emission tests and
            of tests/codegen/good/pytorch_rules*.yaml
  every harness also gets the inputs of tests/fuzz/regressions/<harness>/
"""
import glob
import hashlib
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENTRIES = 8        # native entries per chunk: a few functions that can refer to each other
DERIV_ENTRIES = 4  # derivative entries per chunk
MAX_SEED = 16384   # the spec harnesses' -max_len
SEPARATOR = "#@derivatives\n"


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def entries(text, key):
    """The top-level `- key:` entries of a spec file, each with its following lines."""
    parts = re.split(r"(?m)^(?=- %s:)" % key, text)
    return [p for p in parts if p.startswith("- %s:" % key)]


def chunks(items, n):
    for i in range(0, len(items), n):
        yield "".join(items[i:i + n])


def schema_of(entry, key):
    """The schema string of an entry, unquoted when quoted simply."""
    m = re.match(r"- %s:\s*(.*)" % key, entry)
    s = m.group(1).strip() if m else ""
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        s = s[1:-1]
    return s


def full_name(schema):
    return schema.split("(", 1)[0].strip()


class Corpus:
    def __init__(self, outdir):
        self.outdir = outdir
        self.counts = {}

    def add(self, harness, text):
        if not text or len(text.encode()) > MAX_SEED:
            return
        d = os.path.join(self.outdir, harness)
        os.makedirs(d, exist_ok=True)
        name = hashlib.sha1(text.encode()).hexdigest()[:16]
        path = os.path.join(d, name)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            self.counts[harness] = self.counts.get(harness, 0) + 1


def spec_dirs():
    """(native, derivatives or None) file pairs: the project's, then PyTorch's."""
    pairs = [(os.path.join(ROOT, "specs/native_functions.yaml"),
              os.path.join(ROOT, "specs/derivatives.yaml"))]
    for d in sorted(glob.glob(os.path.join(os.path.dirname(ROOT), "shared", "pytorch-*"))):
        native = os.path.join(d, "native_functions.yaml")
        derivs = os.path.join(d, "derivatives.yaml")
        if os.path.isfile(native):
            pairs.append((native, derivs if os.path.isfile(derivs) else None))
    return pairs


def gen_seeds(c, native_entries, deriv_entries, limit):
    """A chunk of native entries with the derivative entries of its functions."""
    by_name = {}
    for e in deriv_entries:
        by_name.setdefault(full_name(schema_of(e, "name")), []).append(e)
    for i, start in enumerate(range(0, len(native_entries), ENTRIES)):
        if i >= limit:
            break
        group = native_entries[start:start + ENTRIES]
        derivs = [d for e in group for d in by_name.get(full_name(schema_of(e, "func")), [])]
        text = "".join(group)
        c.add("gen", text + (SEPARATOR + "".join(derivs) if derivs else ""))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/fuzz/seeds")
    for h in ("schema", "native", "derivs", "template", "gen", "extends"):
        shutil.rmtree(os.path.join(outdir, h), ignore_errors=True)
    c = Corpus(outdir)

    for k, (native, derivs) in enumerate(spec_dirs()):
        ntext = read(native)
        nent = entries(ntext, "func")
        dent = entries(read(derivs), "name") if derivs else []
        for e in nent:
            c.add("schema", schema_of(e, "func"))
        for e in dent:
            c.add("schema", schema_of(e, "name"))
        c.add("native", ntext)
        for chunk in chunks(nent, ENTRIES):
            c.add("native", chunk)
        for chunk in chunks(dent, DERIV_ENTRIES):
            c.add("derivs", chunk)
        # The project's own spec whole; PyTorch's (which tgen mostly rejects: other dispatch
        # keys, C++ in formulas) for a sample of chunks.
        gen_seeds(c, nent, dent, 10**6 if k == 0 else 40)

    # tgen's own test inputs: each error case, edge case and emission case.
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/codegen/*/*.yaml"))):
        text = read(path)
        c.add("derivs" if re.search(r"(?m)^- name:", text) else "native", text)
    tsv = os.path.join(ROOT, "tests/codegen/errors.tsv")
    if os.path.isfile(tsv):
        for line in read(tsv).splitlines():
            cols = line.split("\t")
            if line.startswith("#") or len(cols) < 3:
                continue
            npath, dpath = os.path.join(ROOT, cols[1]), os.path.join(ROOT, cols[2])
            if not os.path.isfile(npath):
                continue
            text = read(npath)
            if cols[2] != "-" and os.path.isfile(dpath):
                text += SEPARATOR + read(dpath)
            c.add("gen", text)
    # The emission cases and the forms PyTorch's tools accept (tests/codegen/good/
    # pytorch_rules*.yaml: issue 35's qualified kernel names, gradients numbered over the
    # differentiable outputs, unquoted conditions; its sectioned op-plugin form, 1.5-era fields
    # and Tensor? in returned tuples), whose generated C the gen oracle compiles.
    for native, derivs in (("emit/autograd.yaml", "emit/autograd_derivs.yaml"),
                           ("emit/edge.yaml", None), ("emit/clashes.yaml", None),
                           ("good/pytorch_rules.yaml", "good/pytorch_rules_derivs.yaml"),
                           ("good/sectioned.yaml", "good/sectioned_derivs.yaml"),
                           ("good/old_fields.yaml", None), ("good/opt_tensor_return.yaml", None)):
        npath = os.path.join(ROOT, "tests/codegen", native)
        if os.path.isfile(npath):
            text = read(npath)
            if derivs and os.path.isfile(os.path.join(ROOT, "tests/codegen", derivs)):
                text += SEPARATOR + read(os.path.join(ROOT, "tests/codegen", derivs))
            c.add("gen", text)

    # Files that extend a spec (fuzz_extends): tgen's own backend and kernel-library cases, the
    # counting backend of the tests, and the third-party backend and ExecuTorch files beside
    # the repository (those that fit the harness's 16 KB).
    extends = sorted(glob.glob(os.path.join(ROOT, "tests/codegen/*/backend_*.yaml")) +
                     glob.glob(os.path.join(ROOT, "tests/codegen/*/kl_*.yaml")) +
                     glob.glob(os.path.join(ROOT, "tests/codegen/good/kernel_lib.yaml")) +
                     glob.glob(os.path.join(ROOT, "tests/library/counting_backend.yaml")))
    third = os.path.join(os.path.dirname(ROOT), "shared", "thirdparty-specs")
    extends += sorted(glob.glob(os.path.join(third, "executorch", "*.yaml")) +
                      glob.glob(os.path.join(third, "xla", "*.yaml")) +
                      glob.glob(os.path.join(third, "torch_npu", "*.yaml")))
    for path in extends:
        text = read(path)
        if len(text) <= MAX_SEED:
            c.add("extends", text)

    # The regressions' inputs, each for its own harness: mutations of what once failed.
    for h in ("schema", "native", "derivs", "gen", "extends"):
        for path in sorted(glob.glob(os.path.join(ROOT, "tests/fuzz/regressions", h, "*"))):
            c.add(h, read(path))

    for path in sorted(glob.glob(os.path.join(ROOT, "templates/*.in"))):
        c.add("template", read(path))

    print("seeds in %s: %s" % (outdir, ", ".join("%s %d" % kv for kv in sorted(c.counts.items()))))


if __name__ == "__main__":
    main()
