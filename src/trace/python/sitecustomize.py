"""wlrun trace's start-up hook for Python programs (docs/trace.md, "No annotation needed").

`wlrun trace` writes this file into its trace directory, puts that directory first on
PYTHONPATH and names its trace library in WLRUN_TRACE_AUTO, so that Python runs it at start-up
(the site module imports `sitecustomize`). It does nothing until the program imports torch.
Then it opens ranges in the NVTX domain "wlrun.auto" through the trace library (ctypes, its
wlrun_trace_auto_* functions: src/trace/trace_auto.c), on the thread that trains:

  data        from a DataLoader iterator's start (or reset) or __next__ until the training work on
              the batch begins (its copy to the GPU included), or until __next__ returns on
              another thread or raises (the loader exhausted), or, for a batch that only
              evaluation used, the next fetch; its payload is the time __next__ returned
              (CLOCK_MONOTONIC ns, the library's clock): the report ends the fetch at the later of
              that and the range's copies to the GPU, not at a synchronisation after it; or
              EVALUATED (1): no data. Where no DataLoader gives the batches (made in the loop) and
              an optimizer steps: from the optimizer step that ended the iteration (and the
              step's tail after it: _Loop.made_split) to the next step's training work, the
              making of the next batch (payload: MADE + that time; MADE + EVALUATED where no
              training used it)
  train_step  from the first forward, backward or optimizer step after the previous step's end (or
              a zero_grad() with a batch in hand, as a loop's first line; or, where the loop makes
              its batches, the first call after the making that the hook sees) to
              the loop's next range after the optimizer step that closes the iteration (the next
              batch's fetch, the next forward; the last step: that optimizer step's end; a loop
              that makes its batches: the end of the step's tail after it), or a
              checkpoint saved or an optimizer made before it: what else the loop does after the
              optimizer (waiting for the GPU, logging) is the step's; its
              payload is the number of samples of the batches it trained on (of the loader that
              gave the most)
  forward     from the step's first call of a module with parameters (grad enabled, in training
              mode: other calls evaluate) until backward or the optimizer begins; where the step
              began at backward or the optimizer, or after evaluation on the batch in hand, one of
              no length whose payload is the time the batch was in hand, where the report begins
              the forward
  backward    torch.autograd.backward (loss.backward(), a GradScaler's scaled loss) and
              torch.autograd.grad; where the process made no optimizer, it ends the iteration
  optimizer   the optimizer's step (torch's global step hooks; a closure's forward and backward,
              as Lightning passes them, stay outside it), or a GradScaler's step around it, which
              ends the iteration also where it skips the optimizer's (overflowed gradients)

With several optimizers stepping in one iteration (a GAN), the first iteration teaches the order
and later steps end at the last optimizer of that order, or at the next batch where it skipped.
Any other sitecustomize on the path is run after this one, as if this one were not there; the hook
never stops the program: a failure of its own turns it off with one line on standard error.
"""
import os
import sys


