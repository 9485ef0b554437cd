#!/usr/bin/python3
"""Expected values of tests/nn/test_optim.c and tests/nn/test_lr_scheduler.c from PyTorch 1.13:
torch.optim's SGD, Adam and AdamW run for a few steps on fixed parameters and gradients, and
torch.optim.lr_scheduler's schedules over 30 epochs. Writes a C header to stdout:

    /usr/bin/python3 tests/nn/oracle_optim.py > tests/nn/fixtures/optim_expected.h

Deterministic (a seeded generator, no threads involved), so a rerun gives the same file. Values
are written with repr(), the shortest text that reads back to the same double."""
import sys
import warnings

import torch

# SequentialLR restarts a schedule with step(0), which warns that step(epoch) is deprecated.
warnings.filterwarnings("ignore", message="The epoch parameter")

torch.set_num_threads(1)

STEPS = 6
# The parameters (name, shape) of the optimizer tests, in the order the C tests list them.
PARAMS = [("fc.weight", (3, 4)), ("fc.bias", (4,)), ("norm.weight", (4,))]
# Which parameter has a gradient at each step (the others are skipped, as torch skips
# p.grad is None): norm.weight misses step 2, fc.bias step 4.
MASK = [[1, 1, 1], [1, 1, 1], [1, 1, 0], [1, 1, 1], [1, 0, 1], [1, 1, 1]]

gen = torch.Generator().manual_seed(20240601)
P0 = [torch.randn(shape, generator=gen, dtype=torch.float64) for _, shape in PARAMS]
GRADS = [[torch.randn(shape, generator=gen, dtype=torch.float64) for _, shape in PARAMS]
         for _ in range(STEPS)]

out = []


def emit(s=""):
    out.append(s)


def c_double(x):
    r = repr(float(x))
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def c_array(name, values, per_line=4):
    emit(f"static const double {name}[{len(values)}] = {{")
    for i in range(0, len(values), per_line):
        emit("    " + ", ".join(c_double(v) for v in values[i:i + per_line]) + ",")
    emit("};")


def flat(ts):
    return [v for t in ts for v in t.reshape(-1).tolist()]


def run_optimizer(make, dtype=torch.float64, groups=None):
    """Params after each step, flattened ([STEPS][numel]). `groups` maps the params to torch's
    param_groups: a list of (indices, extra options)."""
    ps = [p.clone().to(dtype).requires_grad_(True) for p in P0]
    if groups is None:
        opt = make(ps)
    else:
        opt = make([dict(params=[ps[i] for i in idx], **kw) for idx, kw in groups])
    rows = []
    for s in range(STEPS):
        for i, p in enumerate(ps):
            p.grad = GRADS[s][i].to(dtype).clone() if MASK[s][i] else None
        opt.step()
        rows += flat([p.detach().to(torch.float64) for p in ps])
    return rows


O = torch.optim
SGD = lambda **kw: (lambda ps: O.SGD(ps, foreach=False, **kw))
ADAM = lambda **kw: (lambda ps: O.Adam(ps, foreach=False, **kw))
ADAMW = lambda **kw: (lambda ps: O.AdamW(ps, foreach=False, **kw))

# name, constructor, dtype, groups (indices into PARAMS, options) -- the C tests mirror these.
OPT_CASES = [
    ("sgd_plain", SGD(lr=0.1), torch.float64, None),
    ("sgd_momentum", SGD(lr=0.05, momentum=0.9, dampening=0.1), torch.float64, None),
    ("sgd_nesterov", SGD(lr=0.05, momentum=0.9, nesterov=True), torch.float64, None),
    ("sgd_weight_decay", SGD(lr=0.1, momentum=0.5, weight_decay=0.01), torch.float64, None),
    ("sgd_maximize", SGD(lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True), torch.float64,
     None),
    ("adam", ADAM(lr=0.01), torch.float64, None),
    ("adam_amsgrad", ADAM(lr=0.01, betas=(0.8, 0.99), weight_decay=0.05, amsgrad=True),
     torch.float64, None),
    ("adam_maximize", ADAM(lr=0.01, eps=1e-6, maximize=True), torch.float64, None),
    ("adamw", ADAMW(lr=0.01, weight_decay=0.1), torch.float64, None),
    ("adamw_amsgrad", ADAMW(lr=0.02, amsgrad=True), torch.float64, None),
    ("sgd_f32", SGD(lr=0.05, momentum=0.9, weight_decay=0.01), torch.float32, None),
    ("adam_f32", ADAM(lr=0.01, weight_decay=0.01), torch.float32, None),
    # Groups: the defaults (lr 0.1, momentum 0.9, weight_decay 0.01) for fc.weight, "*.bias"
    # with lr 0.2 and no decay, "*norm*" with lr 0.05.
    ("groups_sgd", SGD(lr=0.1, momentum=0.9, weight_decay=0.01), torch.float64,
     [([0], {}), ([1], dict(lr=0.2, weight_decay=0.0)), ([2], dict(lr=0.05))]),
    # AdamW lr 0.01, weight_decay 0.1; "*.bias" and "norm.*" without decay, "norm.*" lr 0.001.
    ("groups_adamw", ADAMW(lr=0.01, weight_decay=0.1), torch.float64,
     [([0], {}), ([1], dict(weight_decay=0.0)), ([2], dict(lr=0.001, weight_decay=0.0))]),
]

