"""A small PyTorch training loop with NVTX ranges, for `wlrun trace` (docs/trace.md).

An MLP on a synthetic dataset read through a DataLoader with worker processes and pinned memory.
Each iteration pushes the ranges the methodology asks for: "data" around fetching the batch and
moving it to the GPU, "train_step" around the step, and "forward", "backward", "optimizer" inside
it. With --template FILE the script also times each step the methodology's manual way
(torch.cuda.synchronize() and time.perf_counter() around the step) and writes those times, so
that wlrun's report can be checked against them from the same run.

    python3 torch_train.py --steps 60 --hidden 4096 --batch 512 --workers 4 --template t.json
    wlrun trace --batch-size 512 -- python3 torch_train.py ...
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Synthetic(Dataset):
    """Random features and labels made on the CPU; delay_ms of sleep per sample plays a slow loader."""

    def __init__(self, n, features, classes, delay_ms):
        self.n, self.features, self.classes, self.delay = n, features, classes, delay_ms / 1e3

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        g = torch.Generator().manual_seed(i)
        return torch.randn(self.features, generator=g), int(torch.randint(self.classes, (1,), generator=g))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--features", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--delay-ms", type=float, default=0.0, help="sleep per sample in the loader")
    ap.add_argument("--template", help="write the manual step times (s) to this JSON file")
    ap.add_argument("--no-nvtx", action="store_true", help="push no ranges (the untraced baseline)")
    ap.add_argument("--exit-code", type=int, default=0, help="exit with this code at the end")
    a = ap.parse_args()

    dev = torch.device("cuda")
    torch.manual_seed(0)
    layers, width = [], a.features
    for _ in range(a.layers):
        layers += [nn.Linear(width, a.hidden), nn.ReLU()]
        width = a.hidden
    model = nn.Sequential(*layers, nn.Linear(width, a.classes)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    data = Synthetic(a.steps * a.batch, a.features, a.classes, a.delay_ms)
    loader = DataLoader(data, batch_size=a.batch, num_workers=a.workers, pin_memory=True,
                        persistent_workers=a.workers > 0, drop_last=True)

    push = (lambda name: None) if a.no_nvtx else torch.cuda.nvtx.range_push
    pop = (lambda: None) if a.no_nvtx else torch.cuda.nvtx.range_pop
    times, cpu = [], []  # each step's wall time and its main thread's CPU time
    # each step's wall time by part: until the forward's launches are made, the backward's (made on
    # PyTorch's autograd thread while this one waits), the optimizer's, then the wait for the GPU
    parts = {"forward": [], "backward": [], "optimizer": [], "wait": []}
    it = iter(loader)
    for _ in range(a.steps):
        push("data")
        x, y = next(it)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        pop()
        torch.cuda.synchronize()  # the methodology's template: synchronise, then time the step
        t0, c0 = time.perf_counter(), time.thread_time()
        push("train_step")
        push("forward")
        loss = loss_fn(model(x), y)
        pop()
        t1 = time.perf_counter()
        push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        pop()
        t2 = time.perf_counter()
        push("optimizer")
        opt.step()
        pop()
        t3 = time.perf_counter()
        loss.item()  # the step ends when its GPU work has
        pop()
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        times.append(t4 - t0)
        cpu.append(time.thread_time() - c0)
        for name, t in (("forward", t1 - t0), ("backward", t2 - t1), ("optimizer", t3 - t2), ("wait", t4 - t3)):
            parts[name].append(t)
    if a.template:
        with open(a.template, "w") as f:
            json.dump({"step_times": times, "cpu_times": cpu, "parts": parts, "batch": a.batch}, f)
    sys.exit(a.exit_code)


if __name__ == "__main__":
    main()