def _chain():
    """Runs the sitecustomize this one hides (Debian's, a virtualenv's), if any."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


EVALUATED = 1  # a data range's payload: its batch went to evaluation only (lua/wlrun/trace/ranges.lua)
HANDED = 64  # the batches fetched on other threads whose hand-over is looked for
CALLS = 16  # the calls noted between a made batch's steps (_Loop.step_call)
TAILS = 8  # the made batches' steps whose tails a step is left open through (_Loop.tails)
HANDOVER = "queue"  # the loader key of batches handed over through a queue
# added to a step's payload where its samples are its model's input, the step having fetched no
# batch through a DataLoader (lua/wlrun/trace/ranges.lua: FORWARD_SAMPLES)
FORWARD_SAMPLES = 1 << 40
# added to the payload of the data range of a batch the loop made itself (no DataLoader), the time
# it was in hand (lua/wlrun/trace/ranges.lua: MADE)
MADE = 1 << 61


def _parts(batch, depth):
    """The parts of a batch to look into: a sequence's, a mapping's values, a dataclass's fields
    (not an object's other attributes), the first 16 of them; none below depth 3."""
    import dataclasses
    import itertools
    from collections.abc import Mapping

    if depth >= 3:
        return ()
    if isinstance(batch, Mapping):  # a Hugging Face BatchEncoding is a Mapping, not a dict
        items = batch.values()
    elif isinstance(batch, (list, tuple)):
        items = batch
    elif dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        items = (getattr(batch, f.name, None) for f in dataclasses.fields(batch))
    else:
        return ()
    return itertools.islice(items, 16)


def _first_tensor(batch, depth=0):
    """The first tensor with a first dimension in a batch, or None."""
    import torch

    if isinstance(batch, torch.Tensor):
        return batch if batch.dim() > 0 else None
    for x in _parts(batch, depth):
        t = _first_tensor(x, depth + 1)
        if t is not None:
            return t
    return None


def _holds(batch, n, depth=0):
    """Whether some part of a batch is n long: a tensor's first dimension, a sequence's length."""
    import torch

    if isinstance(batch, torch.Tensor):
        return batch.dim() > 0 and int(batch.shape[0]) == n
    if isinstance(batch, (list, tuple)) and len(batch) == n:
        return True
    return any(_holds(x, n, depth + 1) for x in _parts(batch, depth))


def _samples(batch, indexed):
    """The samples of a batch: the count its sampler gave where some part of the batch is that
    long (a tuple of per-sample images, a list of sequences, a sequence-first batch's labels);
    else the first tensor's first dimension (a collate that dropped samples, a dataset that gives
    whole batches); else the count (an object of the program's own, a graph batch)."""
    if indexed and type(batch) in (list, tuple) and batch:
        # the usual (inputs, labels): the first part's first dimension, looked at without a Python
        # call (_holds' order: the length first)
        first = batch[0]
        if len(batch) == indexed or (isinstance(first, _Tensor[0]) and first.dim() > 0
                                     and first.shape[0] == indexed):
            return indexed
    if indexed and _holds(batch, indexed):
        return indexed
    return _batch_size(batch) or indexed


_Tensor = [()]  # torch.Tensor once torch is imported (isinstance of () is always False)

# id(module) -> a weak reference to a module seen with parameters (an id alone may be a freed
# module's): the model's first call in each step is looked up, not walked through its children
_with_parameters = {}


def _has_parameters(module):
    """Whether a module has parameters, its own or its children's (a module's own parameters()
    may give a list, not an iterator). A module once seen with parameters counts as having them
    while it lives (one whose parameters are all set to None later, or quantized in place, still
    does): nothing cheaper than the walk tells that it lost them."""
    ref = _with_parameters.get(id(module))
    if ref is not None and ref() is module:
        return True
    if next(iter(module.parameters()), None) is None:
        return False
    import weakref

    if len(_with_parameters) >= 1024:  # modules made and freed again and again
        _with_parameters.clear()
    try:
        _with_parameters[id(module)] = weakref.ref(module)
    except TypeError:  # a module that takes no weak reference: looked at each time
        pass
    return True


def _batch_size(batch):
    """The first dimension of the first tensor in a batch (a tensor, or one in a sequence, a mapping
    or a dataclass; not an object's other attributes, whose first tensor may not be batch-major)."""
    first = _first_tensor(batch)
    return int(first.shape[0]) if first is not None else 0


SEQUENCE_FIRST = ("RNNBase", "MultiheadAttention", "Transformer", "TransformerEncoderLayer",
                  "TransformerDecoderLayer")  # torch.nn's modules with batch_first=False by default
WRAPPERS = ("DataParallel", "DistributedDataParallel", "FullyShardedDataParallel", "OptimizedModule")


def _say(text):
    """One line on stderr, where the program left one to write to."""
    try:
        sys.stderr.write(text + "\n")
    except Exception:  # noqa: BLE001 - stderr closed or None: the hook says nothing
        pass


def _module_ids(module):
    """The ids of a module, its wrappers' insides and every module inside it."""
    ids = {id(module), id(_unwrapped(module))}
    try:
        ids.update(id(m) for m in module.modules())
    except Exception:  # noqa: BLE001 - a module of no usual shape: itself alone
        pass
    return ids


def _unwrapped(module):
    """The model inside torch's wrappers (DDP, FSDP, DataParallel, torch.compile's)."""
    for _ in range(4):
        if type(module).__name__ not in WRAPPERS:
            break
        inner = getattr(module, "module", None) or getattr(module, "_orig_mod", None) or getattr(
            module, "_fsdp_wrapped_module", None)
        if inner is None:
            break
        module = inner
    return module


_sequence_kinds = None  # the classes of SEQUENCE_FIRST this torch has, found once


def _sequence_first(module):
    """Whether module is one of torch.nn's sequence-first modules (batch_first=False; a
    Transformer layer's in its attention where it keeps none of its own)."""
    global _sequence_kinds
    if _sequence_kinds is None:
        import torch.nn as nn

        _sequence_kinds = tuple(getattr(nn, k) for k in SEQUENCE_FIRST if hasattr(nn, k))
    if not isinstance(module, _sequence_kinds):
        return False
    first = getattr(module, "batch_first", None)
    if first is None:
        first = getattr(getattr(module, "self_attn", None), "batch_first", True)
    return first is False


def _holds_sequence_first(module, looked):
    """The name of a sequence-first module inside module, or None; looked: module id -> the answer
    (a model is looked into once)."""
    key = id(module)
    if key not in looked:
        looked[key] = next((type(m).__name__ for m in module.modules() if _sequence_first(m)), None)
    return looked[key]


def _input_samples(module, args, looked):
    """The samples of a model's positional input, and the sequence-first module it holds where that
    count may be a sequence's length instead (else None): a PackedSequence's batch (not its
    tokens); a list of tensors' length (per-sample images, as detection models take them); a
    tensor's batch dimension (the second where the model itself is sequence-first, 1 for its
    unbatched input); else the first tensor's first dimension in args. 0: no tensor among them
    (the model takes its tensors by keyword)."""
    import torch

    top = _unwrapped(module)
    packed = torch.nn.utils.rnn.PackedSequence
    for x in args[:4]:
        if isinstance(x, packed):
            return (int(x.batch_sizes[0]) if x.batch_sizes.numel() else 0), None
        if isinstance(x, list) and x and all(isinstance(t, torch.Tensor) for t in x[:64]):
            return len(x), None
        if isinstance(x, torch.Tensor) and not getattr(x, "is_nested", False) and x.dim() > 0:
            if _sequence_first(top):
                return (int(x.shape[1]) if x.dim() >= 3 else 1), None
            return int(x.shape[0]), _holds_sequence_first(top, looked)
    n = _batch_size(args)
    return n, (_holds_sequence_first(top, looked) if n else None)


def _is_counted(keys, x):
    """Whether input x is among keys (weak references, or ids of what takes none): an id alone may
    be a freed input's, given to the next micro-batch's."""
    import weakref

    for k in keys:
        if (k() is x) if isinstance(k, weakref.ref) else k == id(x):
            return True
    try:
        keys.append(weakref.ref(x))
    except TypeError:  # a list, a tuple: its id
        keys.append(id(x))
    return False


def _thread_state():
    """A threading.local whose fields every thread starts with (no lookup with a default, a few
    times a step, on a launch-bound loop's path)."""
    import threading

    class State(threading.local):
        def __init__(self):
            self.stack = []  # the names of the hook's ranges open on the thread
            self.pending = {}  # loader -> the samples of the batches fetched that no work used yet
            self.evaluated = False  # whether evaluation (and no training) used them
            self.started = None  # the loader whose iterator the thread started last
            self.fetched_at = 0  # the time the last batch fetched was in hand
            self.in_hand_at = 0  # the same, until training work on it begins
            self.eval_grad = False  # an evaluation in eval mode with grad since the last fetch
            self.marked = False  # a late forward marked in the step open
            self.fetching = 0  # DataLoader fetches running (a module called in one is the fetch's)
            self.depth = 0  # the optimizer steps running that the hook counts
            # the data range open is the loop making its next batch (no DataLoader): opened at the
            # optimizer step that ended the iteration (made_from, its start), closed where the
            # training work on the batch begins; made_eval: when a frozen module evaluated it first
            self.making = False
            self.made_from = self.made_eval = 0
            # a loop that makes its batches: the calls the hook sees between the optimizer step
            # that ended the iteration (step_end) and the next step's training work, each (start,
            # end, the class of the object called): zero_grad(), an LR scheduler's step, an
            # averaged model's update. Those before the longest gap between them (the making,
            # unseen) were the step's tail, those after it the next step's first lines
            # (made_split); tail_open: the step is left open through its tail, as learnt from the
            # steps before (_Loop.tails); tail_done: the calls of the tail where it ended at the
            # tail's last
            self.step_end, self.calls, self.tail_open, self.tail_done = 0, [], False, 0
            self.noting = False  # inside a noted call (a scheduler's step in another's)
            # whether a module with parameters evaluated during this making, and the one before:
            # evaluation in every making is a frozen module's work on the batch (a teacher, a
            # backbone), once in a while a validation
            self.eval_seen = self.eval_last = False
            # a validation on batches held (the trained model evaluated in the making, no loader
            # to run out) ended that making: the next making begins where its model is put back in
            # training mode, else where it last returned from a module call (validated, watched
            # while validating), once the training work or the frozen module that evaluates each
            # batch first begins
            self.validating = False
            self.validated = 0
            self.validated_modules = set()  # the ids of the model validated and of its modules
            self.back = False  # the model validated was put back in training mode (its end)
            # a step that ended in a GradScaler's step, left open until that scaler's update()
            # returns (the loop makes its batches): the update is the step's, as in the template;
            # the scaler's id, 0 for none. scaler: the one whose step runs on the thread; updating:
            # its updates running inside one another (a subclass's calling its base's)
            self.tail = self.scaler = self.updating = 0

    return State()


class _Loop:
    """Where the training loop stands, and the hook's ranges open on each thread."""

    def __init__(self, lib, held):
        import collections
        import threading
        import time

        self.now = time.monotonic_ns  # the trace library's clock (CLOCK_MONOTONIC)
        self._push, self._pop = lib.wlrun_trace_auto_push_at, lib.wlrun_trace_auto_pop_at
        self._names = {}  # a range's name -> the bytes the library takes, encoded once
        self._pop_later = lib.wlrun_trace_auto_pop_later
        self._left_open = lib.wlrun_trace_auto_left_open
        self._end_left_open = lib.wlrun_trace_auto_end_left_open
        self._left_open_to = lib.wlrun_trace_auto_left_open_to
        self._end_later = lib.wlrun_trace_auto_end_later
        self._recording = lib.wlrun_trace_auto_recording
        self._above = lib.wlrun_trace_auto_above
        # (a call that keeps the interpreter's lock: one that gave it up would take it back after
        # the time it tells, and hand it to another thread once more)
        self.resumed = held.wlrun_trace_auto_resumed
        self.local = _thread_state()
        self.ident = threading.get_ident
        self.thread = None  # the thread of the step open, or of the last one
        self.step = False
        self.optimized = False  # whether an optimizer stepped in the step open without ending it
        self.phase = None  # "forward", "backward" or "optimizer", open in the step
        self.fetched = {}  # loader -> the samples of its batches the step open trains on
        self.iterators = {}  # loader -> (batches its last iterator gave, whether it ran out)
        # where the step open fetched no batch through a DataLoader (data made in the loop, a
        # dataset held in memory and sliced): the samples of the inputs given to its first model's
        # forwards before any optimizer stepped in it, each input once (gradient accumulation's
        # micro-batches added; a GAN's other model, SAM's second pass and LBFGS's closure calls not)
        self.inputs = 0
        self.forwards = 0  # the forwards counted
        self.model = None  # the id of the model counted
        self.makes = False  # whether the last step ended with the making of the next batch
        # the tails of a made batch's last steps (made_split), each the classes of the objects
        # called in order after its optimizer step: a step is left open through the calls of
        # those seen twice or more, until the last call of the longest (tail_begins, step_call)
        self.tails = collections.deque(maxlen=TAILS)
        self.tail_keys, self.tail_last, self.tail_count = set(), None, 0
        self.trained = None  # the id of the model (unwrapped) a step trained: evaluated, it validates
        self.keys = []  # the inputs counted (_is_counted)
        self.doubt = None  # a sequence-first module in the model: the count may be a sequence's
        self.looked = {}  # model id -> the sequence-first module it holds, or None
        self.said = set()  # what the hook told on stderr
        self.evaluating = set()  # the loaders whose batches went to evaluation: their end is no data
        self.here = False  # whether the thread that trains fetches its batches itself
        self.ahead = 0  # the samples of the last batch fetched on another thread
        # the batches fetched on another thread and not yet taken (id -> a weak reference to the
        # batch's first tensor, oldest first, under handed_lock): a queue's get that hands one to
        # the thread that trains is that thread's fetch
        self.handed = {}
        self.handing = False  # whether a batch was ever fetched on another thread
        self.handed_lock = threading.Lock()
        self.order, self.learned = [], False  # the optimizers of one iteration
        self.fetches = 0  # the batches fetched on the training thread since the last optimizer step
        self.fetch_each = False  # whether the loop fetches a batch for each of its optimizers
        # torch's wrapper of every optimizer step (torch 2's step hooks run in it): its frames on a
        # thread's stack are the steps running there (local.depth: those the hook counts)
        self.step_code = None
        self.scaling = 0  # GradScaler steps running inside one another
        self.stepped = 0  # the optimizer steps ended so far
        self.optimizers = 0  # the torch.optim optimizers made: with none, a backward ends a step
        # told True when no phase is open (a forward would begin one), False when one opens:
        # _install hooks module calls only then, so that the model's own calls run on torch's
        # fast path (a global module hook sends every module call through the slow one)
        self.waiting = lambda waiting: None
        self.watching = lambda on: None  # module calls' returns timed (validated) or not
        self.finished = lambda: None  # the steps traced are done (--steps): the hook stops

    def push(self, name, payload=0, at=0):
        """at: the time the range began, where not now (the library bounds it)."""
        b = self._names.get(name)
        if b is None:
            b = self._names[name] = name.encode()
        local = self.local
        if local.tail:  # no update() came first: the library ends the step left open here
            local.tail = 0
        if self._push(b, payload, at) >= 0:
            local.stack.append(name)
        elif not self._recording():
            self.finished()

    def pop(self, payload=0, at=0):
        s = self.local.stack
        if s:
            s.pop()
            self._pop(payload, at)

    def pop_to(self, name):
        """Pops the hook's ranges down to (and without) the innermost one named name."""
        s = self.local.stack
        while s and s[-1] != name and name in s:
            self.pop()

    def ours(self):
        """Whether the calling thread is the one that trains (or none trains yet)."""
        return not self.step or self.thread == self.ident()

    # ---- data ----
    def data_start(self, loader, at=0):
        """A loader's iterator starts (its workers, its sampler): the data range it opens goes on
        through the first batch's fetch, and ends as that batch's does. A batch that no work used
        from its last iterator, which gave several and did not run out, is dropped: the loop broke
        out on it (`if i >= n: break` at the top of an epoch), and no step trained on it (an
        iterator made for one batch, `next(iter(loader))`, did not)."""
        given, ended = self.iterators.get(loader, (0, True))
        if given > 1 and not ended and not self.local.evaluated:
            self.local.pending.pop(loader, None)
        self.iterators[loader] = (0, False)
        self.data_begin(loader, at)
        self.local.started = loader

    def unwound(self, depth=0):
        """An optimizer step raised (out of memory, and the loop goes on): no step ended, and where
        none is left running its phase closes, so that the next forward is seen."""
        self.local.depth = depth
        if depth == 0 and self.phase == "optimizer" and not self.scaling:
            self.end_phase()

    def data_begin(self, loader, at=0):
        """A fetch begins, at `at` (its wrapper's entry: the hook's own work after it is the
        fetch's, not the step's before it)."""
        if self.phase == "optimizer" and self.step_code is not None and not self.scaling:
            # on the thread that trains (not a prefetching one while it steps): the step raised
            if self.thread == self.ident() and not _frames_of(self.step_code, sys._getframe(1)):
                self.unwound()  # and torch 2 ran no post hook
        started, self.local.started = self.local.started, None
        if started == loader and "data" in self.local.stack and not self.local.pending:
            return
        if self.local.step_end:  # a fetch after a made batch's step: no tail's calls to weigh
            self.local.step_end, self.local.calls, self.local.tail_open = 0, [], False
        self.local.eval_grad = False  # an evaluation in eval mode before: not this batch's
        if self.step and self.optimized and not self.fetch_each and self.thread == self.ident():
            # the next batch after an optimizer step that did not end the iteration (its last
            # optimizer skipped this time: a WGAN's generator every nth step)
            self.end_iteration()
        p = self.local.pending
        if self.local.evaluated:  # the batches in hand were evaluated, not trained on
            self.data_close(EVALUATED)
            self.evaluating.update(p)
            p.clear()
            self.local.evaluated = False
        else:
            self.data_close()
            # a batch of an evaluation's loader that no work used (its loop broke out on it)
            if p and self.evaluating:
                for key in [k for k in p if k in self.evaluating and k != loader]:
                    del p[key]
        self.push("data", at=at)

    def data_end(self, loader, batch, indexed=0):
        """indexed: the samples the loader's sampler gave for the batch, where known (a map-style
        dataset's, batched by the loader): _samples weighs them against the batch's parts."""
        given, _ = self.iterators.get(loader, (0, False))
        if batch is None:  # the loader is exhausted (or failed): what follows is not loading
            self.iterators[loader] = (given, True)
            evaluated = loader in self.evaluating
            self.data_close(EVALUATED if evaluated else None)
            if evaluated and not self.step and self.makes and self.thread == self.ident():
                self.making_begins()  # an evaluation's loader ran out: the next batch is made
            return
        self.iterators[loader] = (given + 1, False)
        n = _samples(batch, indexed)
        if self.thread is not None and self.thread != self.ident():
            self.ahead = n
            self.data_close()  # fetched on a thread that does not train: the fetch alone
            first = _first_tensor(batch)
            if first is not None:
                import weakref

                with self.handed_lock:
                    self.handing = True
                    self.handed[id(batch)] = weakref.ref(first)
                    while len(self.handed) > HANDED:  # batches taken some other way
                        del self.handed[next(iter(self.handed))]
            return
        p = self.local.pending
        p[loader] = p.get(loader, 0) + n
        self.fetches += 1
        self.local.fetched_at = self.local.in_hand_at = self.now()

    def received(self, item, at):
        """A queue's get, entered at `at`, returned item: where item is a batch another thread
        fetched and this is the thread that trains, the wait for it is this thread's fetch (the
        template's data: from the previous step's end to the batch in hand)."""
        if self.thread != self.ident():
            return
        with self.handed_lock:
            ref = self.handed.pop(id(item), None)
        # the same object (an id alone may be a freed batch's, given to another object since)
        if ref is None or ref() is None or _first_tensor(item) is not ref():
            return
        self.data_begin(HANDOVER, at)
        self.fetches += 1
        self.local.fetched_at = self.local.in_hand_at = self.now()

    def data_close(self, payload=None, at=0):
        """Closes the thread's data range (at: when, where not now); its payload the time the
        batch was in hand, or EVALUATED: the fetch of a batch that only evaluation used, which is
        no data."""
        local = self.local
        s = local.stack
        if local.making and payload in (None, EVALUATED):
            payload = MADE + EVALUATED  # a making no training used: no data, still a making's
        elif payload is None:
            payload = local.fetched_at
        if "data" in s:
            if s[-1] != "data":  # pop_to only where a range is above it (a call less a step)
                self.pop_to("data")
            self.pop(payload, at)
        local.fetched_at = 0
        local.making = False

    # ---- the step and its phases ----
    def evaluate(self, grad, module):
        """A module call that does not train (grad disabled, or the model in eval mode): the data
        range of the batch in hand stays open until it is known whether training uses the batch
        too (begin) or only evaluation did (the next fetch, data_begin). A batch the loop is making
        (no DataLoader): a module with parameters, not the model the steps train, evaluated in the
        making before too is a frozen module's work on the batch (a backbone, a teacher), where
        the step begins; else it validates, neither data nor step."""
        local = self.local
        if local.tail_open and _has_parameters(module):  # not the tail learnt: it ended before
            self.tail_cut()
        if (local.validating and local.eval_last and id(module) not in local.validated_modules
                and _has_parameters(module)):
            self.validation_over()  # the frozen module on the next batch, made since
        if local.pending:
            local.evaluated = True
        elif local.making and not local.made_eval and _has_parameters(module):
            # (not a parameterless augmentation)
            local.eval_seen = True
            if local.eval_last and id(_unwrapped(module)) != self.trained:
                local.made_eval = self.now()
            else:
                self.data_close(EVALUATED)
                if self.thread == self.ident():  # a validation: the making's end is unknown yet
                    local.validating, local.validated = True, self.now()
                    local.validated_modules = _module_ids(module)
                    self.watching(True)
        if grad and not self.step:
            self.local.eval_grad = True  # in eval mode with grad: a backward would say it trained

    def begin(self, late=False, at=0):
        """Training work begins on this thread, at `at` (the time the hook's wrapper was entered:
        the hook's own work after it is the step's, as the template's t0 before the loop's call
        makes it): closes its data range, takes the batches in hand into the step, opens the step
        if none. late: it begins at backward or the optimizer, so the forward on the batch in hand
        ran unseen (it called no module with parameters in training mode: a functional model, one
        trained in eval mode); a "forward" of no length whose payload is the time the batch was in
        hand follows, where the report begins the work (docs/trace.md, "No annotation
        needed")."""
        local = self.local
        if self.step and not local.pending and "data" not in local.stack:
            # the step's later phases on the same batch (the usual case): nothing in hand
            local.fetched_at = local.in_hand_at = 0
            local.evaluated = local.marked = False
            return
        made = 0
        if local.validating:
            self.validation_over()
        if local.step_end:
            at = at or self.now()
            at = self.made_split(local.made_eval or at, at)
        if local.making:  # the batch the loop made is in hand: evaluated first by another module,
            # or, where the step begins at backward (its forward unseen), from the range's start
            made = local.made_eval or (local.made_from if late else 0)
            self.data_close(MADE + (made or at or self.now()), at=at)
            local.made_eval = 0
        else:
            self.data_close(at=at)
        p = local.pending
        in_hand = local.in_hand_at if p else made
        late = late or local.evaluated or bool(made)  # evaluation first (a teacher)
        fetched = self.fetched
        for loader, n in p.items():
            fetched[loader] = fetched.get(loader, 0) + n
            self.evaluating.discard(loader)
            self.here = True
        p.clear()
        local.evaluated = local.marked = False
        local.in_hand_at = 0
        if not self.step:
            self.step, self.thread, self.optimized = True, self.ident(), False
            self.push("train_step", at=at)
        if late and in_hand:  # also a later micro-batch's (gradient accumulation)
            self.push("forward", in_hand)
            self.pop()
            local.marked = True

    def end_phase(self, next_phase=False):
        """next_phase: another phase opens at once (no forward can come between)."""
        phase = self.phase
        if phase is not None:
            s = self.local.stack
            if phase in s:
                if s[-1] != phase:
                    self.pop_to(phase)
                s.pop()  # self.pop(), inline: a call less a phase
                self._pop(0, 0)
            self.phase = None
            if not next_phase:
                self.waiting(True)

    def zero_grad(self, at=0):
        """zero_grad() (an optimizer's or a model's) with a batch in hand on the thread that
        trains: the training work on the batch begins there (the template's t0 comes before it, as
        the loop's first line)."""
        if not self.step and self.local.pending:  # no step open: ours() holds
            self.begin(at=at)

    def step_call(self, at, key):
        """A call the hook sees between a made batch's steps (zero_grad(), an LR scheduler's
        step, an averaged model's update; key: the class of the object called, the same for one
        made anew each step), entered at `at`, returned: noted. Where the step is left open
        through its tail and the call is one of the tails learnt: where it is the longest's last
        call (as often as that tail makes it), the step ends here and the making of the next batch
        begins; where it is none of theirs, the tail was over before it (tail_cut)."""
        local = self.local
        if not local.step_end or self.step or self.thread != self.ident():
            return
        end = self.now()
        if local.tail_open and key not in self.tail_keys:
            self.tail_cut(keep=True)
        if len(local.calls) < CALLS:
            local.calls.append((at, end, key))
        if local.tail_open:
            last = key == self.tail_last and sum(
                1 for c in local.calls if c[2] == key) >= self.tail_count
            if last:  # its data range ends the step left open (the library)
                local.tail_open, local.tail_done = False, len(local.calls)  # (all the tail's)
                self.making_begins(end, tail=True)
            else:
                self._left_open_to(end)  # (where the program ends first: the last step's)

    def tail_cut(self, keep=False):
        """The step left open through its tail ends after the last call seen, and the making
        of the next batch begins there: other work than the tail learnt came (keep: another call,
        noted with those before it; else other work of the loop's, an evaluation: a validation on
        held batches)."""
        local = self.local
        local.tail_open = False
        self.making_begins(local.calls[-1][1] if local.calls else local.step_end, tail=keep)

    def made_split(self, first, at):
        """Training work on a made batch begins at `at`, its batch in hand at `first` (a frozen
        module's first call on it, where one came before, else `at`): the calls seen since the
        last step's optimizer step before `first` are split at the longest gap between them (the
        making: the loop's work the hook does not see), those before it the last step's tail, to
        be waited for after the next optimizer step (_Loop.tails), those after it this step's first
        lines, where the step begins (returned; else `at`). Where the step was left open through
        a longer tail than this one, the making ran in it: it ends before that gap, and the making
        begins there. The tails of the last steps give the calls the next step is left open
        through, and its last."""
        local = self.local
        calls, points = [c for c in local.calls if c[0] < first], [local.step_end]
        for start, end, _ in calls:
            points += (start, end)
        points.append(first)
        gaps = [points[2 * i + 1] - points[2 * i] for i in range(len(calls) + 1)]
        split = gaps.index(max(gaps))  # the calls before the making
        self.learn_tail(tuple(key for _, _, key in calls[:split]))
        if local.tail_open:  # the tail was shorter this time
            local.tail_open = False
            self._end_later(points[2 * split])
            self.making_begins(points[2 * split], tail=True)
        # (the calls of a tail that ended at its last are no first lines: work the hook does not
        # see inside the tail, a log line between two of its calls, may be its longest gap)
        first_line = max(split, local.tail_done)
        local.step_end, local.calls, local.tail_done = 0, [], 0
        return calls[first_line][0] if first_line < len(calls) else at

    def learn_tail(self, tail):
        """The tail of the step that ended last, as split: the tails seen twice or more among the
        last steps' (not one that the machine held up, whose split went wrong) are the calls the
        next step is left open through, until the last call of the longest, as often as it has
        it."""
        self.tails.append(tail)
        kept = []  # (the most recent first: the longest of them, where several are as long)
        for t in reversed(self.tails):
            if t not in kept and self.tails.count(t) >= 2:
                kept.append(t)
        longest = max(kept, key=len, default=())
        self.tail_keys = {key for t in kept for key in t}
        self.tail_last = longest[-1] if longest else None
        self.tail_count = longest.count(self.tail_last) if longest else 0

    def forward(self, at=0, module=None, args=()):
        """A module with parameters called in training mode, given args, at `at`."""
        if self.step and self.thread != self.ident():  # not ours(), inline: a call less a step
            return
        self.begin(at=at)
        if self.phase is None:
            if not self.optimized and not self.fetched and module is not None:
                self.count_input(module, args)
            self.push("forward", at=at)
            self.phase = "forward"
            self.waiting(False)

    def count_input(self, module, args):
        """A forward of the step's model on an input not counted yet adds its samples."""
        if self.model is None:
            self.model, self.trained = id(module), id(_unwrapped(module))
        if self.model != id(module) or _is_counted(self.keys, args[0] if args else None):
            return
        self.forwards += 1
        try:
            n, doubt = _input_samples(module, args, self.looked)
        except Exception:  # noqa: BLE001 - a tensor with no sizes (nested): nothing counted
            n, doubt = 0, None
        self.inputs += n
        self.doubt = self.doubt or doubt

    def phase_begin(self, name, at=0):
        """A phase that ends the one open (backward, the optimizer); False on another thread."""
        if self.step and self.thread != self.ident():  # not ours(), inline
            return False
        self.begin(True, at)
        had = self.phase is not None
        self.end_phase(True)
        self.push(name, at=at)
        self.phase = name
        if not had:
            self.waiting(False)
        return True

    def backward_begin(self, at=0):
        if self.phase == "backward":  # inside a backward (reentrant checkpointing's): the same phase
            return False
        eval_grad = not self.step and self.local.eval_grad
        self.local.eval_grad = False
        mine = self.phase_begin("backward", at)
        if eval_grad and mine and not self.local.marked:
            # no batch in hand from a DataLoader: nowhere to begin the step
            self.tell("eval", "trains a model in eval mode (model.eval(), grad enabled): the hook "
                      "takes its forward for evaluation, so the steps begin at backward and leave "
                      "the forward out; call model.train() before training, or give the loop "
                      "ranges of its own")
        return mine

    def backward_end(self):
        if self.phase == "backward":
            self.end_phase()
            if not self.optimizers and self.step and self.thread == self.ident():
                self.end_iteration()  # no optimizer (the loop updates the weights itself)

    def optimizer_begin(self, at=0):
        if self.scaling and self.phase == "optimizer":  # opened by the GradScaler's step around it
            return True
        return self.phase_begin("optimizer", at)

    def scaler_begin(self, scaler=0):
        """A GradScaler's step (mixed precision) begins (scaler: its id): the optimizer phase opens
        with it, its unscaling and its check of the gradients included. Returns the optimizer steps
        ended so far, or None inside another scaler's step."""
        self.scaling += 1
        if self.scaling > 1:
            return None
        self.local.scaler = scaler
        self.optimizer_begin(self.now())
        return self.stepped

    def scaler_end(self, optimizer, stepped):
        """A GradScaler's step ends: where it skipped the optimizer's (the gradients overflowed,
        as in the first steps of float16 training), the iteration ends here all the same."""
        try:
            if stepped is not None and self.stepped == stepped:
                self.optimizer_end(optimizer)
        finally:
            self.scaling -= 1

    def scaler_updated(self, scaler):
        """A GradScaler's update() returned (scaler: its id): where the step that ended in its step
        was left open (the loop makes its batches), it ends now, and the making of the next batch
        begins."""
        local = self.local
        if local.tail and local.tail == scaler:
            local.tail = 0
            self.tail_begins(scaler=True)

    def ends_iteration(self, optimizer):
        """Whether this optimizer's step ends the iteration: while the order of a loop's optimizers
        is learnt (until the first comes again after another), each step does; then the last's."""
        key = id(optimizer)
        fetched, self.fetches = self.fetches, 0
        if not self.learned:
            if key in self.order and len(self.order) > 1:
                self.learned = True  # the batches fetched since are the next iteration's
            else:
                if key not in self.order:
                    # a batch fetched between two optimizers' steps (a GAN's discriminator on one
                    # batch, its generator on the next): a fetch does not end the iteration
                    self.fetch_each = self.fetch_each or bool(self.order and fetched)
                    self.order.append(key)
                return True
        if key not in self.order:  # one that had not stepped yet: the iteration's last from now on
            self.order.append(key)
        return key == self.order[-1]

    def optimizer_end(self, optimizer):
        self.stepped += 1
        if self.phase == "optimizer":
            self.end_phase()
        if self.step and self.thread == self.ident():
            if self.ends_iteration(optimizer):
                self.end_iteration()
            else:
                self.optimized = True

    def end_iteration(self):
        s = self.local.stack
        if "train_step" in s:
            # the step ends at the thread's next range of the hook's (the next batch's fetch, the
            # next forward): what the loop does after the optimizer (waiting for the GPU, logging,
            # in ranges of its own or not) is the step's, as the template's closing
            # synchronisation makes it
            if s[-1] != "train_step":
                self.pop_to("train_step")
            s.pop()
            # no DataLoader gives the batches (made on the GPU in the loop, sliced from a tensor):
            # the step ends here, or after its tail (tail_begins), and what the loop does until
            # the next one is the making of its batch, the template's data (a loop with no
            # optimizer updates its weights after the backward that ended the step: no data, the
            # step goes on)
            # (a program's own range open around the optimizer step keeps the step going on
            # until the loop's next range, as with a DataLoader)
            self.makes = not self.fetched and self.makes_batches() and self._above() == 0
            if self.makes and self.scaling:  # its scaler's update() follows: scaler_updated
                self._pop_later(self.samples())
                if self._left_open():  # (else ended at once: a step wlrun synchronises)
                    self.local.tail = self.local.scaler
                else:
                    self.making_begins()
            elif self.makes:
                self.tail_begins()
            else:
                self._pop_later(self.samples())
        self.step, self.fetched, self.inputs, self.forwards = False, {}, 0, 0
        self.model, self.keys, self.doubt = None, [], None

    def tail_begins(self, scaler=False):
        """The step of a loop that makes its batches ended with its optimizer's step (scaler:
        its GradScaler's update, the step left open until then): the calls the hook sees until the
        next step's work are noted (made_split), and where the last steps had a tail, the step
        stays open through it (step_call; its data range after it); else it ends now and the
        making of the next batch begins."""
        local = self.local
        local.step_end, local.calls, local.tail_done = self.now(), [], 0
        if not scaler and self.tail_keys:
            self._pop_later(self.samples())
        elif not scaler:
            self._pop(self.samples(), 0)
        if self.tail_keys and self._left_open():  # (not a step wlrun synchronises)
            local.tail_open = True
            if scaler:  # the update is the step's, whatever follows
                self._left_open_to(local.step_end)
            return
        if scaler:
            self._end_left_open()
        self.making_begins(tail=True)

    def makes_batches(self):
        """Whether the loop makes its batches itself (made on the GPU, sliced from a tensor held
        in memory): no DataLoader gave a batch a step trained on, here or on another thread, and an
        optimizer updates the weights; on the thread that trains."""
        return (self.optimizers and not (self.here or self.ahead or self.handing)
                and self.thread == self.ident())

    def validation_over(self):
        """The validation that ended a making is over: the making of the next batch began where its
        model was put back in training mode, else where it last returned from a module call."""
        local = self.local
        local.validating, local.validated_modules, local.back = False, set(), False
        self.watching(False)
        self.making_begins(local.validated, after_validation=True)

    def back_to_training(self, module):
        """module.train() returned: where it is the model a validation evaluated, the validation
        ends here (what follows is the making of the next batch)."""
        local = self.local
        if local.validating and id(module) in local.validated_modules:
            local.validated, local.back = self.now(), True

    def making_begins(self, at=0, after_validation=False, tail=False):
        """The data range of the batch the loop makes next opens (no step open), at `at` (0:
        now); after_validation: the making a validation ended goes on (its evaluation seen, and
        the one before's, still tell a frozen module's work on each batch); tail: right after the
        step's tail (tail_begins), whose calls made_split weighs, else after other work of the
        loop's (a validation), where the calls seen since the step are no tail's."""
        local = self.local
        if not tail:
            local.step_end, local.calls, local.tail_open = 0, [], False
        if local.validating:  # (an evaluation's loader ran out first)
            local.validating = False
            self.watching(False)
        at = at or self.now()
        self.push("data", at=at)
        local.making, local.made_from, local.made_eval = True, at, 0
        if not after_validation:
            local.eval_last, local.eval_seen = local.eval_seen, False

    def outside_work(self, at):
        """Work that is no training step's (a checkpoint saved, a new optimizer made) on the thread
        that trains, after the optimizer step that ended the iteration: the step ends there, not
        at the loop's next fetch (nor is it the making of the next batch)."""
        if not self.step:
            self._end_later(at)
            self.local.tail = 0  # a step held for its scaler's update: it ends here all the same
            self.local.tail_open, self.local.step_end = False, 0  # or through its tail
            if self.local.making:
                self.data_close(EVALUATED, at)

    def samples(self):
        """The step's: of the loader that gave it the most (loaders zipped give a batch each), or
        where another thread fetches the batches, the last one's; where it fetched none, its
        model's input, marked FORWARD_SAMPLES (the report takes it where every step measured has
        one), or nothing where a sequence-first module in the model may make it a sequence's
        length."""
        n = max(self.fetched.values(), default=0)
        if n or (not self.here and self.ahead):
            return n or self.ahead
        fed = self.here or self.ahead  # a DataLoader gave the batches of earlier steps
        if self.doubt:
            if not fed:
                self.tell("doubt", "its model holds a sequence-first %s (batch_first=False): its "
                          "input's first dimension may be the sequence's length, so the hook "
                          "counts no samples; give --batch-size N" % self.doubt)
            return 0
        if self.inputs:
            return FORWARD_SAMPLES + self.inputs
        if self.forwards and not fed:
            self.tell("keywords", "its model's forward is given no tensor by position (the "
                      "batch by keyword, model(input_ids=...)) and no DataLoader gives the "
                      "batches: the hook cannot count a step's samples; give --batch-size N")
        return 0

    def tell(self, key, text):
        """Says text on stderr, once a process."""
        if key not in self.said:
            self.said.add(key)
            _say("wlrun trace: process %d: %s" % (os.getpid(), text))


# what puts back each change the hook made to torch's and Python's functions (and its global hooks
# out), in the order made: the hook's one close path (_restore)
_undo = []
_ABSENT = object()


def _patch(owner, name, wrapper):
    """Puts wrapper in a class's or a module's name, recorded for _restore."""
    old = owner.__dict__.get(name, _ABSENT)  # its own (a class may inherit what it wraps)
    setattr(owner, name, wrapper)

    def undo():  # where the hook's is still in place (a library that wrapped it since keeps its own)
        if owner.__dict__.get(name) is wrapper:
            if old is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, old)

    _undo.append(undo)


