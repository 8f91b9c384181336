"""Adam moments of the training run a checkpoint came from, so that adapting it can continue that
optimizer instead of starting a fresh one. Used by :func:`core.training.adapt.adapt`; Qt-free.

A fresh Adam's first updates are sign-like: ``m̂ / √v̂ = g / |g|``, so every weight moves by about
the learning rate however small its gradient. Continuing the training run's second moment
``v`` (``exp_avg_sq``, an average of the squared gradients over the last ~50 updates of training,
β₂ = 0.98) scales each weight's update by its gradient relative to the gradients it saw in
training instead: weights the few new pairs barely touch move little (Kingma & Ba 2015, Alg. 1).
The step count is continued as well, so the bias corrections ``1 − βᵗ`` stay as the run had them.

Two files hold such moments:

- a training run's ``step_N/train_state.safetensors`` (``"{index}.exp_avg"``, ``"{index}.exp_avg_sq"``,
  ``"{index}.step"`` per parameter in ``model.parameters()`` order, as
  :func:`core.training.state.save_train_state` writes them);
- ``adam_moments.safetensors`` beside a checkpoint's ``model.safetensors`` (``"exp_avg_sq.{name}"``
  and optionally ``"exp_avg.{name}"`` by parameter name, bfloat16; metadata ``step`` and the
  SHA-256 of the weights they belong to), written by
  ``python -m core.training.adapt_moments RUN/step_N CHECKPOINT``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import Tensor, nn

from core.checkpoints.atomic_io import sha256_file

MOMENTS = "adam_moments.safetensors"
TRAIN_STATE = "train_state.safetensors"


@dataclass
class Moments:
    """Adam's state per parameter name: ``exp_avg_sq`` (v) and, when kept, ``exp_avg`` (m), each the
    parameter's shape; ``step`` the number of updates they were averaged over."""

    step: int
    exp_avg_sq: dict[str, Tensor]
    exp_avg: dict[str, Tensor] = field(default_factory=dict)


def weights_digest(weights: Path) -> str:
    """SHA-256 (hex) of a ``model.safetensors`` file: which weights a moments file belongs to."""
    return sha256_file(weights)


def _check_shapes(moments: Moments, model: nn.Module) -> None:
    params = dict(model.named_parameters())
    for name, v in moments.exp_avg_sq.items():
        if name not in params:
            raise ValueError(f"moments hold {name!r}, which the model has not")
        if v.shape != params[name].shape:
            raise ValueError(f"moments of {name!r} are {tuple(v.shape)}, the parameter {tuple(params[name].shape)}")


def read_train_state(step_dir: Path, model: nn.Module) -> Moments:
    """The moments in a training run's ``step_dir/train_state.safetensors``, named after
    ``model.named_parameters()`` (the model of that run: same order and shapes).

    Raises:
        ValueError: the file's parameters do not match ``model``'s in number or shape.
    """
    names = [n for n, _ in model.named_parameters()]
    with safe_open(str(Path(step_dir) / TRAIN_STATE), "pt") as f:
        keys = set(f.keys())
        n = len({k.split(".", 1)[0] for k in keys if not k.startswith("rng.")})
        if n != len(names):
            raise ValueError(f"{step_dir}: moments of {n} parameters, the model has {len(names)}")
        step = int(f.get_tensor("0.step"))
        m = Moments(step, {name: f.get_tensor(f"{i}.exp_avg_sq") for i, name in enumerate(names)})
        m.exp_avg = {name: f.get_tensor(f"{i}.exp_avg") for i, name in enumerate(names)}
    _check_shapes(m, model)
    return m


def read_moments(file: Path, model: nn.Module | None = None) -> Moments:
    """The moments of an ``adam_moments.safetensors`` (float32 from here on); with ``model`` also
    checked against its parameters.

    Raises:
        ValueError: a parameter the model has not, or of another shape; no ``step`` in the metadata.
    """
    with safe_open(str(file), "pt") as f:
        meta = f.metadata() or {}
        if "step" not in meta:
            raise ValueError(f"{file}: no step in its metadata")
        m = Moments(int(meta["step"]), {})
        for key in f.keys():
            kind, name = key.split(".", 1)
            target = m.exp_avg_sq if kind == "exp_avg_sq" else m.exp_avg
            target[name] = f.get_tensor(key).float()
    if model is not None:
        _check_shapes(m, model)
    return m


