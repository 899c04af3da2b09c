"""Data-parallel training under torchrun, for wlrun trace's report of several processes
(docs/trace.md, "Several processes"): each rank trains a small MLP wrapped in
DistributedDataParallel on its shard of a synthetic dataset, with no NVTX range (wlrun's Python
hook finds the steps). Gloo by default, so that two ranks can share one GPU or run on the CPU.

    torchrun --nproc_per_node 2 torch_ddp.py --steps 20 [--device cuda] [--backend nccl]
    wlrun trace -- torchrun --nproc_per_node 2 torch_ddp.py ...
    python3 torch_ddp.py --spawn 2 ...     (its own launcher: Debian's torchrun 1.13 fails on Python 3.11)
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def options():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--slow-rank", type=int, default=-1, help="this rank sleeps 2 ms in every step (a straggler)")
    ap.add_argument("--spawn", type=int, default=0, help="start this many ranks here, as torchrun would")
    return ap.parse_args()


def spawned(index, a):
    os.environ.update(RANK=str(index), LOCAL_RANK=str(index), WORLD_SIZE=str(a.spawn))
    train(a)


def train(a):
    dist.init_process_group(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", 0))
    dev = torch.device(a.device if a.device == "cpu" else "cuda:%d" % (local % torch.cuda.device_count()))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, a.hidden), nn.ReLU(), nn.Linear(a.hidden, 10)).to(dev)
    ddp = DistributedDataParallel(model, device_ids=None if a.device == "cpu" else [dev])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    n = a.steps * a.batch * world
    data = TensorDataset(torch.randn(n, 64), torch.randint(0, 10, (n,)))
    loader = DataLoader(data, batch_size=a.batch, sampler=DistributedSampler(data, world, rank, shuffle=False))
    loss_fn = nn.CrossEntropyLoss()
    for x, y in loader:
        x, y = x.to(dev), y.to(dev)
        opt.zero_grad()
        loss = loss_fn(ddp(x), y)
        if rank == a.slow_rank:
            import time
            time.sleep(0.002)
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    args = options()
    if args.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        mp.start_processes(spawned, args=(args,), nprocs=args.spawn, start_method="spawn")
    else:
        train(args)
