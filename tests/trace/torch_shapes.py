"""PyTorch training loops of several epochs with no NVTX range, shaped as wlrun trace's Python hook
must read them (docs/trace.md, "No annotation needed"); tests/e2e/trace_auto_spec.lua traces them:

    --validate         a validation loop under torch.no_grad() after each epoch (--val-ms a batch)
    --grad-eval        the same with grad enabled, the model in eval mode (model.eval() only)
    --epoch-ms T       work after each epoch's loop (a checkpoint saved)
    --zip              a second DataLoader (noise) zipped with the first
    --teacher          a teacher's forward under torch.no_grad() before the student's (distillation)
    --producer         a thread fetches the batches into a queue, the main thread trains on them
    --eval-train       the model trained in eval mode (model.eval(), grad enabled)
    --zero-last        optimizer.zero_grad() after the optimizer's step, not as the loop's first line
    --log-ms T         the program's own NVTX ranges, none of them a step: "epoch" around each
                       epoch, "load" around each fetch and "log" (T ms) after each optimizer step
    --checkpoint-ms T  the last epoch stops one batch short (a loop of so many steps: the loader is
                       not exhausted), then a "checkpoint" range of the program's own (T ms)
    --frozen W         a frozen backbone (20 ms a call) before the trained model, W: eval (in eval
                       mode, grad enabled) or nograd (under torch.no_grad())
    --val-every N      the validation loop (--val-ms a batch, under no_grad) every N steps
    --val-same         the validation iterates the training DataLoader object (its first 4 batches)
    --dataclass        the batches are a dataclass holding the tensors
    --start-ms T       the loader's sampler takes T ms to start each epoch (a shuffle of many indices)
    --persistent       the loader has a worker process kept from one epoch to the next (its
                       iterator reset for each epoch, not made anew)
    --save-every N     a checkpoint saved (torch.save, then --save-ms of writing) after every N-th
                       optimizer step
    --break-at N       each epoch's loop breaks out after N steps (--workers W worker processes:
                       the iterator dropped shuts them down)
    --object           the batches are an object of the program's own (not a dataclass) holding the
                       tensors: nothing in it to count the samples by

    python3 torch_shapes.py --epochs 3 --steps 6 --batch 16 [--validate] ...
"""
import argparse
import ctypes
import dataclasses
import io
import os
import queue
import threading
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


@dataclasses.dataclass
class Batch:
    x: torch.Tensor
    y: torch.Tensor


def as_dataclass(items):
    x, y = torch.utils.data.default_collate(items)
    return Batch(x, y)


class Held:
    """A batch as an object of the program's own, such as a graph library's batch."""

    def __init__(self, x, y):
        self.x, self.y = x, y


def as_object(items):
    return Held(*torch.utils.data.default_collate(items))


class SlowStart(torch.utils.data.Sampler):
    """The indices in order, after ms of work as each epoch's iterator starts."""

    def __init__(self, n, ms):
        self.n, self.ms = n, ms

    def __len__(self):
        return self.n

    def __iter__(self):
        time.sleep(self.ms / 1e3)
        return iter(range(self.n))


