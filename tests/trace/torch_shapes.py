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

    python3 torch_shapes.py --epochs 3 --steps 6 --batch 16 [--validate] ...
"""
import argparse
import ctypes
import os
import queue
import threading
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


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
    a = ap.parse_args()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    teacher = nn.Sequential(nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(dataset(a.steps * a.batch), batch_size=a.batch)
    noise = DataLoader(torch.randn(a.steps * a.batch, 8), batch_size=a.batch)
    val = DataLoader(dataset(4 * 2 * a.batch), batch_size=2 * a.batch)
    own = own_ranges() if a.log_ms or a.checkpoint_ms else None
    push, pop = own or (lambda name: None, lambda: None)
    for e in range(a.epochs):
        model.eval() if a.eval_train else model.train()
        if a.log_ms:
            push("epoch")
        epoch = batches(a, loader, noise)
        for i, (x, y) in enumerate(loaded(epoch, push, pop) if a.log_ms else epoch):
            if not a.zero_last:
                opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            if a.teacher:
                with torch.no_grad():
                    soft = teacher(x).softmax(1)
                loss = loss + (model(x).log_softmax(1) * soft).sum(1).mean()
            loss.backward()
            opt.step()
            if a.zero_last:
                opt.zero_grad(set_to_none=True)
            if a.log_ms:
                push("log")
                time.sleep(a.log_ms / 1e3)
                pop()
            if a.checkpoint_ms and e == a.epochs - 1 and i == a.steps - 2:
                break
        if a.log_ms:
            pop()
        if a.epoch_ms:
            time.sleep(a.epoch_ms / 1e3)
        if a.validate or a.grad_eval:
            model.eval()
            with torch.no_grad() if a.validate else torch.enable_grad():
                for x, y in val:
                    loss_fn(model(x), y).item()
                    time.sleep(a.val_ms / 1e3)
    if a.checkpoint_ms:
        push("checkpoint")
        time.sleep(a.checkpoint_ms / 1e3)
        pop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