def _restore():
    """The hook stops for good (the steps traced done, or a failure of its own): torch's and
    Python's functions are theirs again, so that the program runs on as it does untraced."""
    while _undo:
        try:
            _undo.pop()()
        except Exception:  # noqa: BLE001 - what cannot be put back keeps the hook's, which is off
            pass


def _install(torch, loop, report):
    """Hooks torch's DataLoader, module calls, autograd and optimizers into loop."""
    import functools
    import importlib

    _Tensor[0] = torch.Tensor

    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
    grad_enabled = torch.is_grad_enabled
    now = loop.now

    def guarded(fn):
        """The hook's own bookkeeping: a failure turns the hook off, never the program."""

        @functools.wraps(fn)
        def run(*args):  # (every caller gives positional arguments only)
            if not report.on:
                return None
            try:
                return fn(*args)
            except Exception as e:  # noqa: BLE001 - any failure of the hook's own
                report.off(e)
                return None

        return run

    # DataLoader: every iterator's __next__ (single- and multi-process)
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    iter_init, next_impl = base.__init__, base.__next__
    data_start, data_begin = guarded(loop.data_start), guarded(loop.data_begin)
    data_end = guarded(loop.data_end)
    taken, forget = _install_indices(dataloader, guarded)

    @functools.wraps(iter_init)
    def __init__(self, loader, *args, **kwargs):
        # the iterator's start (a loader's workers start here) is data too
        data_start(id(loader), now())
        try:
            iter_init(self, loader, *args, **kwargs)
        except BaseException:
            data_end(id(loader), None)
            raise
        self._wlrun_loader = id(loader)  # a loader's iterators, one per epoch, are one loader

    local = loop.local

    @functools.wraps(next_impl)
    def __next__(self):
        loader = getattr(self, "_wlrun_loader", id(self))
        data_begin(loader, now())
        # a module called inside the fetch (an encoder in the collate) is the fetch's work
        local.fetching = local.fetching + 1
        try:
            batch = next_impl(self)
        except BaseException:
            local.fetching -= 1
            taken(self)
            data_end(loader, None)
            raise
        local.fetching -= 1
        data_end(loader, batch, taken(self) or 0)
        return batch

    _patch(base, "__init__", __init__)
    _patch(base, "__next__", __next__)

    # a batch fetched on another thread and handed over through a queue (a prefetching thread): the
    # training thread's wait in get() is its fetch; a get costs a check until a batch is fetched on
    # another thread
    import queue

    get_impl, received = queue.Queue.get, guarded(loop.received)

    @functools.wraps(get_impl)
    def get(self, *args, **kwargs):
        # not whether a batch waits to be taken now: the get that waits for the next one finds
        # none (the fetching thread is slower, as a data-bound loop's is)
        if not loop.handing:
            return get_impl(self, *args, **kwargs)
        entered = now()
        item = get_impl(self, *args, **kwargs)
        received(item, entered)
        return item

    _patch(queue.Queue, "get", get)

    # a loader with persistent workers resets its iterator for each epoch after the first (its
    # workers' restart, the sampler's): data, as a new iterator's start
    def wrap_reset(cls):
        impl = cls.__dict__["_reset"]

        @functools.wraps(impl)
        def _reset(self, loader, *args, **kwargs):
            if not (args[0] if args else kwargs.get("first_iter", False)):  # not __init__'s
                data_start(id(loader), now())
                forget(self)
            try:
                return impl(self, loader, *args, **kwargs)
            except BaseException:
                data_end(id(loader), None)
                raise

        _patch(cls, "_reset", _reset)

    for cls in (base, *base.__subclasses__()):
        if "_reset" in cls.__dict__:
            wrap_reset(cls)

    # a loader's workers shut down (an iterator dropped by a `break` out of the loop, or one run
    # out): no step's work, as the template's step has ended before it
    outside_work = guarded(loop.outside_work)
    for cls in base.__subclasses__():
        if "_shutdown_workers" in cls.__dict__:
            _wrap_shutdown(cls, outside_work, now)

    # forward: the first call of a module with parameters in a step, grad enabled and the module
    # in training mode (grad disabled or in eval mode, it evaluates; a module without parameters, a
    # loss, decides nothing); the global hook is there only while no phase is open
    @guarded
    def forward_pre(module, args):
        at = now()
        if loop.phase is None and not compiling() and not local.fetching:
            if not grad_enabled() or not getattr(module, "training", True):
                loop.evaluate(grad_enabled(), module)
            elif _has_parameters(module):
                loop.forward(at, module, args)

    modules = importlib.import_module("torch.nn.modules.module")
    handle = [modules.register_module_forward_pre_hook(forward_pre)]
    # the hook is put in and taken out of torch's dict of global hooks under its handle's id several
    # times a step: a new handle each time costs a few microseconds, which a launch-bound step feels
    global_pre = getattr(handle[0], "hooks_dict_ref", lambda: None)()
    key = getattr(handle[0], "id", None)
    if not isinstance(global_pre, dict) or key not in global_pre:
        global_pre = None
    # torch.compile(module) warns that global module hooks fire once more, for the compiled
    # wrapper: here they are the hook's own, and a call inside an open phase does nothing
    import warnings

    warnings.filterwarnings(
        "ignore", message=r"Using `torch\.compile\(module\)` when there are global hooks")

    def waiting(now):  # called by the loop's methods, inside a guarded call
        if now and not report.on:  # the hook stopped inside the call: its global hook stays out
            return
        if global_pre is not None:
            if now:
                global_pre[key] = forward_pre
            else:
                global_pre.pop(key, None)
        elif now and handle[0] is None:
            handle[0] = modules.register_module_forward_pre_hook(forward_pre)
        elif not now and handle[0] is not None:
            h, handle[0] = handle[0], None
            h.remove()

    loop.waiting = waiting

    # while a validation on held batches runs (no loader tells its end): when it last returned
    # from a module call, or where its model was put back in training mode (model.train()), where
    # the making of the next batch begins
    @guarded
    def forward_post(module, args, output):
        if local.validating and not local.back:
            local.validated = now()

    back_to_training = guarded(loop.back_to_training)
    train_impl = modules.Module.train

    @functools.wraps(train_impl)
    def train(self, mode=True):
        out = train_impl(self, mode)
        if mode and local.validating:
            back_to_training(self)
        return out

    _patch(modules.Module, "train", train)

    returns = [None]

    def watching(on):  # called by the loop's methods, inside a guarded call
        if on and returns[0] is None and hasattr(modules, "register_module_forward_hook"):
            returns[0] = modules.register_module_forward_hook(forward_post)
        elif not on and returns[0] is not None:
            h, returns[0] = returns[0], None
            h.remove()

    loop.watching = watching

    def unhook():  # the global hooks out: the model's calls back on torch's fast path
        watching(False)
        h, handle[0] = handle[0], None
        if global_pre is not None:
            global_pre.pop(key, None)
        elif h is not None:
            h.remove()

    _undo.append(unhook)

    def finished():  # nothing more is recorded
        report.on = False
        _restore()

    loop.finished = finished

    # backward: torch.autograd.backward (loss.backward()) and torch.autograd.grad (gradients
    # taken and set by the loop itself, a gradient penalty inside the forward)
    backward_begin, backward_end = guarded(loop.backward_begin), guarded(loop.backward_end)

    def as_backward(impl):
        @functools.wraps(impl)
        def run(*args, **kwargs):
            mine = backward_begin(now())
            try:
                return impl(*args, **kwargs)
            finally:
                if mine:
                    backward_end()

        return run

    _patch(torch.autograd, "backward", as_backward(torch.autograd.backward))
    _patch(torch.autograd, "grad", as_backward(torch.autograd.grad))

    # zero_grad, an optimizer's or a model's: where a loop calls it with the batch in hand, its
    # step begins there
    zero_grad, step_call = guarded(loop.zero_grad), guarded(loop.step_call)

    def wrap_zero_grad(cls):
        impl = cls.zero_grad

        @functools.wraps(impl)
        def with_step(self, *args, **kwargs):
            if compiling():  # torch.compile tracing a training step: nothing of the hook's
                return impl(self, *args, **kwargs)
            at = now()
            zero_grad(at)
            out = impl(self, *args, **kwargs)
            if local.step_end:
                step_call(at, type(self))
            return out

        _patch(cls, "zero_grad", with_step)

    wrap_zero_grad(torch.optim.Optimizer)
    wrap_zero_grad(torch.nn.Module)
    _install_step_calls(torch, loop, now, step_call)

    # the optimizers
    optimizer_begin, end_phase = guarded(loop.optimizer_begin), guarded(loop.end_phase)

    @guarded
    def pre(optimizer, args, kwargs):
        entered = now()
        depth = loop.local.depth
        if hooks:
            if loop.step_code is None:  # torch's wrapper of every step, the caller's caller
                caller = _outside(sys._getframe(1))
                loop.step_code = caller.f_code if caller is not None else None
            if depth > 0:  # a step that raised ran no post hook of torch's: those still running
                running = _frames_of(loop.step_code, sys._getframe(1)) - 1
                if running < depth:
                    loop.unwound(running)
                    depth = running
        loop.local.depth = depth + 1
        if depth > 0:
            return None
        closure = kwargs.get("closure") if kwargs else None
        at = "kwargs" if closure is not None else None
        first = 1 if args and args[0] is optimizer else 0  # torch's hooks get step's args with self first
        if closure is None and len(args) > first and callable(args[first]):
            closure, at = args[first], "args"
        if closure is None:
            loop.optimizer_begin(entered)
            return None
        if not loop.ours():
            return None
        loop.begin(at=entered)  # the optimizer's work begins after the closure's forward and backward

        @functools.wraps(closure)
        def wrapped(*a, **k):  # the closure's forward and backward are phases of their own
            end_phase()  # a second call (LBFGS): the optimizer's work between closes
            try:
                return closure(*a, **k)
            finally:
                end_phase()
                optimizer_begin()

        if at == "kwargs":
            kwargs = dict(kwargs, closure=wrapped)
        else:
            args = tuple(args[:first]) + (wrapped,) + tuple(args[first + 1:])
        return args, kwargs

    @guarded
    def post(optimizer, args, kwargs):
        loop.local.depth = max(0, loop.local.depth - 1)
        if loop.local.depth == 0:
            loop.optimizer_end(optimizer)

    @guarded
    def unwound():
        loop.unwound(max(0, loop.local.depth - 1))

    optim = importlib.import_module("torch.optim.optimizer")
    hooks = hasattr(optim, "register_optimizer_step_pre_hook")
    if hooks:
        _undo.append(optim.register_optimizer_step_pre_hook(pre).remove)
        _undo.append(optim.register_optimizer_step_post_hook(post).remove)

    # every optimizer made is counted (a loop with none ends its steps at backward); before torch
    # 2.0 each optimizer class's step is wrapped at its first instance
    init_impl = torch.optim.Optimizer.__init__

    def wrap_step(cls):
        step_impl = cls.step
        if getattr(step_impl, "_wlrun_auto", False):
            return

        @functools.wraps(step_impl)
        def step(self, *args, **kwargs):
            changed = pre(self, args, kwargs)
            if changed is not None:
                args, kwargs = changed
            try:
                out = step_impl(self, *args, **kwargs)
            except BaseException:
                unwound()  # no step ended, as with torch 2's hooks, which run no post hook then
                raise
            post(self, args, kwargs)
            return out

        step._wlrun_auto = True
        _patch(cls, "step", step)

    @functools.wraps(init_impl)
    def __init__(self, *args, **kwargs):
        outside_work(now())  # a new optimizer after the steps (a second training phase)
        init_impl(self, *args, **kwargs)
        loop.optimizers += 1
        if not hooks and report.on:  # (not once the hook stopped: a wrapper held from before)
            try:
                wrap_step(type(self))
            except Exception as e:  # noqa: BLE001
                report.off(e)

    _patch(torch.optim.Optimizer, "__init__", __init__)

    # a checkpoint saved after a step (every N steps, or between two loops) is no step's time
    save_impl = torch.serialization.save

    @functools.wraps(save_impl)
    def save(*args, **kwargs):
        outside_work(now())
        return save_impl(*args, **kwargs)

    _patch(torch, "save", save)
    _patch(torch.serialization, "save", save)
    _wrap_synchronize(torch, loop, report)

    _install_scalers(torch, loop, report, guarded)