class Backbone(nn.Module):
    """A frozen feature extractor of 20 ms a call."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(32, 32)
        self.lin.requires_grad_(False)

    def forward(self, x):
        time.sleep(0.02)
        return self.lin(x)


def as_tuples(items):
    """A detection-style collate (torchvision's references): a tuple of the samples' inputs and one
    of their labels, so that the batch's first tensor is one sample's."""
    return tuple(zip(*items))


def seq_first(items):
    """Each sample's 32 features as 4 steps of 8, stacked sequence-first (4, batch, 8), as
    nn.LSTM's default layout wants: the first tensor's first dimension is not the batch's."""
    x, y = torch.utils.data.default_collate(items)
    return x.view(-1, 4, 8).transpose(0, 1), y


def dropping(items):
    """A collate that drops the last two samples of each batch (as one that filters out samples it
    cannot read does): the batch is smaller than the sampler's count."""
    return torch.utils.data.default_collate(items[:-2])


class Encoded:
    """A collate that runs a frozen encoder with parameters on the batch (left in training mode,
    grad enabled): the encoder's 20 ms is the fetch's, not the step's."""

    def __init__(self):
        self.encoder = Backbone()

    def __call__(self, items):
        x, y = torch.utils.data.default_collate(items)
        return self.encoder(x), y


class Slow:
    """A collate of ms more a batch: a loader slower than the step."""

    def __init__(self, collate, ms):
        self.collate, self.ms = collate, ms

    def __call__(self, items):
        time.sleep(self.ms / 1e3)
        return self.collate(items)


def as_batch(a, b):
    """x and y of a batch as the shape's collate made it."""
    if a.dataclass or a.object:
        return b.x, b.y
    if a.collate == "tuples":
        return torch.stack(b[0]), torch.stack(b[1])
    if a.collate == "seq-first":
        return b[0].transpose(0, 1).reshape(-1, 32), b[1]
    return b


def dataset(n, width=32):
    return TensorDataset(torch.randn(n, width), torch.randint(0, 4, (n,)))


def batches(a, loader, noise):
    """The batches of one epoch, as the shape fetches them."""
    if a.zip:
        return ((x, y) for (x, y), _ in zip(loader, noise))
    if not a.producer:
        return loader
    q = queue.Queue(4)

    def fetch():
        for b in loader:
            q.put(b)
        q.put(None)

    threading.Thread(target=fetch, daemon=True).start()
    return iter(q.get, None)


def own_ranges():
    """The program's own NVTX ranges through the C NVTX (tests/trace/nvtx_push.c, by ctypes)."""
    lib = ctypes.CDLL(os.environ["WLRUN_TRACE_NVTX_PUSH"])
    lib.wlrun_test_push.argtypes = (ctypes.c_char_p,)
    return (lambda name: lib.wlrun_test_push(name.encode())), lib.wlrun_test_pop


def loaded(fetch, push, pop):
    """The batches of fetch, each fetched inside the program's "load" range."""
    it = iter(fetch)
    while True:
        push("load")
        try:
            b = next(it)
        except StopIteration:
            return
        finally:
            pop()
        yield b


def validate(a, model, val, loss_fn):
    """The validation loop: under no_grad (--grad-eval: in eval mode only), --val-ms a batch."""
    model.eval()
    with torch.no_grad() if not a.grad_eval else torch.enable_grad():
        for k, b in enumerate(val):
            x, y = (b.x, b.y) if isinstance(b, (Batch, Held)) else b
            loss_fn(model(x), y).item()
            time.sleep(a.val_ms / 1e3)
            if k == 3:
                break
    model.eval() if a.eval_train else model.train()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--grad-eval", action="store_true")
    ap.add_argument("--val-ms", type=float, default=5.0)
    ap.add_argument("--epoch-ms", type=float, default=0.0)
    ap.add_argument("--zip", action="store_true")
    ap.add_argument("--teacher", action="store_true")
    ap.add_argument("--producer", action="store_true")
    ap.add_argument("--log-ms", type=float, default=0.0)
    ap.add_argument("--eval-train", action="store_true")
    ap.add_argument("--checkpoint-ms", type=float, default=0.0)
    ap.add_argument("--zero-last", action="store_true")
    ap.add_argument("--frozen", choices=["eval", "nograd"])
    ap.add_argument("--val-every", type=int, default=0)
    ap.add_argument("--val-same", action="store_true")
    ap.add_argument("--dataclass", action="store_true")
    ap.add_argument("--collate", choices=["tuples", "seq-first", "encoded", "dropping"])
    ap.add_argument("--cached", action="store_true")  # every batch fetched before the loop
    ap.add_argument("--fetch-ms", type=float, default=0.0)  # a slow collate, per batch
    ap.add_argument("--start-ms", type=float, default=0.0)
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--object", action="store_true")
    ap.add_argument("--break-at", type=int, default=0)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--save-every", type=int, default=0)
    ap.add_argument("--save-ms", type=float, default=30.0)
    a = ap.parse_args()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    teacher = nn.Sequential(nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    data = dataset(a.steps * a.batch)
    collate = as_dataclass if a.dataclass else as_object if a.object else None
    collate = {"tuples": as_tuples, "seq-first": seq_first, "encoded": Encoded(),
               "dropping": dropping}.get(a.collate, collate)
    if a.fetch_ms:
        collate = Slow(collate or torch.utils.data.default_collate, a.fetch_ms)
    loader = DataLoader(data, batch_size=a.batch, collate_fn=collate,
                        sampler=SlowStart(len(data), a.start_ms) if a.start_ms else None,
                        num_workers=1 if a.persistent else a.workers, persistent_workers=a.persistent)
    backbone = Backbone().eval() if a.frozen == "eval" else Backbone()
    noise = DataLoader(torch.randn(a.steps * a.batch, 8), batch_size=a.batch)
    val = DataLoader(dataset(4 * 2 * a.batch), batch_size=2 * a.batch)
    own = own_ranges() if a.log_ms or a.checkpoint_ms else None
    push, pop = own or (lambda name: None, lambda: None)
    cache = list(loader) if a.cached else None
    for e in range(a.epochs):
        model.eval() if a.eval_train else model.train()
        if a.log_ms:
            push("epoch")
        epoch = cache if a.cached else batches(a, loader, noise)
        for i, b in enumerate(loaded(epoch, push, pop) if a.log_ms else epoch):
            x, y = as_batch(a, b)
            if not a.zero_last:
                opt.zero_grad(set_to_none=True)
            if a.frozen:
                with torch.no_grad() if a.frozen == "nograd" else torch.enable_grad():
                    x = backbone(x)
            loss = loss_fn(model(x), y)
            if a.teacher:
                with torch.no_grad():
                    soft = teacher(x).softmax(1)
                loss = loss + (model(x).log_softmax(1) * soft).sum(1).mean()
            loss.backward()
            opt.step()
            if a.zero_last:
                opt.zero_grad(set_to_none=True)
            if a.save_every and (i + 1) % a.save_every == 0:
                torch.save(model.state_dict(), io.BytesIO())
                time.sleep(a.save_ms / 1e3)
            if a.log_ms:
                push("log")
                time.sleep(a.log_ms / 1e3)
                pop()
            if a.checkpoint_ms and e == a.epochs - 1 and i == a.steps - 2:
                break
            if a.break_at and i + 1 == a.break_at:
                break
            if a.val_every and (i + 1) % a.val_every == 0:
                validate(a, model, loader if a.val_same else val, loss_fn)
        if a.log_ms:
            pop()
        if a.epoch_ms:
            time.sleep(a.epoch_ms / 1e3)
        if a.validate or a.grad_eval:
            validate(a, model, val, loss_fn)
    if a.checkpoint_ms:
        push("checkpoint")
        time.sleep(a.checkpoint_ms / 1e3)
        pop()
    return 0


if __name__ == "__main__":
    import faulthandler

    # a run that hangs (the spec stops it at 180 s) says where, every thread's stack on stderr
    faulthandler.dump_traceback_later(150, exit=True)
    raise SystemExit(main())
