"""What a training run did, in words and numbers: the model card written into every
checkpoint and the ``training.json`` summary shipped with a model."""

from __future__ import annotations

import json
from pathlib import Path

from core.training.run_folder import newest_complete_save
from core.transformer.model import Transformer


def model_card(opts, counts: dict, valid_counts: dict, meta: dict, model: Transformer) -> str:
    """The README.md written into every checkpoint: architecture, data, steps, tokens, wall time."""
    c = model.config
    lines = [
        f"# {Path(opts.out).name}",
        "",
        ("English→Korean" if getattr(opts, "reverse", False) else "Korean→English")
        + ' Transformer written from "Attention Is All You Need" ('
        + ("pre-LN, a deviation from the paper's post-LN" if c.norm_first else "post-LN")
        + f", {c.positional} positions, "
        + (
            "one joint Korean+English vocabulary with source embedding, target embedding and output projection tied)."
            if c.share_src_tgt_embed
            else "tied target embedding/output projection)."
        ),
        "",
        f"- d_model {c.d_model}, {c.n_heads} heads (d_head {c.d_head}), {c.n_encoder_layers}+{c.n_decoder_layers} "
        f"layers, d_ff {c.d_ff}, dropout {c.dropout}, max_len {c.max_len}",
        f"- vocabularies: source {c.src_vocab_size}, target {c.tgt_vocab_size} (BPE, NFC"
        + (", one joint vocabulary)" if c.share_src_tgt_embed else ")"),
        f"- dropout: residual {c.dropout}, attention {c.attn_dropout_p}, activation {c.act_dropout_p}; "
        f"label smoothing {opts.label_smoothing}; precision {opts.precision}"
        + (f"; warm-started from {opts.init_from}" if opts.init_from else ""),
        f"- parameters: {model.num_parameters():,}",
        f"- trained {meta['step']} steps, {meta['tokens']:,} target tokens, {meta['wall_s'] / 60:.1f} min",
        "- training sets (pairs × upsampling): " + ", ".join(f"{k} ({v:,})" for k, v in counts.items()),
        "- validation sets: " + ", ".join(f"{k} ({v:,})" for k, v in valid_counts.items()),
        "",
        "Data licences: see the project README (Data and licences).",
    ]
    return "\n".join(lines) + "\n"


def training_summary(run: str | Path) -> dict:
    """What a run did, for the shipped ``training.json``: options (data sets and weights),
    steps, target tokens, wall time, processes (``world_size``; the latest segment's when a run
    was resumed on a different number) and ``backend`` ("gloo"/"nccl", None for one process),
    final train loss and validation NLL history."""
    run = Path(run)
    opts = json.loads((run / "options.json").read_text())
    save = newest_complete_save(run)
    if save is None:
        raise ValueError(f"{run}: no complete save (step_N folder) to summarize")
    state = json.loads((save[1] / "train_state.json").read_text())
    history = state.get("history", [])
    world = state.get("world_size", 1)
    launcher = f"torchrun --nproc_per_node {world}" if world > 1 else "python"
    return {
        "command": launcher
        + " -m core train "
        + " ".join(
            [f"--train {' '.join(opts['train'])}", f"--valid {' '.join(opts['valid'])}"]
            + [f"--{k.replace('_', '-')} {v}" for k, v in opts.items() if k not in ("train", "valid", "extra")]
        ),
        "options": opts,
        "steps": state["step"],
        "epochs_completed": state["epoch"],
        "target_tokens": state["tokens"],
        "wall_minutes": round(state["wall_s"] / 60, 1),
        "world_size": world,
        "backend": state.get("backend"),
        "final_train_loss": history[-1]["train_loss"] if history else None,
        "final_valid_nll": history[-1]["valid_nll"] if history else None,
        "valid_history": history,
    }