def _install_step_calls(torch, loop, now, step_call):
    """The calls a loop that makes its batches may end its step with after the optimizer's step
    (or begin it with): an LR scheduler's step and an averaged model's (EMA, SWA) update, noted
    by step_call (zero_grad() is _install's). A scheduler's step inside another's (a subclass
    calling its base's, a chained scheduler's) is one call."""
    import functools

    local = loop.local

    def wrap(cls, name):
        impl = cls.__dict__[name]

        @functools.wraps(impl)
        def noted(self, *args, **kwargs):
            if not local.step_end or local.noting:
                return impl(self, *args, **kwargs)
            at, local.noting = now(), True
            try:
                out = impl(self, *args, **kwargs)
            finally:
                local.noting = False
            step_call(at, type(self))
            return out

        _patch(cls, name, noted)

    sched = getattr(torch.optim, "lr_scheduler", None)
    bases = [getattr(sched, n, None) for n in ("LRScheduler", "_LRScheduler", "ReduceLROnPlateau")]
    seen, todo = set(), [c for c in bases if isinstance(c, type)]
    while todo:  # the schedulers torch has, each class that has a step of its own
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        todo.extend(cls.__subclasses__())
        if "step" in cls.__dict__ and callable(cls.__dict__["step"]):
            wrap(cls, "step")
    swa = getattr(torch.optim, "swa_utils", None)
    averaged = getattr(swa, "AveragedModel", None)
    if isinstance(averaged, type) and "update_parameters" in averaged.__dict__:
        wrap(averaged, "update_parameters")


