#!/usr/bin/env python3
"""safetensors interoperability (`make test-safetensors`): files written by Hugging Face's
`safetensors` package (PyPI, with numpy) load in tensorgen with the right values, and files
tensorgen writes load in `safetensors` with the right values.

    python3 tests/io/safetensors_interop.py BUILD/tests/st_interop

The C side is tests/io/interop/st_interop.c; both sides compute the expected values from the
same formula, each on its own. numpy has no bfloat16: the BF16 tensor goes Python -> C through
safetensors.serialize with its bytes made here (the top 16 bits of float32), and C -> Python
through safetensors.deserialize (the package's own parser) decoded here.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import safetensors
    import safetensors.numpy as stnp
except ImportError as e:
    sys.exit(f"safetensors_interop: {e}: python3 -m pip install safetensors numpy "
             "(.ci/install-deps does)")

# name -> (safetensors dtype, seed, shape); the same table as st_interop.c
SPECS = {
    "t_F64": ("F64", 0, (3, 5)), "t_F32": ("F32", 1, (3, 5)), "t_F16": ("F16", 2, (3, 5)),
    "t_BF16": ("BF16", 3, (3, 5)), "t_I64": ("I64", 4, (3, 5)), "t_I32": ("I32", 5, (3, 5)),
    "t_I16": ("I16", 6, (3, 5)), "t_I8": ("I8", 7, (3, 5)), "t_U8": ("U8", 8, (3, 5)),
    "t_BOOL": ("BOOL", 9, (3, 5)), "scalar": ("F64", 3, ()), "empty": ("F32", 0, (0, 4)),
    "big": ("F32", 5, (64, 33)),
}
NUMPY = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
         "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def values(dt, seed, shape):
    """Element i: ((7 i + seed) mod 23) - 11, +11 for U8, halved for floats; bools alternate."""
    i = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    if dt == "BOOL":
        v = ((i + seed) % 2).astype(np.float64)
    else:
        v = ((i * 7 + seed) % 23 - 11).astype(np.float64)
        if dt == "U8":
            v += 11
        elif dt in ("F64", "F32", "F16", "BF16"):
            v *= 0.5
    return v.reshape(shape)


def bf16_bytes(v):
    """float64 values (exact in bfloat16) as little-endian bfloat16 bytes."""
    return (v.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()


def bf16_decode(b, shape):
    return (np.frombuffer(b, dtype="<u2").astype("<u4") << 16).view("<f4").reshape(shape)


def serialize_bf16(name, v, metadata):
    """A file of one BF16 tensor through the package's serializer (the TensorSpec API of
    safetensors >= 0.8, or the dict API before it)."""
    data = bf16_bytes(v)
    spec_cls = getattr(safetensors, "TensorSpec", None)
    if spec_cls is not None:
        buf = np.frombuffer(data, dtype=np.uint8).copy()
        spec = spec_cls(dtype="bfloat16", shape=list(v.shape), data_ptr=buf.ctypes.data,
                        data_len=buf.nbytes)
        out = safetensors.serialize({name: spec}, metadata)
        del buf
        return out
    return safetensors.serialize({name: {"dtype": "bfloat16", "shape": list(v.shape),
                                         "data": data}}, metadata)


def run(tool, *args):
    r = subprocess.run([tool, *args], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode:
        sys.stderr.write(r.stderr)
        sys.exit(f"safetensors_interop: {' '.join(args)} failed")


def main():
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        # Python -> C: every numpy dtype through safetensors.numpy.save_file.
        py = os.path.join(d, "python.safetensors")
        tensors = {n: values(dt, s, sh).astype(NUMPY[dt])
                   for n, (dt, s, sh) in SPECS.items() if dt != "BF16"}
        stnp.save_file(tensors, py, metadata={"writer": "python"})
        run(tool, "check", py)
        # Python -> C: bfloat16 through safetensors.serialize.
        pyb = os.path.join(d, "python_bf16.safetensors")
        dt, s, sh = SPECS["t_BF16"]
        with open(pyb, "wb") as fp:
            fp.write(serialize_bf16("t_BF16", values(dt, s, sh), {"writer": "python"}))
        run(tool, "check", pyb, "t_BF16")

        # C -> Python
        c = os.path.join(d, "tensorgen.safetensors")
        run(tool, "write", c)
        errors = []
        with safetensors.safe_open(c, framework="numpy") as f:
            if f.metadata() != {"writer": "tensorgen"}:
                errors.append(f"metadata {f.metadata()}")
            if sorted(f.keys()) != sorted(SPECS):
                errors.append(f"keys {sorted(f.keys())}")
            for n, (dt, s, sh) in SPECS.items():
                if dt == "BF16":
                    continue
                a = f.get_tensor(n)
                want = values(dt, s, sh).astype(NUMPY[dt])
                if a.dtype != want.dtype or a.shape != want.shape or not np.array_equal(a, want):
                    errors.append(f"{n}: got {a.dtype} {a.shape} {a.ravel()[:6]}")
        with open(c, "rb") as fp:
            raw = fp.read()
        got = dict(safetensors.deserialize(raw))  # the package's parser, every dtype as bytes
        dt, s, sh = SPECS["t_BF16"]
        b = got["t_BF16"]
        if b["dtype"] != "BF16" or list(b["shape"]) != list(sh):
            errors.append(f"t_BF16: {b['dtype']} {b['shape']}")
        elif not np.array_equal(bf16_decode(bytes(b["data"]), sh), values(dt, s, sh)):
            errors.append("t_BF16: values differ")
        if errors:
            sys.exit("safetensors_interop: tensorgen's file read by safetensors "
                     f"{safetensors.__version__}:\n  " + "\n  ".join(errors))
        print(f"safetensors_interop: {len(SPECS)} tensors written by tensorgen read back by "
              f"safetensors {safetensors.__version__} with the expected values")


if __name__ == "__main__":
    main()
