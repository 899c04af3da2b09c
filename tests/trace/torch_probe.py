"""PyTorch training loops shaped unlike torch_loops.py's, timing themselves the same way, for checking
`wlrun trace` against the program's own numbers in the same run (tests/gpu/trace_loops_spec.lua,
the "probe" cases). The program opens no NVTX range at all: wlrun's Python hook
(src/trace/python/sitecustomize.py) must find the steps itself.

Shapes (--shape):

  lm-made          a small transformer language model (embedding of 8000 tokens, 4 encoder layers of
                   d_model 256 and 4 heads, batch_first, a linear head to the vocabulary) trained on
                   token batches made on the GPU in the loop (torch.randint; batch 32, 128 tokens)
                   under bfloat16 autocast, the body in the common order: zero_grad(set_to_none) first,
                   the forward, backward, clip_grad_norm_, AdamW's step, a cosine LR scheduler's step;
                   the template (below)
  lm-made-ema      lm-made with the step's tail after the scheduler's step: an exponential moving
                   average of the weights (torch.optim.swa_utils.AveragedModel, torch's EMA of
                   every parameter at once where it has one), then zero_grad(set_to_none) there,
                   not first: the template's step ends after them, the next batch made after that
  accum            torch_loops.py's conv net fed by a DataLoader (2 workers, pinned memory, persistent
                   workers), gradient accumulation over 4 micro-batches of --batch per optimizer step;
                   the template's step is one optimizer step: its synchronisation before the first
                   micro-batch's forward, after that micro-batch is in hand; data = from the previous
                   step's end to the first micro-batch in hand; the other 3 fetches are inside the
                   step; samples per step 4 x --batch
  scaler-loader    the conv net from a DataLoader, float16 autocast with a GradScaler of the default
                   growth (scale(loss).backward(), unscale_, clip_grad_norm_, step, update), a StepLR
                   scheduler's step; the template
  log-every        the conv net from a DataLoader, no synchronisation but loss.item() and a line on
                   standard error every 20 steps, as a training log: the loop's steady-state throughput
                   (one synchronisation at the end of the warmup, one at the end)
  stream-prefetch  the conv net fed by the classic data prefetcher: each batch from a DataLoader copied
                   to the GPU on a side CUDA stream while the step before runs, the step's stream
                   waiting on the side stream and the batch recorded on it before use; the template, its
                   in_hand when the prefetcher hands the batch to the step (which issues the next
                   batch's fetch and copy first, as the prefetcher does)
  hf-dict          a Trainer-style loop (a class whose training_step and optimizer_step the loop calls,
                   as Hugging Face's Trainer does): token sequences of random length (64 to 129) from a
                   DataLoader (2 workers, pinned memory) whose collate pads each batch to its longest
                   and gives a dict (input_ids, attention_mask, labels); the model takes them by
                   keyword and returns a dict holding its loss (model(**batch)["loss"]); bfloat16
                   autocast, clip_grad_norm_, AdamW's step, a linear LR scheduler's step, then
                   zero_grad(set_to_none) after the step, as the Trainer orders them; the template

The template (torch_loops.py's "after"): torch.cuda.synchronize() then t0 = time.perf_counter()
before the step, torch.cuda.synchronize() then t1 just after it; iter = t1 - t0, data = from the
previous step's t1 to the batch in hand (taken right after it is, after its .to(dev) where there is
one).

    python3 torch_probe.py --shape lm-made --steps 80 --warmup 10 --out prog.json [--batch N]
        [--device cpu]

--batch defaults to 32 for lm-made and hf-dict, 64 otherwise. On the CPU (--device cpu, a check of the program
itself) there is no autocast, no GradScaler and no side stream: each shape runs in float32.

--out writes torch_loops.py's fields: {shape, batch (a micro-batch's for accum), warmup, steps, iter,
data (s, every step; template shapes), marks ({in_hand, t0, t1} of every step, time.perf_counter()'s
CLOCK_MONOTONIC seconds; template shapes), period and samples_per_s (over the measured steps W+1..N;
accum's samples are 4 x batch a step), skipped (optimizer steps a GradScaler skipped), recompiles (0)
and made ([])}.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_loops import Images, net, write_out  # noqa: E402 - beside this file

SHAPES = ("lm-made", "lm-made-ema", "accum", "scaler-loader", "log-every", "stream-prefetch", "hf-dict")
TEMPLATE = ("lm-made", "lm-made-ema", "accum", "scaler-loader", "stream-prefetch", "hf-dict")
ACCUM = 4  # accum's micro-batches per optimizer step
LOG_EVERY = 20
VOCAB, SEQ, D_MODEL, HEADS, LAYERS = 8000, 128, 256, 4, 4


class LM(nn.Module):
    """A small transformer language model: token and position embeddings, a causal
    nn.TransformerEncoder (batch_first), a linear head to the vocabulary."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.zeros(SEQ, D_MODEL))
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, 4 * D_MODEL, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D_MODEL, VOCAB)
        causal = torch.triu(torch.full((SEQ, SEQ), float("-inf")), diagonal=1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, tokens):
        n = tokens.shape[1]
        h = self.embed(tokens) + self.pos[:n]
        return self.head(self.encoder(h, mask=self.causal[:n, :n]))


