"""A PyTorch training loop with no NVTX range at all, for wlrun trace's Python hook (docs/trace.md,
"No annotation needed"). Runs on the CPU or a GPU; its shapes are those a hook must survive:

    --closure          optimizer.step(closure) with forward and backward in the closure (Lightning)
    --optimizers 2     two optimizers stepping in each iteration (a GAN's)
    --every N          the optimizers share one batch an iteration, and the last of them steps every
                       Nth iteration only (a WGAN's critic every iteration, its generator every Nth)
    --recompute MS     reentrant activation checkpointing of the model's two blocks, each sleeping MS
                       ms a call: their forwards run again inside backward
    --accumulate K     K micro-batches of forward and backward per optimizer step
    --ranges           the program pushes its own train_step range (the hook's steps are left out)
    --no-loader        batches made in the loop, no DataLoader (the hook counts the model's input)
    --make-ms MS       with --no-loader, each batch takes MS ms more to make (a slow generator)
    --val-held N       after every Nth step, the model (in eval mode, torch.no_grad()) evaluates 4 held
                       batches of its own, 5 ms each: a validation with no DataLoader
    --opt-range MS     a range of the program's own ("opt") around each optimizer step and MS ms of
                       work after it, inside the range (C NVTX where there is no CUDA, as --ranges)
    --teacher MS       a frozen module of its own (eval mode, torch.no_grad()) takes each batch first
                       and sleeps MS ms, as a frozen backbone or a distillation's teacher does
    --input KIND       with --no-loader, the model's input: packed (a PackedSequence of sequences
                       of 3 to 9 steps into an LSTM), list (a list of per-sample tensors), seqfirst
                       (the model is a sequence-first nn.LSTM, input (5, batch, 32)), inside (a
                       model holding that LSTM: the hook counts 5 and says why on stderr), keywords
                       (model(x=x): nothing to count by position)
    --passes N         N forward and backward passes on the same batch before the optimizer's
                       step (as sharpness-aware minimisation makes two)
    --split N          each batch trained in N optimizer steps, on 1/N of it each (the steps after
                       a batch's first fetch none)
    --fresh-iter       each batch from an iterator of its own (next(iter(loader)))
    --val-every N      after every Nth step, 4 batches of a validation DataLoader of its own under
                       torch.no_grad(), 5 ms each
    --preload          every batch fetched through the DataLoader (of 4 times the batch) before the
                       loop, which slices them (the hook counts the model's input)
    --scaler N         a GradScaler's step, which skips every Nth optimizer step (as float16
                       training's overflowed gradients make it skip)
    --update-ms MS     the GradScaler's update() (a subclass's, around its base's) takes MS ms more
    --zero-first [W]   W.zero_grad() (W: optimizer, the default, or model) after the batch is in
                       hand, before the --gap-ms wait and the forward (the loop's first line), not
                       before the fetch
    --functional MS    the forward calls no module with parameters (functional ops on the model's
                       weights), and sleeps MS ms first
    --grad             the gradients taken by torch.autograd.grad and set by the loop, no backward()
    --manual [made]    the loop updates the weights itself (p -= lr * p.grad): no optimizer at all,
                       or (made) one made and never stepped
    --raise-every N    the optimizer's step raises every Nth call (out of memory), and the loop
                       goes on with the next batch, as a loop that skips a batch on OOM does
    --step-tail KIND   after each optimizer's step, the step's tail: sched (a LambdaLR's step),
                       ema (an AveragedModel's update_parameters), or zero (zero_grad() there, not
                       first in the iteration); with --step-tail-ms MS, the scheduler's step or
                       the update takes MS ms more; with --step-tail-every N, the tail only after
                       every Nth step (an EMA every N steps)

    python3 torch_auto.py --steps 12 --batch 16 [--device cuda] [--closure] ...
"""
import argparse
import io
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Teacher(nn.Module):
    """A frozen module that takes ms milliseconds a call."""

    def __init__(self, ms):
        super().__init__()
        self.ms, self.layer = ms, nn.Linear(32, 32)

    def forward(self, x):
        time.sleep(self.ms / 1e3)
        return self.layer(x)


