"""What one PyTorch launch and one NVTX range cost the CPU, for tests/bench/trace_launch_cost.lua.

Launches N tiny kernels (x.add_(1) on one float: the GPU finishes each long before the next is
launched, so the loop's time is the launches' CPU time) and N NVTX push/pop pairs, R rounds of
each, and prints one JSON line: the median per launch and per pair over the rounds, in us.

With "steps" first, the launches are made inside STEPS ranges named train_step, K a range, each
followed by a synchronisation, and the line holds the median per launch over the steps from the
ninth on (past the three steps wlrun trace always records, docs/trace.md, --gpu-every), with the
median time of a step's push and pop together (its boundaries: where wlrun trace marks the steps)
and of the synchronisation after it.

    python3 launch_cost.py [N [R]]
    python3 launch_cost.py steps [STEPS [K]]
"""
import json
import statistics
import sys
import time

import torch


def _setup():
    """A one-float tensor on the GPU after 1000 launches, and torch's NVTX push and pop."""
    x = torch.zeros(1, device="cuda")
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    return x, torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop


def in_steps(args):
    steps = int(args[0]) if args else 60
    k = int(args[1]) if len(args) > 1 else 400
    x, push, pop = _setup()
    per, bounds, syncs = [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        push("train_step")
        t1 = time.perf_counter()
        for _ in range(k):
            x.add_(1)
        t2 = time.perf_counter()
        pop()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        per.append((t2 - t1) / k * 1e6)
        bounds.append((t1 - t0 + t3 - t2) * 1e6)
        syncs.append((t4 - t3) * 1e6)
    print(json.dumps({"launch_us": statistics.median(per[8:]), "boundary_us": statistics.median(bounds[8:]),
                      "sync_us": statistics.median(syncs[8:]), "steps": steps, "k": k}))
    return 0


def main():
    if sys.argv[1:2] == ["steps"]:
        return in_steps(sys.argv[2:])
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    x, push, pop = _setup()
    launch, pair = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        launch.append((time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            push("r")
            pop()
        pair.append((time.perf_counter() - t) / n * 1e6)
    print(json.dumps({"launch_us": statistics.median(launch), "pair_us": statistics.median(pair), "n": n,
                      "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