def _wrap_synchronize(torch, loop, report):
    """The loop's torch.cuda.synchronize() (torch.accelerator's too): the library hears where its
    caller resumes, once the interpreter's lock is back (another thread, a DataLoader's pin-memory
    thread, may hold it for a millisecond after the driver's call returned): the template's t0 and
    t1 are taken there, and so the loop's synchronisation before or after a step returns there."""
    import functools

    resumed = loop.resumed
    for owner in (getattr(torch, "cuda", None), getattr(torch, "accelerator", None)):
        impl = getattr(owner, "synchronize", None)
        if impl is None:
            continue

        def wrap(impl):
            @functools.wraps(impl)
            def synchronize(*args, **kwargs):
                out = impl(*args, **kwargs)
                if report.on:
                    resumed()
                return out

            return synchronize

        _patch(owner, "synchronize", wrap(impl))


def _wrap_shutdown(cls, outside_work, now):
    """cls's _shutdown_workers ends the step left open (loop.outside_work) where it has work to
    do, on the thread that trains."""
    import functools

    impl = cls.__dict__["_shutdown_workers"]

    @functools.wraps(impl)
    def _shutdown_workers(self, *args, **kwargs):
        if not getattr(self, "_shutdown", True):
            outside_work(now())
        return impl(self, *args, **kwargs)

    _patch(cls, "_shutdown_workers", _shutdown_workers)


