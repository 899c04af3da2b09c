"""PyTorch training loops of several shapes that time themselves, for checking `wlrun trace`
against the program's own numbers in the same run (tests/gpu/trace_loops_spec.lua, docs/trace.md
"Measured on the H200").

A conv net (six conv3x3 + BatchNorm + ReLU blocks, AdamW) trained on synthetic 3x64x64 images
from a DataLoader with worker processes and pinned memory. Only where the step synchronises
changes between the shapes (--shape):

  after   the methodology's template: torch.cuda.synchronize() before the step and just after
          its train_step range closes; iter = between the two, data = from the previous step's
          end to the batch in hand
  inside  the same, the closing synchronisation inside the train_step range
  none    no synchronisation at all: the loop runs ahead of the GPU; the program measures its
          steady-state throughput (one synchronisation at the end of the warmup, one at the end)
  item10  like none, with loss.item() every 10th step, outside the step range
  before  like none, with torch.cuda.synchronize() before each step only (after the batch is in
          hand), none after it

    python3 torch_loops.py --shape none --steps 80 --warmup 10 --out prog.json [--amp bf16|fp16]
        [--delay-ms 2] [--no-ranges] [--device cpu]

--functional runs the model's forward as functional ops on its weights (F.conv2d, F.batch_norm, ...:
no module with parameters called) and calls optimizer.zero_grad() after the optimizer's step, not
before backward: the shape whose forward wlrun's hook cannot see.

--frozen eval|nograd puts a frozen feature extractor (conv3x3 3->32, BatchNorm, ReLU, conv3x3 32->3) before the
trained net, run on the batch in hand in eval mode (grad enabled, its weights frozen) or under torch.no_grad(): the
step's work that wlrun's hook sees as evaluation first.

--val-every N runs a validation pass (4 batches of its own loader, no workers, under torch.no_grad() in eval mode)
after every Nth step, synchronised before and after; the template leaves its time out of the next step's data, as
wlrun leaves evaluation out of the data; the steady-state throughput holds it, as wlrun's does (time between steps).

--compile MODE trains the model compiled by torch.compile (MODE default, or reduce-overhead: CUDA graphs); --out's
"recompiles" counts dynamo's recompilations after the warmup (the hook must cause none).

--amp fp16 trains under float16 autocast with a GradScaler whose scale grows after every step
(growth_interval 1), so that it overflows and skips optimizer steps all along the run, as float16
training does at its start; the number of steps skipped is in --out's "skipped".

--gpu-data makes each step's batch on the GPU in the loop (torch.randn, torch.randint), no DataLoader: a synthetic
benchmark's loop, whose batch size wlrun's hook takes from the model's input.

--cpu-data MS makes each step's batch on the CPU in the loop (torch.randn, then MS ms of work), no DataLoader, and
copies it to the GPU first thing in the train_step range: with --shape before, the loop's only synchronisation comes
after the making and before the copy, which wlrun must not take for the step's end; --out's "made" holds each making's
seconds.

--busy-thread starts a thread of the program's own that works in Python 0.5 ms at a time, with 2 ms pauses between (a
logger's, a metrics exporter's), holding the interpreter's lock while it works: a call that releases the lock (a
synchronisation, a copy) returns to the loop only once the thread pauses or the interpreter switches threads, up to half a
millisecond after the call itself returned; the template's t0 and t1 come after that.

--out writes {shape, batch, warmup, steps, iter, data (s, every step; template shapes),
marks ({in_hand, t0, t1} of every step, time.perf_counter()'s CLOCK_MONOTONIC seconds, the clock of
wlrun's trace files; template shapes), samples_per_s and period (over the measured steps W+1..N)}.
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    """Random 3x64x64 images and labels made on the CPU, seeded by index; delay_ms of sleep per
    sample plays a slow loader."""

    def __init__(self, n, classes, delay_ms):
        self.n, self.classes, self.delay = n, classes, delay_ms / 1e3

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 64, 64, generator=g), int(torch.randint(self.classes, (1,), generator=g))


def net(classes):
    chans, layers, c_in = [64, 64, 128, 128, 256, 256], [], 3
    for k, c in enumerate(chans):
        layers += [nn.Conv2d(c_in, c, 3, stride=2 if k % 2 == 1 else 1, padding=1, bias=False), nn.BatchNorm2d(c),
                   nn.ReLU(inplace=True)]
        c_in = c
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, classes))


def functional(model, x):
    """model's forward without calling a module: its layers' ops on their weights."""
    for m in model:  # iterating a Sequential calls none of its modules
        if isinstance(m, nn.Conv2d):
            x = F.conv2d(x, m.weight, m.bias, m.stride, m.padding)
        elif isinstance(m, nn.BatchNorm2d):
            x = F.batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, True, m.momentum, m.eps)
        elif isinstance(m, nn.ReLU):
            x = F.relu(x, inplace=True)
        elif isinstance(m, nn.AdaptiveAvgPool2d):
            x = F.adaptive_avg_pool2d(x, 1)
        elif isinstance(m, nn.Flatten):
            x = x.flatten(1)
        else:
            x = F.linear(x, m.weight, m.bias)
    return x


def _recompiles():
    """dynamo's compilations so far (torch._dynamo's counters), or 0 where it has none"""
    try:
        from torch._dynamo.utils import counters
        return counters["stats"].get("unique_graphs", 0) + sum(counters["recompiles"].values())
    except Exception:  # noqa: BLE001 - a torch without dynamo
        return 0


def write_out(a, opt, model, timed, span, samples=None, recompiles=0, made=()):
    """--out's fields (the module's docstring): timed = (iters, datas, marks) of the template's
    steps (empty lists otherwise), span = (t_start, t_end) of the measured steps; samples: a step's
    (a.batch by default)."""
    iters, datas, marks = timed
    measured = a.steps - a.warmup
    if iters:
        period = sum(iters[a.warmup:]) / measured + sum(datas[a.warmup:]) / measured
    else:
        period = (span[1] - span[0]) / measured
    taken = opt.state[next(iter(model.parameters()))].get("step", 0)  # the optimizer steps not skipped
    out = {"shape": a.shape, "batch": a.batch, "warmup": a.warmup, "steps": a.steps, "iter": iters,
           "data": datas, "marks": marks, "period": period,
           "samples_per_s": (samples or a.batch) / period, "skipped": a.steps - int(taken),
           "recompiles": recompiles, "made": list(made)}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f)


def start_busy_thread():
    """--busy-thread: 0.5 ms of Python work (the interpreter's lock held), then a 2 ms pause, for ever"""
    import threading

    def run():
        while True:
            t = time.perf_counter()
            while time.perf_counter() - t < 5e-4:
                pass
            time.sleep(2e-3)

    threading.Thread(target=run, daemon=True, name="busy").start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["after", "inside", "none", "item10", "before"], default="after")
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--amp", choices=["bf16", "fp16"], default=None)
    ap.add_argument("--no-ranges", action="store_true")
    ap.add_argument("--functional", action="store_true")
    ap.add_argument("--frozen", choices=["eval", "nograd"])
    ap.add_argument("--val-every", type=int, default=0)
    ap.add_argument("--compile", choices=["default", "reduce-overhead"])
    ap.add_argument("--gpu-data", action="store_true")
    ap.add_argument("--cpu-data", type=float, default=None, metavar="MS")
    ap.add_argument("--busy-thread", action="store_true")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.busy_thread:
        start_busy_thread()

    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(0)
    model = net(100).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(Images(a.steps * a.batch, 100, a.delay_ms), batch_size=a.batch, num_workers=a.workers,
                        pin_memory=cuda, persistent_workers=a.workers > 0, drop_last=True)
    ranges = cuda and not a.no_ranges
    push = torch.cuda.nvtx.range_push if ranges else (lambda name: None)
    pop = torch.cuda.nvtx.range_pop if ranges else (lambda: None)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    template = a.shape in ("after", "inside")

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.amp)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0**16, growth_interval=1) if a.amp == "fp16" else None

    forward = (lambda x: functional(model, x)) if a.functional else model
    if a.compile:
        forward = torch.compile(model, mode=a.compile)
    if a.frozen:
        backbone = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                                 nn.Conv2d(32, 3, 3, padding=1)).to(dev).requires_grad_(False)
        if a.frozen == "eval":
            backbone.eval()
        trained = forward

        def forward(x):
            with torch.no_grad() if a.frozen == "nograd" else torch.enable_grad():
                x = backbone(x)
            return trained(x)
    val = DataLoader(Images(4 * a.batch, 100, 0), batch_size=a.batch, num_workers=0, pin_memory=cuda) if a.val_every else None

    def validate():
        """4 batches under no_grad in eval mode, synchronised at both ends; returns its seconds"""
        sync()
        v0 = time.perf_counter()
        model.eval()
        with torch.no_grad():
            for vx, vy in val:
                loss_fn(forward(vx.to(dev, non_blocking=True)), vy.to(dev, non_blocking=True))
        model.train()
        sync()
        return time.perf_counter() - v0

    def step(x, y):
        push("forward")
        if dtype:
            with torch.autocast("cuda", dtype=dtype):
                loss = loss_fn(forward(x), y)
        else:
            loss = loss_fn(forward(x), y)
        pop()
        push("backward")
        if not a.functional:
            opt.zero_grad(set_to_none=True)
        (scaler.scale(loss) if scaler else loss).backward()
        pop()
        push("optimizer")
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        if a.functional:
            opt.zero_grad(set_to_none=True)
        pop()
        return loss

    iters, datas, marks, made = [], [], [], []
    it = None if a.gpu_data or a.cpu_data is not None else iter(loader)
    prev_end = time.perf_counter()
    t_start, compiles = None, 0
    for i in range(1, a.steps + 1):
        push("data")
        if a.gpu_data:
            x, y = torch.randn(a.batch, 3, 64, 64, device=dev), torch.randint(100, (a.batch,), device=dev)
        elif a.cpu_data is not None:
            t_make = time.perf_counter()
            x, y = torch.randn(a.batch, 3, 64, 64), torch.randint(100, (a.batch,))
            while time.perf_counter() - t_make < a.cpu_data / 1e3:
                pass
            made.append(time.perf_counter() - t_make)
        else:
            x, y = next(it)
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        pop()
        in_hand = time.perf_counter()
        if template:
            sync()
            t0 = time.perf_counter()
        elif a.shape == "before":
            sync()
        push("train_step")
        if a.cpu_data is not None:
            x, y = x.to(dev), y.to(dev)
        loss = step(x, y)
        if a.shape == "inside":
            sync()
        pop()
        if template:
            if a.shape == "after":
                sync()
            t1 = time.perf_counter()
            iters.append(t1 - t0)
            datas.append(in_hand - prev_end)
            marks.append([in_hand, t0, t1])
            prev_end = t1
        elif a.shape == "item10" and i % 10 == 0:
            loss.item()
        if i == a.warmup:
            sync()
            t_start = time.perf_counter()
            compiles = _recompiles()
        if a.val_every and i % a.val_every == 0 and i < a.steps:
            prev_end += validate()
    sync()
    write_out(a, opt, model, (iters, datas, marks), (t_start, time.perf_counter()),
              recompiles=_recompiles() - compiles if a.compile else 0, made=made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