def write_moments(file: Path, moments: Moments, digest: str, exp_avg: bool = False, dtype=torch.bfloat16) -> int:
    """Write ``moments`` to ``file`` as ``dtype`` (``exp_avg`` too when asked), with ``step`` and
    the weights' ``digest`` in the metadata. Returns the file's size in bytes."""
    tensors = {f"exp_avg_sq.{n}": v.to(dtype).contiguous() for n, v in moments.exp_avg_sq.items()}
    if exp_avg:
        tensors.update({f"exp_avg.{n}": v.to(dtype).contiguous() for n, v in moments.exp_avg.items()})
    save_file(tensors, str(file), metadata={"step": str(moments.step), "weights_sha256": digest})
    return Path(file).stat().st_size


def shipped_moments(checkpoint: Path) -> Path | None:
    """``checkpoint/adam_moments.safetensors`` when it is there and belongs to the checkpoint's
    ``model.safetensors`` (same SHA-256), else None."""
    file = Path(checkpoint) / MOMENTS
    if not file.is_file():
        return None
    with safe_open(str(file), "pt") as f:
        digest = (f.metadata() or {}).get("weights_sha256")
    return file if digest == weights_digest(Path(checkpoint) / "model.safetensors") else None


def resolve(option: str, checkpoint: Path) -> Path | None:
    """Where adapting ``checkpoint`` takes its moments from, for the ``moments`` option: ``""`` or
    ``"none"``: nowhere (a fresh Adam); ``"auto"``: :func:`shipped_moments`; else the path given."""
    if option in ("", "none"):
        return None
    return shipped_moments(checkpoint) if option == "auto" else Path(option)


def load_moments(source: Path, model: nn.Module) -> Moments:
    """The moments in ``source``: a training run's step folder (or its ``train_state.safetensors``)
    or an ``adam_moments.safetensors``. Raises ValueError as :func:`read_train_state` and
    :func:`read_moments` do, or when ``source`` is neither."""
    source = Path(source)
    if source.is_dir() and (source / TRAIN_STATE).is_file():
        return read_train_state(source, model)
    if source.name == TRAIN_STATE:
        return read_train_state(source.parent, model)
    if source.is_dir() and (source / MOMENTS).is_file():
        source = source / MOMENTS
    if source.is_file():
        return read_moments(source, model)
    raise ValueError(f"{source}: neither a training step folder with {TRAIN_STATE} nor a {MOMENTS}")


def warm_start_adam(opt: torch.optim.Adam, model: nn.Module, moments: Moments, exp_avg: bool = True) -> int:
    """Give ``opt`` (an Adam over ``model``'s parameters, no update made yet) the state of
    ``moments`` for every trainable parameter they name: ``exp_avg_sq`` as it is, ``exp_avg`` as it
    is when ``exp_avg`` (else zeros: the first update is then 1 − β₁ of a continued one), ``step``
    continued, so Adam's bias corrections are those of the run. Parameters without moments (frozen,
    or new, as adapters are) keep a fresh state. Returns how many parameters were given a state."""
    n = 0
    for name, p in model.named_parameters():
        if not p.requires_grad or name not in moments.exp_avg_sq:
            continue
        m = moments.exp_avg.get(name) if exp_avg else None
        opt.state[p] = {
            "step": torch.tensor(float(moments.step)),
            "exp_avg": m.to(p.device, p.dtype).clone() if m is not None else torch.zeros_like(p),
            "exp_avg_sq": moments.exp_avg_sq[name].to(p.device, p.dtype).clone(),
        }
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    """``python -m core.training.adapt_moments STEP_DIR CHECKPOINT [--exp-avg]``: write
    ``CHECKPOINT/adam_moments.safetensors`` from a training run's step folder whose weights are
    the checkpoint's (bit for bit; refused otherwise)."""
    p = argparse.ArgumentParser(prog="python -m core.training.adapt_moments", description=main.__doc__)
    p.add_argument("step_dir", help="a training run's step folder (model.safetensors, train_state.safetensors)")
    p.add_argument("checkpoint", help="the checkpoint folder to write adam_moments.safetensors into")
    p.add_argument("--exp-avg", action="store_true", help="keep the first moment too (doubles the size)")
    args = p.parse_args(argv)
    from core.checkpoints.checkpoint import load_checkpoint

    step_dir, ckpt_dir = Path(args.step_dir), Path(args.checkpoint)
    digest = weights_digest(ckpt_dir / "model.safetensors")
    if weights_digest(step_dir / "model.safetensors") != digest:
        raise SystemExit(f"{step_dir}/model.safetensors is not {ckpt_dir}/model.safetensors: its moments belong to other weights")
    moments = read_train_state(step_dir, load_checkpoint(ckpt_dir, device="cpu").model)
    size = write_moments(ckpt_dir / MOMENTS, moments, digest, exp_avg=args.exp_avg)
    print(f"wrote {ckpt_dir / MOMENTS}: {len(moments.exp_avg_sq)} parameters, step {moments.step}, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