def _install_indices(dataloader, guarded):
    """The samples of each batch as the loader's sampler gave their indices (in order: a worker's
    batches come back in the order they were asked for), of a map-style dataset.
    Returns taken(iterator) -> the samples of the oldest batch asked for, or None, and
    forget(iterator) (an iterator reset)."""
    import collections
    import functools

    base = dataloader._BaseDataLoaderIter
    impl = base.__dict__.get("_next_index")

    mapped = getattr(getattr(dataloader, "_DatasetKind", None), "Map", 0)

    @guarded
    def indexed(it, index):
        sizes = it.__dict__.get("_wlrun_sizes")
        if sizes is None:
            sizes = it._wlrun_sizes = collections.deque()
            # an IterableDataset's sampler gives placeholders, whatever its iterator yields;
            # without the loader's batching (batch_size=None) an index is whatever the sampler
            # makes: the iterator's, asked once
            it._wlrun_counted = (getattr(it, "_dataset_kind", mapped) == mapped
                                 and bool(getattr(it, "_auto_collation", True)))
        sizes.append(len(index) if it._wlrun_counted and isinstance(index, (list, tuple)) else 0)

    @guarded
    def taken(it):
        sizes = it.__dict__.get("_wlrun_sizes")
        return sizes.popleft() if sizes else None

    @guarded
    def forget(it):
        it.__dict__.pop("_wlrun_sizes", None)
        it.__dict__.pop("_wlrun_counted", None)

    if impl is not None:
        @functools.wraps(impl)
        def _next_index(self):
            index = impl(self)
            indexed(self, index)
            return index

        _patch(base, "_next_index", _next_index)
    return taken, forget


