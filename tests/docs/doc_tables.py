"""What doc_check.py checks besides code blocks: the profiler's sample table (docs/profiling.md)
and the operators the README says exist or are missing, against docs/ops.md."""
import collections
import fnmatch
import json
import os
import re
import subprocess

# ---------------------------------------------------------------- the profiler's table


def profile_run(build, work):
    """Runs `build/examples/train_mlp --profile` on one thread. Returns (the table it printed,
    {event name: calls} from its Chrome trace, the run's output)."""
    trace = os.path.join(work, "profile-trace.json")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([os.path.join(build, "examples", "train_mlp"), "--profile", trace],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    lines = p.stdout.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("profile of steps")), None)
    end = next((i for i, l in enumerate(lines) if l.startswith("Self CPU time total")), None)
    if p.returncode != 0 or start is None or end is None or not os.path.exists(trace):
        return None, None, p.stdout
    events = json.load(open(trace))["traceEvents"]
    calls = collections.Counter(e["name"] for e in events if e.get("ph") == "X")
    return "\n".join(lines[start:end + 1]) + "\n", calls, p.stdout


def columns(line):
    return re.split(r"\s{2,}", line.strip())


def check_profile_table(doc, table, calls):
    """The page's table against a fresh run's: its title, columns and number of rows, and for
    each row an operator or range the run recorded as many times. Times are not compared: they
    vary from run to run and with the machine's load (`make doc-tables` renews them)."""
    want, got = doc.rstrip("\n").split("\n"), table.rstrip("\n").split("\n")
    if len(want) != len(got):
        return [f"the table has {len(want)} lines, the profiler prints {len(got)}"]
    problems = []
    if want[0] != got[0]:
        problems.append(f"title '{want[0]}', the profiler prints '{got[0]}'")
    if columns(want[2]) != columns(got[2]):
        problems.append(f"columns {columns(want[2])}, the profiler prints {columns(got[2])}")
    if not want[-1].startswith("Self CPU time total:"):
        problems.append("the table does not end with 'Self CPU time total:'")
    for row in want[4:-2]:
        cells = columns(row)
        name, n = cells[0], cells[-1]
        if calls.get(name, 0) != int(n):
            problems.append(f"row '{name}' with {n} calls: the profiler records "
                            f"{calls.get(name, 0)}")
    return problems


def replace_block(path, first_line, text):
    """Replaces the body of the fenced block whose first body line is first_line (1-based)."""
    lines = open(path).read().split("\n")
    end = first_line - 1
    while lines[end].strip() != "```":
        end += 1
    lines[first_line - 1:end] = text.rstrip("\n").split("\n")
    with open(path, "w") as f:
        f.write("\n".join(lines))


# ---------------------------------------------------------------- operators named in prose


def spec_operators(ops_md):
    """The operators of docs/ops.md's table by schema name without overload (`add`, `add_`,
    `cross_entropy_loss`) and by C name without `tg_` (`add_scalar`, `cross_entropy`)."""
    names = set()
    for line in open(ops_md):
        m = re.match(r"^\| \[`tg_(\w+)`\]\(#[^)]*\) \| `([^`]+)` \|", line)
        if m:
            names |= {m.group(1), m.group(2).split(".")[0]}
    return names


def check_ops(verb, paragraph, ops_md):
    """`ops-exist`: every operator the paragraph names in backticks (`a`/`b` names two, `x*` is a
    pattern, `tg_...` is a C function and not checked) is in the spec; `ops-missing`: none is."""
    names = spec_operators(ops_md)
    problems = []
    for span in re.findall(r"`([^`]+)`", paragraph):
        for name in span.split("/"):
            if name.startswith("tg_") or not re.fullmatch(r"[a-z_][a-z0-9_]*\*?", name):
                continue
            found = sorted(fnmatch.filter(names, name))
            if verb == "ops-exist" and not found:
                problems.append(f"`{name}` is not an operator of the spec (docs/ops.md)")
            if verb == "ops-missing" and found:
                problems.append(f"`{name}` is called missing, but the spec has it: "
                                f"{', '.join(found)} (docs/ops.md)")
    return problems
