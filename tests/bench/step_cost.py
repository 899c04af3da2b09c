"""What wlrun trace's Python hook and trace library cost one step of a PyTorch loop, for
tests/bench/trace_step_cost.lua.

A loop with no range of its own over a one-layer model on the CPU (about 100 us a step, so that
the hook's cost shows), run under `wlrun trace --steps TRACED`: its steps are timed end to end
(time.perf_counter), and the median step while they are traced is compared with the median after
the trace stopped recording (the hook then does nothing), in the same process. Prints one JSON
line: {"traced_us", "after_us"}. Untraced, both medians are of an untraced loop.

    python3 step_cost.py [TRACED [AFTER]]
    python3 step_cost.py count [TRACED]

With "count": no timing; the calls the hook makes in steps 200 to TRACED - 1 are counted instead
(sys.setprofile: calls of Python functions of the hook's file, sitecustomize.py, and of C
functions from them; a deterministic measure of its work that the CPU's noise does not move),
printed as {"hook_python_calls", "hook_c_calls"} a step, and every call the process makes in
those steps (torch's too: what the hook sets off in it, a module's parameters() walked) less
every call in as many steps after the trace stopped, as "calls_added" a step; then, in as many
steps again, the bytecode instructions the hook's Python functions run a step (sys.settrace's
opcode events, or sys.monitoring's instruction events), as "hook_opcodes": the measure of its
Python work that counts what happens inside its functions too. Run it under wlrun trace --steps
TRACED + (TRACED - 200).
"""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def _counter():
    """A profile function counting calls, and the counts: the hook's ("py", "c") and all of them
    ("all")."""
    counts = {"py": 0, "c": 0, "all": 0}

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            counts["all"] += 1
            if frame.f_code.co_filename.endswith("sitecustomize.py"):
                counts["py" if event == "call" else "c"] += 1

    return profile, counts


def _opcodes():
    """Counting the bytecode instructions run in the hook's file: (start, stop, counts). Python
    3.12's sys.settrace gives no opcode events (f_trace_opcodes set in a call event is not heeded
    there): sys.monitoring's instruction events where it has them (3.12 and later), else
    sys.settrace's opcode events."""
    counts = {"ops": 0}
    mon = getattr(sys, "monitoring", None)
    if mon is not None:
        tool = mon.PROFILER_ID

        def instruction(code, offset):
            if code.co_filename.endswith("sitecustomize.py"):
                counts["ops"] += 1
                return None
            return mon.DISABLE  # another file's instruction: not asked again

        def start():
            mon.use_tool_id(tool, "step_cost")
            mon.register_callback(tool, mon.events.INSTRUCTION, instruction)
            mon.set_events(tool, mon.events.INSTRUCTION)

        def stop():
            mon.set_events(tool, 0)
            mon.register_callback(tool, mon.events.INSTRUCTION, None)
            mon.free_tool_id(tool)

        return start, stop, counts

    def opcode(frame, event, arg):
        if event == "opcode":
            counts["ops"] += 1
        return opcode

    def call(frame, event, arg):
        if frame.f_code.co_filename.endswith("sitecustomize.py"):
            frame.f_trace_opcodes = True
            return opcode
        return None

    return (lambda: sys.settrace(call)), (lambda: sys.settrace(None)), counts


def count(traced):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Linear(8, 8)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    assert traced > 200, "count TRACED: more than 200 steps traced"
    steps = traced - 200
    after = traced + steps + 50  # the first step counted after the trace stopped
    n = after + steps + 1  # each half counts its steps' bodies and the fetches after them
    loader = DataLoader(TensorDataset(torch.randn(8 * n, 8), torch.randn(8 * n, 8)), batch_size=8)
    profile, counts = _counter()
    later, later_counts = _counter()
    start_ops, stop_ops, ops = _opcodes()
    for i, (x, y) in enumerate(loader):
        if i in (200, after):
            sys.setprofile(profile if i == 200 else later)
        elif i in (traced, after + steps):
            sys.setprofile(None)
        if i == traced:  # the opcodes in the next steps traced (the counting's own cost apart: it
            start_ops()  # runs outside the hook's frames)
        elif i == traced + steps:
            stop_ops()
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    sys.setprofile(None)
    print(json.dumps({"hook_python_calls": counts["py"] / steps,
                      "hook_c_calls": counts["c"] / steps,
                      "calls_added": (counts["all"] - later_counts["all"]) / steps,
                      "hook_opcodes": ops["ops"] / steps}))


def main():
    if sys.argv[1:2] == ["count"]:
        return count(int(sys.argv[2]) if len(sys.argv) > 2 else 1200)
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