class SkippingScaler(torch.cuda.amp.GradScaler):
    """A GradScaler (disabled: the CPU has none) that skips every nth optimizer step, as a real one
    skips the step whose gradients overflowed."""

    def __init__(self, n, update_ms=0.0):
        super().__init__(enabled=False)
        self.n, self.calls, self.update_ms = n, 0, update_ms

    def step(self, optimizer, *args, **kwargs):
        self.calls += 1
        if self.calls % self.n == 0:
            return None
        return super().step(optimizer, *args, **kwargs)

    def update(self, new_scale=None):
        super().update(new_scale)
        time.sleep(self.update_ms / 1e3)


class ListParams(nn.Sequential):
    """A model whose parameters() gives a list, as some libraries' modules do."""

    def parameters(self, recurse=True):
        return list(super().parameters(recurse))


class RaisingSGD(torch.optim.SGD):
    """SGD whose step raises every Nth call, as a step that runs out of memory does."""

    def __init__(self, params, lr, every):
        super().__init__(params, lr=lr)
        self.every, self.calls = every, 0

    def step(self, closure=None):
        self.calls += 1
        if self.calls % self.every == 0:
            raise RuntimeError("CUDA out of memory (RaisingSGD)")
        return super().step(closure)


class Inputs(nn.Module):
    """A model given its batch as --input says (x: the loop's (batch, 32) tensor)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.rnn = nn.LSTM(32, 32) if kind in ("packed", "seqfirst", "inside") else None
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))

    def call(self, x):
        if self.kind == "packed":
            from torch.nn.utils.rnn import pack_sequence

            seqs = [x[i].expand(3 + i % 7, 32) for i in range(x.shape[0])]
            return self(pack_sequence(seqs, enforce_sorted=False))
        if self.kind == "list":
            return self(list(x))
        if self.kind == "seqfirst":
            out, _ = self.rnn(x.expand(5, -1, -1))  # the LSTM is the module the hook sees first
            return self.net(out[-1])
        if self.kind == "inside":
            return self(x.expand(5, -1, -1))
        return self(x=x)

    def forward(self, x):
        if self.kind == "packed":
            _, (h, _) = self.rnn(x)
            return self.net(h[-1])
        if self.kind == "list":
            return self.net(torch.stack(x))
        if self.kind == "inside":
            out, _ = self.rnn(x)
            return self.net(out[-1])
        return self.net(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--closure", action="store_true")
    ap.add_argument("--optimizers", type=int, default=1)
    ap.add_argument("--accumulate", type=int, default=1)
    ap.add_argument("--ranges", action="store_true")
    ap.add_argument("--no-loader", action="store_true")
    ap.add_argument("--make-ms", type=float, default=0.0)
    ap.add_argument("--teacher", type=float, default=None)
    ap.add_argument("--val-held", type=int, default=0)
    ap.add_argument("--opt-range", type=float, default=None)
    ap.add_argument("--input", choices=["packed", "list", "seqfirst", "inside", "keywords"])
    ap.add_argument("--preload", action="store_true")
    ap.add_argument("--val-every", type=int, default=0)
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--fresh-iter", action="store_true")
    ap.add_argument("--split", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--after-ms", type=float, default=0.0)  # work after each optimizer step (logging)
    ap.add_argument("--tail-ms", type=float, default=0.0)  # work after the loop, then a checkpoint
    ap.add_argument("--gap-ms", type=float, default=0.0)  # between the batch in hand and the forward
    ap.add_argument("--hooks", action="store_true")  # print the global module hooks at the end
    ap.add_argument("--list-params", action="store_true")  # a model whose parameters() is a list
    ap.add_argument("--scaler", type=int, default=0)  # a GradScaler skipping every Nth step
    ap.add_argument("--update-ms", type=float, default=0.0)
    ap.add_argument("--zero-first", nargs="?", const="optimizer", choices=["optimizer", "model"])
    ap.add_argument("--functional", type=float, default=None)
    ap.add_argument("--grad", action="store_true")
    ap.add_argument("--manual", nargs="?", const="none", choices=["none", "made"])
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--recompute", type=float, default=None)
    ap.add_argument("--raise-every", type=int, default=0)
    ap.add_argument("--step-tail", choices=["sched", "ema", "zero"])
    ap.add_argument("--step-tail-ms", type=float, default=0.0)
    ap.add_argument("--step-tail-every", type=int, default=1)
    a = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device(a.device)
    kind = ListParams if a.list_params else nn.Sequential
    models = [kind(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(dev) for _ in range(a.optimizers)]
    if a.input:
        models = [Inputs(a.input).to(dev) for _ in range(a.optimizers)]
    # with no optimizer the model stands for it where the loop calls zero_grad()
    def optimizer(m):
        if a.manual == "none":
            return m
        if a.raise_every:
            return RaisingSGD(m.parameters(), lr=0.01, every=a.raise_every)
        return torch.optim.SGD(m.parameters(), lr=0.01)

    opts = [optimizer(m) for m in models]

    def slow(x):  # the tail's work
        time.sleep(a.step_tail_ms / 1e3)
        return x

    tails = []
    if a.step_tail == "sched":
        lr = torch.optim.lr_scheduler.LambdaLR
        tails = [lr(o, lambda s: slow(1.0)).step for o in opts]
    elif a.step_tail == "ema":
        from torch.optim.swa_utils import AveragedModel

        def ema(m):
            n, calls = len(list(m.parameters())), [0]

            def avg_fn(e, p, k):  # (MS ms an update: at its first parameter)
                calls[0] += 1
                return slow(e) if calls[0] % n == 1 else e

            avg = AveragedModel(m, avg_fn=avg_fn)
            return lambda: avg.update_parameters(m)

        tails = [ema(m) for m in models]
    elif a.step_tail == "zero":
        tails = [o.zero_grad for o in opts]
    teacher = Teacher(a.teacher or 0).to(dev).eval()
    scaler = SkippingScaler(a.scaler, a.update_ms) if a.scaler else None
    loss_fn = nn.CrossEntropyLoss()
    n = a.steps * a.accumulate * a.optimizers * a.batch
    data = TensorDataset(torch.randn(n, 32), torch.randint(0, 4, (n,)))
    loader = DataLoader(data, batch_size=a.batch, num_workers=a.workers)
    batches = None if a.no_loader or a.preload or a.fresh_iter else iter(loader)

    def forward(model, x):
        if a.recompute is not None:
            from torch.utils.checkpoint import checkpoint

            def first(h):
                time.sleep(a.recompute / 1e3)
                return model[0](h)

            def rest(h):
                time.sleep(a.recompute / 1e3)
                return model[2](model[1](h))

            h = checkpoint(first, x.requires_grad_(), use_reentrant=True)
            return checkpoint(rest, h, use_reentrant=True)
        if a.input:
            return model.call(x)
        if a.teacher is not None:
            with torch.no_grad():
                x = teacher(x)
        if a.functional is None:
            return model(x)
        time.sleep(a.functional / 1e3)
        first, last = model[0], model[2]  # indexing calls no module
        h = torch.relu(nn.functional.linear(x, first.weight, first.bias))
        return nn.functional.linear(h, last.weight, last.bias)

    def backward(model, loss):
        if not a.grad:
            return loss.backward()
        params = list(model.parameters())
        for p, g in zip(params, torch.autograd.grad(loss, params)):
            p.grad = g if p.grad is None else p.grad + g

    if a.preload:  # the dataset read once through the loader, then sliced
        xs, ys = zip(*DataLoader(data, batch_size=4 * a.batch))
        held, at = (torch.cat(xs), torch.cat(ys)), [0]

    parts = []

    def batch():
        if a.split > 1:  # the parts of a batch fetched once
            if not parts:
                x, y = next(batches)
                parts.extend(zip(x.chunk(a.split), y.chunk(a.split)))
            return parts.pop(0)
        if a.preload:
            i, at[0] = at[0], at[0] + a.batch
            return held[0][i:i + a.batch], held[1][i:i + a.batch]
        if a.no_loader:
            if a.make_ms:
                time.sleep(a.make_ms / 1e3)
            return torch.randn(a.batch, 32), torch.randint(0, 4, (a.batch,))
        if a.fresh_iter:
            return next(iter(loader))
        return next(batches)

    if a.every > 1:  # one batch an iteration for all the optimizers
        fetch, shared = batch, [None]

        def batch():
            return shared[0]

    for i in range(a.steps):
        if a.ranges:
            range_push("train_step")
        if a.every > 1:
            shared[0] = fetch()
        for j, (model, opt) in enumerate(zip(models, opts)):
            if j > 0 and j == len(models) - 1 and i % a.every:
                continue
            if not a.zero_first and a.step_tail != "zero":
                opt.zero_grad()
            if a.closure:
                x, y = batch()
                x, y = x.to(dev), y.to(dev)

                def closure():
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    return loss

                opt.step(closure)
            else:
                for k in range(a.accumulate):
                    x, y = batch()
                    x, y = x.to(dev), y.to(dev)
                    if a.zero_first and k == 0:
                        (model if a.zero_first == "model" else opt).zero_grad()
                    if a.gap_ms:
                        time.sleep(a.gap_ms / 1e3)
                    for _ in range(a.passes):
                        backward(model, loss_fn(forward(model, x), y))
                if scaler:
                    scaler.step(opt)
                    scaler.update()
                elif a.manual:
                    with torch.no_grad():
                        for p in model.parameters():
                            p -= 0.01 * p.grad
                elif a.opt_range is not None:
                    range_push("opt")
                    opt.step()
                    time.sleep(a.opt_range / 1e3)
                    range_pop()
                else:
                    try:
                        opt.step()
                    except RuntimeError as e:  # RaisingSGD's: the batch is skipped
                        assert "out of memory" in str(e)
                        opt.zero_grad()
            if tails and i % a.step_tail_every == 0:
                tails[j]()
        if a.ranges:
            range_pop()
        if a.val_every and (i + 1) % a.val_every == 0:
            with torch.no_grad():
                for vx, _ in DataLoader(TensorDataset(torch.randn(4 * a.batch, 32),
                                                      torch.zeros(4 * a.batch)), batch_size=a.batch):
                    models[0](vx.to(dev)) if not a.input else None
                    time.sleep(0.005)
        if a.val_held and (i + 1) % a.val_held == 0:
            models[0].eval()
            with torch.no_grad():
                for _ in range(4):
                    models[0](torch.randn(a.batch, 32, device=dev))
                    time.sleep(0.005)
            models[0].train()
        if a.after_ms:
            time.sleep(a.after_ms / 1e3)
    if a.tail_ms:
        time.sleep(a.tail_ms / 1e3)
        torch.save(models[0].state_dict(), io.BytesIO())  # the checkpoint, after the tail's work
    if a.hooks:
        from torch.nn.modules import module
        print("global forward pre-hooks: %d" % len(module._global_forward_pre_hooks))
        print("the hook's wrappers: %s" % (" ".join(_hooked()) or "none"))
    return 0


def _hooked():
    """The functions of torch's and Python's that wlrun's hook stands in for now (a function
    of its file, sitecustomize.py), and its global optimizer step hooks, by name."""
    import queue
    from torch.utils.data import dataloader

    def hooks(f):
        return getattr(getattr(f, "__code__", None), "co_filename", "").endswith("sitecustomize.py")

    base = dataloader._BaseDataLoaderIter
    places = {"DataLoader.__init__": base.__init__, "DataLoader.__next__": base.__next__,
              "DataLoader._next_index": base._next_index, "Queue.get": queue.Queue.get,
              "Module.train": nn.Module.train, "Module.zero_grad": nn.Module.zero_grad,
              "Optimizer.zero_grad": torch.optim.Optimizer.zero_grad,
              "Optimizer.__init__": torch.optim.Optimizer.__init__,
              "SGD.step": torch.optim.SGD.step, "autograd.backward": torch.autograd.backward,
              "autograd.grad": torch.autograd.grad, "save": torch.save,
              "cuda.synchronize": torch.cuda.synchronize}
    names = [name for name, f in places.items() if hooks(f)]
    optim = __import__("torch.optim.optimizer", fromlist=["_"])
    for kind in ("pre", "post"):
        if any(hooks(f) for f in getattr(optim, "_global_optimizer_%s_hooks" % kind, {}).values()):
            names.append("optimizer %s-hooks" % kind)
    return names


def _nvtx():
    """The program's own ranges: torch's NVTX where it has CUDA, else the C NVTX through ctypes."""
    if torch.cuda.is_available():
        return torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    import ctypes
    import os
    lib = ctypes.CDLL(os.environ["WLRUN_TRACE_NVTX_PUSH"])  # tests/trace/nvtx_push.c: NVTX from C
    push = lib.wlrun_test_push
    push.argtypes = (ctypes.c_char_p,)
    return (lambda name: push(name.encode())), lib.wlrun_test_pop


range_push = range_pop = None
if __name__ == "__main__":
    import faulthandler

    # a run that hangs (the spec stops it at 180 s) says where, every thread's stack on stderr
    faulthandler.dump_traceback_later(150, exit=True)
    if "--ranges" in sys.argv or "--opt-range" in sys.argv:
        range_push, range_pop = _nvtx()
    sys.exit(main())