class HFLike(LM):
    """LM as a Hugging Face model is called: input_ids, attention_mask and labels by keyword, a dict
    holding the loss and the logits back (padding masked out of the attention and the loss)."""

    def forward(self, input_ids=None, attention_mask=None, labels=None):
        n = input_ids.shape[1]
        h = self.embed(input_ids) + self.pos[:n]
        pad = attention_mask == 0
        logits = self.head(self.encoder(h, mask=self.causal[:n, :n], src_key_padding_mask=pad))
        loss = nn.functional.cross_entropy(logits.float().reshape(-1, VOCAB), labels.reshape(-1),
                                           ignore_index=-100)
        return {"loss": loss, "logits": logits}


class Sequences(Dataset):
    """n token sequences of random length (64 to SEQ + 1), seeded by index."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        length = int(torch.randint(64, SEQ + 2, (1,), generator=g))
        return torch.randint(VOCAB, (length,), generator=g)


def pad_collate(items):
    """A batch of sequences padded to its longest: input_ids, attention_mask and labels (the next
    token, -100 at the padding and the end)."""
    n = max(len(t) for t in items) - 1
    ids = torch.zeros(len(items), n, dtype=torch.long)
    mask = torch.zeros(len(items), n, dtype=torch.long)
    labels = torch.full((len(items), n), -100, dtype=torch.long)
    for k, t in enumerate(items):
        m = len(t) - 1
        ids[k, :m], mask[k, :m], labels[k, :m] = t[:-1], 1, t[1:]
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


class Trainer:
    """The parts of a Trainer's loop that a step runs: training_step (the forward by keyword, the
    backward) and optimizer_step (clip, step, the scheduler, zero_grad after)."""

    def __init__(self, model, opt, sched, dtype):
        self.model, self.opt, self.sched, self.dtype = model, opt, sched, dtype

    def training_step(self, inputs):
        self.model.train()
        if self.dtype:
            with torch.autocast("cuda", dtype=self.dtype):
                loss = self.model(**inputs)["loss"]
        else:
            loss = self.model(**inputs)["loss"]
        loss.backward()
        return loss.detach()

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.sched.step()
        self.model.zero_grad(set_to_none=True)


class Prefetcher:
    """The classic data prefetcher: the next batch's copy to the GPU issued on a side stream as the
    current one is handed over, so that it overlaps the step; next() makes the current stream wait
    for the side stream and records the batch on it. None once the loader is exhausted."""

    def __init__(self, loader, dev):
        self.it, self.dev = iter(loader), dev
        self.side = torch.cuda.Stream() if dev.type == "cuda" else None
        self.batch = None
        self.preload()

    def preload(self):
        try:
            x, y = next(self.it)
        except StopIteration:
            self.batch = None
            return
        if self.side is None:
            self.batch = x.to(self.dev), y.to(self.dev)
            return
        with torch.cuda.stream(self.side):
            self.batch = x.to(self.dev, non_blocking=True), y.to(self.dev, non_blocking=True)

    def next(self):
        if self.side is not None:
            current = torch.cuda.current_stream()
            current.wait_stream(self.side)
            if self.batch is not None:
                for t in self.batch:
                    t.record_stream(current)
        batch = self.batch
        self.preload()
        return batch


def _grad_scaler(cuda):
    """A GradScaler of the default growth on CUDA (torch.amp's, or torch.cuda.amp's before torch 2.3
    has it), None elsewhere."""
    if not cuda:
        return None
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def _ema(model):
    """An exponential moving average of model's weights (decay 0.999): torch's, of every
    parameter at once, where it has one (torch 2.2 and later)."""
    from torch.optim import swa_utils

    multi = getattr(swa_utils, "get_ema_multi_avg_fn", None)
    if multi is not None:
        return swa_utils.AveragedModel(model, multi_avg_fn=multi(0.999))
    return swa_utils.AveragedModel(model, avg_fn=lambda e, p, n: 0.999 * e + 0.001 * p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=SHAPES, default="lm-made")
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.batch is None:
        a.batch = 32 if a.shape in ("lm-made", "lm-made-ema", "hf-dict") else 64

    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    template = a.shape in TEMPLATE
    torch.manual_seed(0)

    lm, hf = a.shape in ("lm-made", "lm-made-ema"), a.shape == "hf-dict"
    model = (HFLike() if hf else LM() if lm else net(100)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4 if lm or hf else 1e-3)
    loss_fn = nn.CrossEntropyLoss()
    sched = None
    if lm:
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.steps)
    elif a.shape == "scaler-loader":
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)
    elif hf:
        sched = torch.optim.lr_scheduler.LinearLR(opt, 1.0, 0.1, total_iters=a.steps)
    scaler = _grad_scaler(cuda) if a.shape == "scaler-loader" else None
    dtype = {"lm-made": torch.bfloat16, "lm-made-ema": torch.bfloat16, "scaler-loader": torch.float16,
             "hf-dict": torch.bfloat16}.get(a.shape) if cuda else None
    ema = _ema(model) if a.shape == "lm-made-ema" else None
    trainer = Trainer(model, opt, sched, dtype) if hf else None
    per_step = ACCUM if a.shape == "accum" else 1  # batches a step trains on

    it = prefetcher = None
    if hf:
        it = iter(DataLoader(Sequences(a.steps * a.batch), batch_size=a.batch, collate_fn=pad_collate,
                             num_workers=a.workers, pin_memory=cuda, drop_last=True))
    elif not lm:
        loader = DataLoader(Images(a.steps * per_step * a.batch, 100, 0), batch_size=a.batch,
                            num_workers=a.workers, pin_memory=cuda, persistent_workers=a.workers > 0,
                            drop_last=True)
        if a.shape == "stream-prefetch":
            prefetcher = Prefetcher(loader, dev)
        else:
            it = iter(loader)

    def fetch():
        """the step's next batch, in hand on the device"""
        if lm:
            tokens = torch.randint(VOCAB, (a.batch, SEQ + 1), device=dev)
            return tokens[:, :-1], tokens[:, 1:]
        if prefetcher is not None:
            return prefetcher.next()
        if hf:
            return {k: v.to(dev, non_blocking=True) for k, v in next(it).items()}, None
        x, y = next(it)
        return x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)

    def loss_of(x, y):
        if dtype:
            with torch.autocast("cuda", dtype=dtype):
                out = model(x)
        else:
            out = model(x)
        if lm:
            return loss_fn(out.float().reshape(-1, VOCAB), y.reshape(-1))
        return loss_fn(out.float(), y)

    def step(x, y):
        if trainer is not None:  # x: the batch's dict
            loss = trainer.training_step(x)
            trainer.optimizer_step()
            return loss
        if ema is None:
            opt.zero_grad(set_to_none=True)
        if a.shape == "accum":  # the first micro-batch is in hand; the others are fetched here
            for k in range(ACCUM):
                if k:
                    x, y = fetch()
                loss = loss_of(x, y) / ACCUM
                loss.backward()
            opt.step()
            return loss
        loss = loss_of(x, y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            if lm or a.shape == "scaler-loader":
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        if sched is not None:
            sched.step()
        if ema is not None:  # the step's tail
            ema.update_parameters(model)
            opt.zero_grad(set_to_none=True)
        return loss

    iters, datas, marks = [], [], []
    prev_end = time.perf_counter()
    t_start = None
    for i in range(1, a.steps + 1):
        x, y = fetch()
        in_hand = time.perf_counter()
        if template:
            sync()
            t0 = time.perf_counter()
        loss = step(x, y)
        if template:
            sync()
            t1 = time.perf_counter()
            iters.append(t1 - t0)
            datas.append(in_hand - prev_end)
            marks.append([in_hand, t0, t1])
            prev_end = t1
        elif a.shape == "log-every" and i % LOG_EVERY == 0:
            print("step %d: loss %.4f" % (i, loss.item()), file=sys.stderr, flush=True)
        if i == a.warmup:
            sync()
            t_start = time.perf_counter()
    sync()
    write_out(a, opt, model, (iters, datas, marks), (t_start, time.perf_counter()),
              samples=per_step * a.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