# ---- schedules: SGD or Adam with two groups (lr 0.1 and 0.05), 30 steps ----
SCHED_STEPS = 30


def run_schedule(make_sched, adam=False):
    """lr of both groups (and momentum / beta1) after creation and after each step."""
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(2, requires_grad=True)
    groups = [dict(params=[w], lr=0.1), dict(params=[b], lr=0.05)]
    opt = O.Adam(groups, lr=0.1) if adam else O.SGD(groups, lr=0.1, momentum=0.9)
    sched = make_sched(opt)
    lrs, moms = [], []

    def record():
        for g in opt.param_groups:
            lrs.append(g["lr"])
            moms.append(g["betas"][0] if adam else g["momentum"])
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]

    record()
    for _ in range(SCHED_STEPS):
        opt.step()
        sched.step()
        record()
    return lrs, moms


S = O.lr_scheduler
SCHED_CASES = [
    ("step_lr", lambda o: S.StepLR(o, step_size=7, gamma=0.5), False),
    ("multi_step_lr", lambda o: S.MultiStepLR(o, milestones=[5, 12, 12, 20], gamma=0.3), False),
    ("cosine", lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001), False),
    ("linear", lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5), False),
    ("linear_default", lambda o: S.LinearLR(o), False),
    ("sequential", lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
            S.CosineAnnealingLR(o, T_max=25, eta_min=1e-4)], milestones=[5]), False),
    ("one_cycle_cos", lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=SCHED_STEPS), False),
    ("one_cycle_linear3_adam", lambda o: S.OneCycleLR(
        o, max_lr=0.01, total_steps=SCHED_STEPS, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, base_momentum=0.8, max_momentum=0.9, div_factor=10.0,
        final_div_factor=100.0), True),
]


def main():
    emit("/* generated by tests/nn/oracle_optim.py with torch " + torch.__version__ + "; do not edit:")
    emit(" * /usr/bin/python3 tests/nn/oracle_optim.py > tests/nn/fixtures/optim_expected.h */")
    emit("/* clang-format off */")
    emit("#ifndef OPTIM_EXPECTED_H")
    emit("#define OPTIM_EXPECTED_H")
    emit("")
    emit(f"#define OPT_STEPS {STEPS}")
    emit(f"#define OPT_NPARAMS {len(PARAMS)}")
    numel = sum(p.numel() for p in P0)
    emit(f"#define OPT_NUMEL {numel}")
    emit("static const char *const OPT_NAMES[OPT_NPARAMS] = { " +
         ", ".join(f'"{n}"' for n, _ in PARAMS) + " };")
    emit("static const int64_t OPT_SIZES[OPT_NPARAMS][2] = { " +
         ", ".join("{ " + ", ".join(str(d) for d in (list(s) + [0])[:2]) + " }" for _, s in PARAMS) +
         " };")
    emit("static const int OPT_NDIM[OPT_NPARAMS] = { " +
         ", ".join(str(len(s)) for _, s in PARAMS) + " };")
    emit("static const int OPT_MASK[OPT_STEPS][OPT_NPARAMS] = { " +
         ", ".join("{ " + ", ".join(str(v) for v in m) + " }" for m in MASK) + " };")
    emit("/* initial parameters, then the gradients of each step (all parameters, flattened) */")
    c_array("OPT_P0", flat(P0))
    c_array("OPT_GRADS", [v for s in range(STEPS) for v in flat(GRADS[s])])
    emit("")
    emit("/* parameters after each step: [OPT_STEPS][OPT_NUMEL] */")
    for name, make, dtype, groups in OPT_CASES:
        c_array("OPT_EXPECT_" + name, run_optimizer(make, dtype, groups))
    emit("")
    emit(f"#define SCHED_STEPS {SCHED_STEPS}")
    emit("/* [SCHED_STEPS + 1][2 groups]: after creation, then after each step */")
    for name, make, adam in SCHED_CASES:
        lrs, moms = run_schedule(make, adam)
        c_array("SCHED_LR_" + name, lrs)
        if name.startswith("one_cycle"):
            c_array("SCHED_MOMENTUM_" + name, moms)
    emit("")
    emit("#endif")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
