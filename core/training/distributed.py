"""Multi-process data-parallel training: ``torchrun … -m core train`` runs the training loop
once per process under ``torch.nn.parallel.DistributedDataParallel``.

Rules (the training loop relies on them):
- Launched by torchrun (``RANK`` and ``WORLD_SIZE`` > 1 in the environment) → one process
  group: ``nccl`` when the device is CUDA (one GPU per process, ``cuda:LOCAL_RANK``), ``gloo``
  on CPU. Otherwise :func:`setup` returns a single-process context and nothing here runs.
- Every rank builds the same length-bucketed *global* batches (``--max-tokens`` = padded
  tokens per optimizer step over all processes) and takes its own shard ``batch[rank::W]``.
- Each rank's loss is weighted by its share of the global batch's target tokens, so the
  averaged gradient is the gradient of the token-mean loss over the whole global batch —
  the same optimization step a single process would take on that batch.
- Rank 0 alone writes files; every collective has the process-group timeout, so a rank that
  dies makes the others stop with :class:`DistributedTrainingError` instead of hanging.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import Tensor

from core.device import resolve_device
from core.errors import StudioError

log = logging.getLogger("core.training.distributed")


class DistributedTrainingError(StudioError):
    """A collective failed: another rank died, the network broke, or the timeout passed."""


@dataclass
class DistContext:
    """Where this process stands: ``rank`` of ``world_size`` (``local_rank`` on its node),
    the ``backend`` (None when single-process) and the ``device`` it trains on."""

    device: torch.device
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str | None = None

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, items: list) -> list:
        """This rank's share ``items[rank::world_size]`` (all of ``items`` when single-process)."""
        return items[self.rank :: self.world_size] if self.distributed else items

    def barrier(self) -> None:
        if self.distributed:
            _collective(dist.barrier)

    def all_reduce_sum(self, values: list[float]) -> list[float]:
        """Element-wise sum of ``values`` over all ranks (float64; identity when single-process)."""
        if not self.distributed:
            return values
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        _collective(dist.all_reduce, t, op=dist.ReduceOp.SUM)
        return t.tolist()

    def any(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is true on any rank (ranks agree on when to stop)."""
        return bool(self.all_reduce_sum([float(flag)])[0]) if self.distributed else flag

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """``DistributedDataParallel(model)`` (rank 0's weights are broadcast now; gradients are
        averaged in backward), or ``model`` itself when single-process."""
        if not self.distributed:
            return model
        ids = [self.device.index] if self.device.type == "cuda" else None
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, forward_sync_buffers=False)

    def rng_tensors(self) -> dict[str, Tensor]:
        """Every rank's CPU RNG state for ``train_state.safetensors``: ``rng.torch`` (rank 0, the
        single-process key) and ``rng.torch.rankR`` for R ≥ 1. Collective: call on all ranks."""
        if not self.distributed:
            return {"rng.torch": torch.get_rng_state()}
        states: list = [None] * self.world_size
        _collective(dist.all_gather_object, states, torch.get_rng_state())
        return {("rng.torch" if r == 0 else f"rng.torch.rank{r}"): s for r, s in enumerate(states)}

    def restore_rng(self, tensors: dict[str, Tensor], saved_world_size: int, seed: int, step: int) -> bool:
        """Restore this rank's RNG from a checkpoint written by ``saved_world_size`` processes.

        Same world size → exactly the saved stream (an exact resume). Different world size →
        the global batches still continue at the saved position (they do not depend on the
        number of processes), but dropout is reseeded from (seed, step, rank), so the run
        continues the curve without being bit-identical to an uninterrupted one.
        Returns True when the saved stream was restored.
        """
        key = "rng.torch" if self.rank == 0 else f"rng.torch.rank{self.rank}"
        if saved_world_size == self.world_size and key in tensors:
            torch.set_rng_state(tensors[key])
            return True
        torch.manual_seed(seed * 1_000_003 + step * 7919 + self.rank)
        return False

    def close(self) -> None:
        """Wait for every rank (rank 0 may still be writing the last checkpoint), then leave the group."""
        if self.distributed and dist.is_initialized():
            self.barrier()
            dist.destroy_process_group()


def launched_by_torchrun() -> bool:
    """True when the environment describes a multi-process job (torchrun sets RANK, WORLD_SIZE,
    LOCAL_RANK, MASTER_ADDR and MASTER_PORT)."""
    return "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1


def is_main_process() -> bool:
    """True for rank 0 under torchrun, and for a plain single process."""
    return os.environ.get("RANK", "0") == "0"


def setup(device_name: str, timeout_s: float) -> DistContext:
    """Resolve the device and, under torchrun, join the process group.

    ``timeout_s`` bounds every collective (seconds): a rank that waits longer for the others
    raises :class:`DistributedTrainingError`. Non-zero ranks log warnings only.

    Raises:
        ValueError: bad device name, or CUDA asked for without a GPU.
        DistributedTrainingError: the process group could not be formed within the timeout.
    """
    device = resolve_device(device_name)
    if not launched_by_torchrun():
        return DistContext(device=device)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device.type == "cuda":
        if local >= torch.cuda.device_count():
            raise ValueError(f"LOCAL_RANK {local} but only {torch.cuda.device_count()} CUDA devices on this node")
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    backend = "nccl" if device.type == "cuda" else "gloo"
    if not dist.is_initialized():
        _collective(
            dist.init_process_group,
            backend,
            rank=rank,
            world_size=world,
            timeout=timedelta(seconds=timeout_s),
            device_id=device if device.type == "cuda" else None,
        )
    if rank != 0:
        logging.getLogger("core").setLevel(logging.WARNING)
    return DistContext(device=device, rank=rank, world_size=world, local_rank=local, backend=backend)


def shard_loss(ctx: DistContext, loss: Tensor, n_local: int, n_global: int) -> tuple[Tensor, float]:
    """Turn this rank's token-mean ``loss`` over ``n_local`` target tokens into (the loss to
    backpropagate, the token-mean loss over the global batch of ``n_global`` tokens).

    DDP averages gradients over W ranks, so backpropagating ``W · loss · n_local / n_global``
    gives exactly ∇(global token mean). A rank with an empty shard passes ``n_local = 0``
    (its loss, on a stand-in example, is weighted by 0 but it still joins the all-reduce).
    """
    share = loss * (n_local / n_global)
    reported = ctx.all_reduce_sum([float(share.detach())])[0]
    return share * ctx.world_size, reported


def explain(exc: BaseException, what: str = "training") -> BaseException:
    """A :class:`DistributedTrainingError` naming this rank when ``exc`` is a failed collective
    (``DistError``, or a gloo/NCCL error raised as RuntimeError from DDP's backward) under
    torchrun; otherwise ``exc`` itself, unchanged."""
    text = str(exc).strip()
    comm = isinstance(exc, dist.DistError) or any(
        w in text for w in ("gloo", "NCCL", "nccl", "Connection", "connection", "Timed out", "timed out", "Timeout")
    )
    if not launched_by_torchrun() or not comm:
        return exc
    first = text.splitlines()[0] if text else type(exc).__name__
    return DistributedTrainingError(
        f"rank {os.environ.get('RANK', '?')} of {os.environ.get('WORLD_SIZE', '?')}: {what} stopped — another "
        f"process died, the network broke, or --dist-timeout passed ({first})"
    )


def _collective(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:  # DistError subclasses RuntimeError
        raise explain(exc, getattr(fn, "__name__", "collective")) from exc
