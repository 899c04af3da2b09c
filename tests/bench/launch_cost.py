"""What one PyTorch launch and one NVTX range cost the CPU, for tests/bench/trace_launch_cost.lua.

Launches N tiny kernels (x.add_(1) on one float: the GPU finishes each long before the next is
launched, so the loop's time is the launches' CPU time) and N NVTX push/pop pairs, R rounds of
each, and prints one JSON line: the median per launch and per pair over the rounds, in us.

    python3 launch_cost.py [N] [R]
"""
import json
import statistics
import sys
import time

import torch


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    x = torch.zeros(1, device="cuda")
    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
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
