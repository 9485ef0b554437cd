#!/usr/bin/env python3
"""Follows docs/extending.md verbatim in an empty folder, against an installed tensorgen.

    tests/build/extending_check.py DOC.md PREFIX

The page's fenced blocks drive it: ```<lang> file=NAME blocks are written to NAME, ```sh run
blocks are run in order with bash -e (PKG_CONFIG_PATH pointing at PREFIX), and a ```text output
block right after a run block must equal what that block printed (stdout and stderr). Other
blocks (```sh without `run`: the install itself) are prose. Exits non-zero naming the first
block that failed or printed something else."""
import os
import re
import subprocess
import sys
import tempfile


def blocks(text):
    """(info string, body, line number) of every fenced block, in order."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^```(.*)$", lines[i])
        if m:
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i] != "```":
                body.append(lines[i])
                i += 1
            out.append((m.group(1).strip(), "\n".join(body) + "\n", start))
        i += 1
    return out


def main():
    doc, prefix = sys.argv[1], os.path.abspath(sys.argv[2])
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    ran, checked, files = 0, 0, 0
    with tempfile.TemporaryDirectory() as work:
        last = None  # what the previous run block printed, until an output block takes it
        for info, body, line in blocks(open(doc).read()):
            words = info.split()
            name = next((w[5:] for w in words if w.startswith("file=")), None)
            if name:
                with open(os.path.join(work, name), "w") as f:
                    f.write(body)
                files += 1
            elif words[:2] == ["sh", "run"]:
                p = subprocess.run(["bash", "-e", "-c", body], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if p.returncode != 0:
                    sys.exit(f"{doc}:{line}: the block exited with {p.returncode}:\n{p.stdout}")
                last, ran = (p.stdout, line), ran + 1
            elif words[:2] == ["text", "output"]:
                if last is None:
                    sys.exit(f"{doc}:{line}: an output block that follows no run block")
                if last[0] != body:
                    sys.exit(f"{doc}:{line}: the block at line {last[1]} printed\n{last[0]}"
                             f"instead of\n{body}")
                last, checked = None, checked + 1
    print(f"extending_check: {doc} followed: {files} files written, {ran} blocks run, "
          f"{checked} outputs as the page shows")


main()
