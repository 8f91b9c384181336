"""Resume state of a training run, saved inside each ``step_N`` folder beside the weights: Adam
moments, RNG states (one per process under torchrun), step, epoch and batch position."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from core.training import distributed as dist_util

log = logging.getLogger("core.training.train")


def save_train_state(path: Path, opt: torch.optim.Optimizer, meta: dict, rng: dict | None = None) -> None:
    """Write ``train_state.safetensors`` (Adam moments, RNG states: ``rng`` from
    :meth:`DistContext.rng_tensors`, else this process's) and ``train_state.json`` (``meta``:
    step, epoch, batch position, tokens, history, world_size, backend; optimizer param groups)."""
    sd = opt.state_dict()
    tensors = {}
    for idx, st in sd["state"].items():
        for k, v in st.items():
            tensors[f"{idx}.{k}"] = torch.as_tensor(v).detach().cpu().contiguous()
    tensors.update(rng or {"rng.torch": torch.get_rng_state()})
    save_file(tensors, str(path / "train_state.safetensors"))  # path is an atomic_dir folder: no tmp+rename here
    (path / "train_state.json").write_text(json.dumps({**meta, "param_groups": sd["param_groups"]}, indent=1))


def load_train_state(path: Path, opt: torch.optim.Optimizer, device: torch.device, ctx: dist_util.DistContext) -> dict:
    """Load what :func:`save_train_state` wrote into ``opt`` (moments moved to ``device``) and
    restore this rank's RNG (see :meth:`DistContext.restore_rng`); returns the saved meta."""
    meta = json.loads((path / "train_state.json").read_text())
    tensors = load_file(str(path / "train_state.safetensors"))
    state: dict = {}
    for key, v in tensors.items():
        if key.startswith("rng."):
            continue
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = v if name == "step" else v.to(device)
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    saved_world = meta.get("world_size", 1)
    if not ctx.restore_rng(tensors, saved_world, meta.get("seed", 0), meta["step"]):
        log.warning(
            "run saved by %d process(es), resumed on %d: same batches from step %d, dropout reseeded "
            "(continues the curve, not bit-identical)",
            saved_world,
            ctx.world_size,
            meta["step"],
        )
    return meta