def _outside(frame):
    """The first frame from frame up that is not the hook's own."""
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame


def _frames_of(code, frame):
    """The frames running code from frame up the stack (torch's wrapper of every optimizer step: a
    subclass's step calling its base's is two)."""
    n = 0
    while frame is not None:
        n += frame.f_code is code
        frame = frame.f_back
    return n


def _install_scalers(torch, loop, report, guarded):
    """GradScaler's step, which skips the optimizer's step where the gradients overflowed, and its
    update: each class that defines one (subclasses too: FSDP's, a program's own) is wrapped at
    its first instance, so that a skipped step still ends its iteration, and where the loop makes
    its batches, the step ends when the update that follows its step returns."""
    import functools
    import types

    scaler_begin, scaler_end = guarded(loop.scaler_begin), guarded(loop.scaler_end)
    updated, local = guarded(loop.scaler_updated), loop.local

    def plain(impl):  # a function of the class's own (not a static or class method), not ours
        return isinstance(impl, types.FunctionType) and not getattr(impl, "_wlrun_auto", False)

    def wrap(cls):
        impl = cls.__dict__.get("step")
        if plain(impl):

            @functools.wraps(impl)
            def step(self, optimizer, *args, **kwargs):
                stepped = scaler_begin(id(self))
                try:
                    return impl(self, optimizer, *args, **kwargs)
                finally:
                    scaler_end(optimizer, stepped)

            step._wlrun_auto = True
            _patch(cls, "step", step)
        update_impl = cls.__dict__.get("update")
        if plain(update_impl):

            @functools.wraps(update_impl)
            def update(self, *args, **kwargs):
                local.updating += 1  # (the thread's)
                try:
                    return update_impl(self, *args, **kwargs)
                finally:
                    local.updating -= 1
                    if not local.updating:
                        updated(id(self))

            update._wlrun_auto = True
            _patch(cls, "update", update)

    bases = []
    for path in ("amp", "cuda.amp"):
        at = torch
        for part in path.split("."):
            at = getattr(at, part, None)
        cls = getattr(at, "GradScaler", None)
        if isinstance(cls, type) and cls not in bases:
            bases.append(cls)
    for base in bases:
        init_impl = base.__dict__.get("__init__")
        if init_impl is None or getattr(init_impl, "_wlrun_auto", False):
            continue

        def __init__(self, *args, _impl=init_impl, **kwargs):
            _impl(self, *args, **kwargs)
            if not report.on:  # (a wrapper held from before the hook stopped)
                return
            try:
                for cls in type(self).__mro__:
                    if any(issubclass(cls, b) for b in bases):
                        wrap(cls)
            except Exception as e:  # noqa: BLE001
                report.off(e)

        functools.update_wrapper(__init__, init_impl)
        __init__._wlrun_auto = True
        _patch(base, "__init__", __init__)


