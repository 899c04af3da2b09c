"""What wlrun trace's Python hook and trace library cost one step of a PyTorch loop, for
tests/bench/trace_step_cost.lua.

A loop with no range of its own over a one-layer model on the CPU (about 100 us a step, so that
the hook's cost shows), run under `wlrun trace --steps TRACED`: its steps are timed end to end
(time.perf_counter), and the median step while they are traced is compared with the median after
the trace stopped recording (the hook then does nothing), in the same process. Prints one JSON
line: {"traced_us", "after_us"}. Untraced, both medians are of an untraced loop.

    python3 step_cost.py [TRACED [AFTER]]
"""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    traced = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    after = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Linear(8, 8)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    n = traced + after + 10
    loader = DataLoader(TensorDataset(torch.randn(8 * n, 8), torch.randn(8 * n, 8)), batch_size=8)
    ends = []
    for x, y in loader:
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        ends.append(time.perf_counter())
    steps = [b - a for a, b in zip(ends, ends[1:])]
    skip = min(100, traced // 5)  # the first steps: warming up
    print(json.dumps({"traced_us": statistics.median(steps[skip:traced - 1]) * 1e6,
                      "after_us": statistics.median(steps[traced + skip:]) * 1e6}))


if __name__ == "__main__":
    main()