class _Report:
    """Whether the hook is on; turned off, with one line, at its first failure."""

    on = True

    def off(self, error):
        if self.on:
            self.on = False
            _restore()
            _say("wlrun trace: the automatic PyTorch ranges are off in process %d: %s: %s"
                 % (os.getpid(), type(error).__name__, error))


def _when_torch_imported(then):
    """Calls then(torch) once torch has been imported, whenever that happens."""
    import importlib.abc
    import importlib.util

    class Watcher(importlib.abc.MetaPathFinder):
        busy = False

        def find_spec(self, name, path=None, target=None):
            if name != "torch" or self.busy:
                return None
            self.busy = True
            try:
                spec = importlib.util.find_spec(name)
            finally:
                self.busy = False
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            exec_module = spec.loader.exec_module

            def run(module):
                exec_module(module)
                if self in sys.meta_path:
                    sys.meta_path.remove(self)
                then(module)

            spec.loader.exec_module = run
            return spec

    if "torch" in sys.modules:
        then(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, Watcher())


def _start():
    path = os.environ.get("WLRUN_TRACE_AUTO")
    if not path:
        return
    report = _Report()

    def with_torch(torch):
        try:
            import ctypes

            lib = ctypes.CDLL(path)
            lib.wlrun_trace_auto_push_at.argtypes = (ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64)
            lib.wlrun_trace_auto_pop_at.argtypes = (ctypes.c_int64, ctypes.c_int64)
            lib.wlrun_trace_auto_pop_later.argtypes = (ctypes.c_int64,)
            lib.wlrun_trace_auto_end_later.argtypes = (ctypes.c_int64,)
            lib.wlrun_trace_auto_left_open.argtypes = ()
            lib.wlrun_trace_auto_end_left_open.argtypes = ()
            lib.wlrun_trace_auto_left_open_to.argtypes = (ctypes.c_int64,)
            lib.wlrun_trace_auto_enabled.argtypes = ()
            lib.wlrun_trace_auto_recording.argtypes = ()
            lib.wlrun_trace_auto_above.argtypes = ()
            held = ctypes.PyDLL(path)  # the same library, its calls keeping the interpreter's lock
            held.wlrun_trace_auto_resumed.argtypes = ()
            if not lib.wlrun_trace_auto_enabled():
                return  # not traced (WLRUN_TRACE_DIR missing): nothing to record
            loop = _Loop(lib, held)
            _install(torch, loop, report)
        except Exception as e:  # noqa: BLE001
            report.off(e)

    _when_torch_imported(with_torch)


try:
    _start()
finally:
    _chain()
