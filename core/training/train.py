"""Training loop (paper §5): Adam β=(0.9, 0.98), ε=1e-9, warm-up then inverse-square-root
learning rate (Eq. 3, §5.3), label smoothing (§5.4), dropout, gradient clipping,
length-bucketed batches. Writes checkpoints in the shipped format while it runs and
resumes a stopped run exactly (weights, Adam moments, step, batch position, RNG)."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from core.device import resolve_device
from core.inference.checkpoint import load_checkpoint, save_checkpoint
from core.inference.tokenizer import TextTokenizer
from core.training.data import DataSpec, collate, encode_pairs, make_batches, read_parallel
from core.transformer.config import ModelConfig
from core.transformer.model import Transformer

log = logging.getLogger("core.training.train")


@dataclass
class TrainOptions:
    """Everything a run needs; saved as ``options.json`` in the run directory.

    ``max_tokens``: padded tokens per batch (longest side × sentences).
    ``joint_vocab``: when > 0, one BPE vocabulary of this size over Korean and English, with
    source embedding, target embedding and output projection tied (three-way); 0 keeps
    separate ``src_vocab``/``tgt_vocab`` vocabularies.
    ``precision``: "fp32", or "bf16" = autocast to bfloat16 for the forward pass with fp32
    master weights, optimizer state and loss (CPU with AVX512-BF16, or CUDA).
    ``init_from``: warm-start from a checkpoint directory (weights and tokenizers; fresh
    optimizer and warm-up). ``chrf_lines``: greedy-translate the first N validation pairs
    at every validation and keep the best-chrF checkpoint in ``OUT/best``.
    """

    train: list[str]
    valid: list[str]
    out: str
    src_vocab: int = 8000
    tgt_vocab: int = 8000
    d_model: int = 256
    n_heads: int = 4
    layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.1
    max_len: int = 128
    positional: str = "sinusoidal"
    max_tokens: int = 2000
    max_steps: int = 10000
    max_minutes: float = 0.0
    warmup: int = 1000
    lr_scale: float = 1.0
    label_smoothing: float = 0.1
    clip: float = 1.0
    seed: int = 1
    device: str = "auto"
    threads: int = 0
    valid_every: int = 500
    save_every: int = 500
    keep: int = 5
    joint_vocab: int = 0
    norm_first: bool = False
    attention_dropout: float | None = None
    activation_dropout: float | None = None
    precision: str = "fp32"
    init_from: str = ""
    chrf_lines: int = 0
    extra: dict = field(default_factory=dict)


PRECISIONS = ("fp32", "bf16")


def noam_lr(step: int, d_model: int, warmup: int, scale: float) -> float:
    """lrate = scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) (paper Eq. 3)."""
    step = max(step, 1)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def loss_fn(logits: torch.Tensor, target: torch.Tensor, pad_id: int, smoothing: float) -> torch.Tensor:
    """Token-mean cross-entropy on raw logits ``[B, T, V]`` vs ``target [B, T]`` (pads ignored).

    ``F.cross_entropy`` applies log-softmax itself: logits must not be softmaxed before.
    """
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)).float(), target.reshape(-1), ignore_index=pad_id, label_smoothing=smoothing
    )


def _load_sets(specs: list[str]) -> tuple[list[tuple[str, str]], dict[str, int]]:
    pairs, counts = [], {}
    for raw in specs:
        spec = DataSpec.parse(raw)
        p = read_parallel(spec.prefix)
        counts[f"{spec.name}*{spec.weight}"] = len(p)
        pairs.extend(p * spec.weight)
    return pairs, counts


def _save_train_state(path: Path, opt: torch.optim.Optimizer, meta: dict) -> None:
    sd = opt.state_dict()
    tensors = {}
    for idx, st in sd["state"].items():
        for k, v in st.items():
            tensors[f"{idx}.{k}"] = torch.as_tensor(v).detach().cpu().contiguous()
    tensors["rng.torch"] = torch.get_rng_state()
    save_file(tensors, str(path / "train_state.safetensors.tmp"))
    (path / "train_state.safetensors.tmp").replace(path / "train_state.safetensors")
    (path / "train_state.json").write_text(json.dumps({**meta, "param_groups": sd["param_groups"]}, indent=1))


def _load_train_state(path: Path, opt: torch.optim.Optimizer, device: torch.device) -> dict:
    meta = json.loads((path / "train_state.json").read_text())
    tensors = load_file(str(path / "train_state.safetensors"))
    state: dict = {}
    for key, v in tensors.items():
        if key.startswith("rng."):
            continue
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = v if name == "step" else v.to(device)
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    torch.set_rng_state(tensors["rng.torch"])
    return meta


@torch.no_grad()
def evaluate_loss(model: Transformer, examples: list, max_tokens: int, device: torch.device) -> float:
    """Mean per-token negative log-likelihood (nats, no smoothing) over ``examples``."""
    model.eval()
    total, count = 0.0, 0
    pad = model.config.pad_id
    for idx in make_batches(examples, max_tokens, seed=0):
        src, tgt = (t.to(device) for t in collate(examples, idx, pad))
        logits = model(src, tgt[:, :-1])
        n = int(tgt[:, 1:].ne(pad).sum())
        total += float(loss_fn(logits, tgt[:, 1:], pad, 0.0)) * n
        count += n
    model.train()
    return total / max(count, 1)


def train(opts: TrainOptions, resume: bool = False, overrides: dict | None = None) -> Path:
    """Train (or resume) a run in ``opts.out``; returns the directory of the last checkpoint.

    On resume the saved ``options.json`` is used; ``overrides`` may change only the budget
    (max_steps, max_minutes, threads, device). Raises ValueError for any other override.
    """
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    if resume:
        overrides = overrides or {}
        bad = sorted(set(overrides) - {"max_steps", "max_minutes", "threads", "device", "out"})
        if bad:
            raise ValueError(f"--resume continues the saved run; these options cannot change: {', '.join(bad)}")
        opts = TrainOptions(**{**json.loads((out / "options.json").read_text()), **overrides})
    (out / "options.json").write_text(json.dumps(asdict(opts), indent=1))
    if opts.threads:
        torch.set_num_threads(opts.threads)
    device = resolve_device(opts.device)
    torch.manual_seed(opts.seed)
    train_pairs, counts = _load_sets(opts.train)
    valid_pairs, valid_counts = _load_sets(opts.valid)
    if opts.precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {opts.precision!r}")
    init = load_checkpoint(opts.init_from, device="cpu") if opts.init_from else None
    if init is not None:
        src_tok, tgt_tok = init.src_tokenizer, init.tgt_tokenizer
        config = init.config
        for k in ("dropout", "attention_dropout", "activation_dropout"):  # regularization may change
            setattr(config, k, getattr(opts, k))
        config.validate()
    else:
        src_tok, tgt_tok = _tokenizers(opts, out, train_pairs)
        config = ModelConfig(
            src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=opts.d_model,
            n_heads=opts.n_heads, n_encoder_layers=opts.layers, n_decoder_layers=opts.layers, d_ff=opts.d_ff,
            dropout=opts.dropout, max_len=opts.max_len, positional=opts.positional,
            share_src_tgt_embed=opts.joint_vocab > 0, norm_first=opts.norm_first,
            attention_dropout=opts.attention_dropout, activation_dropout=opts.activation_dropout,
        )
    c = config
    examples = encode_pairs(train_pairs, src_tok, tgt_tok, c.max_len, c.eos_id, c.bos_id)
    valid = encode_pairs(valid_pairs, src_tok, tgt_tok, c.max_len, c.eos_id, c.bos_id)
    model = Transformer(config)
    if init is not None:
        model.load_state_dict(init.model.state_dict())
        log.info("warm start from %s (fresh optimizer, %d warm-up steps)", opts.init_from, opts.warmup)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    meta = {"step": 0, "epoch": 0, "batch_in_epoch": 0, "wall_s": 0.0, "tokens": 0, "history": []}
    if resume and (out / "last" / "model.safetensors").exists():
        model.load_state_dict(load_checkpoint(out / "last", device="cpu").model.state_dict())
        model.to(device)
        meta = _load_train_state(out, opt, device)
        log.info("resumed at step %d (epoch %d, batch %d)", meta["step"], meta["epoch"], meta["batch_in_epoch"])
    model.train()
    use_amp = opts.precision == "bf16"
    chrf_sources = [s for s, _ in valid_pairs[: opts.chrf_lines]]
    chrf_refs = [t for _, t in valid_pairs[: opts.chrf_lines]]
    log.info("%d training pairs (%s), %d valid, %s parameters", len(examples), counts, len(valid), model.num_parameters())
    started = time.time() - meta["wall_s"]
    bar = tqdm(total=opts.max_steps, initial=meta["step"], dynamic_ncols=True, mininterval=5)
    step, epoch, pos = meta["step"], meta["epoch"], meta["batch_in_epoch"]
    window_tokens, window_t = 0, time.time()
    last_loss = float("nan")

    def checkpoint(tag: str) -> None:
        meta.update(step=step, epoch=epoch, batch_in_epoch=pos, wall_s=time.time() - started)
        card = _card(opts, counts, valid_counts, meta, model)
        save_checkpoint(out / "last", model, src_tok, tgt_tok, card)
        _save_train_state(out, opt, meta)
        if tag:
            save_checkpoint(out / tag, model, src_tok, tgt_tok, card)
            kept = sorted(out.glob("step_*"), key=lambda p: int(p.name.split("_")[1]))
            for old in kept[: -opts.keep]:
                for f in old.iterdir():
                    f.unlink()
                old.rmdir()

    done = False
    while not done:
        batches = make_batches(examples, opts.max_tokens, seed=opts.seed * 100003 + epoch)
        while pos < len(batches):
            src, tgt = (t.to(device) for t in collate(examples, batches[pos], c.pad_id))
            pos += 1
            step += 1
            lr = noam_lr(step, c.d_model, opts.warmup, opts.lr_scale)
            for g in opt.param_groups:
                g["lr"] = lr
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_amp):
                logits = model(src, tgt[:, :-1])
            loss = loss_fn(logits, tgt[:, 1:], c.pad_id, opts.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), opts.clip)
            opt.step()
            n_tok = int(tgt[:, 1:].ne(c.pad_id).sum())
            meta["tokens"] += n_tok
            window_tokens += n_tok
            last_loss = float(loss.detach())
            bar.update(1)
            if step % 20 == 0:
                rate = window_tokens / max(time.time() - window_t, 1e-9)
                extra = {}
                if opts.max_minutes:  # tqdm's ETA is for max_steps; this one is for the time budget
                    extra["time_left"] = f"{max(0.0, opts.max_minutes - (time.time() - started) / 60):.0f}m"
                bar.set_postfix(loss=f"{last_loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{rate:.0f}", epoch=epoch, **extra)
                window_tokens, window_t = 0, time.time()
            out_of_time = bool(opts.max_minutes) and (time.time() - started) / 60 >= opts.max_minutes
            if step % opts.valid_every == 0 or step == opts.max_steps or out_of_time:
                vl = evaluate_loss(model, valid, opts.max_tokens, device)
                entry = {"step": step, "train_loss": last_loss, "valid_nll": vl, "wall_s": time.time() - started}
                if chrf_sources:
                    entry["valid_chrf"] = valid_chrf(model, src_tok, tgt_tok, chrf_sources, chrf_refs)
                    if entry["valid_chrf"] > meta.get("best_chrf", -1.0):
                        meta["best_chrf"], meta["best_step"] = entry["valid_chrf"], step
                        save_checkpoint(out / "best", model, src_tok, tgt_tok, _card(opts, counts, valid_counts,
                                                                                      {**meta, "step": step}, model))
                meta["history"].append(entry)
                log.info("step %d train %.3f valid_nll %.3f valid_chrf %s", step, last_loss, vl,
                         entry.get("valid_chrf", "-"))
                with open(out / "log.jsonl", "a") as f:
                    f.write(json.dumps(entry) + "\n")
            if step % opts.save_every == 0 or step >= opts.max_steps or out_of_time:
                checkpoint(f"step_{step}")
            if step >= opts.max_steps or out_of_time:
                done = True
                break
        else:
            epoch += 1
            pos = 0
    bar.close()
    return out / "last"


def _tokenizers(opts: TrainOptions, out: Path, train_pairs: list[tuple[str, str]]) -> tuple[TextTokenizer, TextTokenizer]:
    """The run's tokenizers: loaded from ``out`` when it has them (resume), else trained on the
    distinct training pairs. A joint vocabulary is one tokenizer saved as both files."""
    if (out / "tokenizer_src.json").exists():
        return TextTokenizer.from_file(out / "tokenizer_src.json"), TextTokenizer.from_file(out / "tokenizer_tgt.json")
    uniq = list(dict.fromkeys(train_pairs))
    if opts.joint_vocab:
        src_tok = tgt_tok = TextTokenizer.train((x for pair in uniq for x in pair), opts.joint_vocab)
    else:
        src_tok = TextTokenizer.train((s for s, _ in uniq), opts.src_vocab)
        tgt_tok = TextTokenizer.train((t for _, t in uniq), opts.tgt_vocab)
    src_tok.save(out / "tokenizer_src.json")
    tgt_tok.save(out / "tokenizer_tgt.json")
    return src_tok, tgt_tok


@torch.no_grad()
def valid_chrf(model: Transformer, src_tok: TextTokenizer, tgt_tok: TextTokenizer, sources: list[str],
               references: list[str], batch_size: int = 64) -> float:
    """sacreBLEU chrF of batched greedy translations of ``sources`` (checkpoint selection)."""
    import sacrebleu

    from core.inference.decoding import greedy_batch

    model.eval()
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    hyps = [""] * len(sources)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for i, ids in zip(chunk, greedy_batch(model, src_tok, tgt_tok, [sources[i] for i in chunk])):
            hyps[i] = tgt_tok.decode(ids)
    model.train()
    return round(sacrebleu.metrics.CHRF().corpus_score(hyps, [references]).score, 2)


def _card(opts: TrainOptions, counts: dict, valid_counts: dict, meta: dict, model: Transformer) -> str:
    c = model.config
    lines = [
        f"# {Path(opts.out).name}",
        "",
        "Korean→English Transformer written from \"Attention Is All You Need\" ("
        + ("pre-LN, a deviation from the paper's post-LN" if c.norm_first else "post-LN")
        + f", {c.positional} positions, "
        + ("one joint Korean+English vocabulary with source embedding, target embedding and output projection tied)."
           if c.share_src_tgt_embed else "tied target embedding/output projection)."),
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
    steps, target tokens, wall time, final train loss and validation NLL history."""
    run = Path(run)
    opts = json.loads((run / "options.json").read_text())
    state = json.loads((run / "train_state.json").read_text())
    history = state.get("history", [])
    return {
        "command": "python -m core train " + " ".join(
            [f"--train {' '.join(opts['train'])}", f"--valid {' '.join(opts['valid'])}"]
            + [f"--{k.replace('_', '-')} {v}" for k, v in opts.items() if k not in ("train", "valid", "extra")]),
        "options": opts,
        "steps": state["step"],
        "epochs_completed": state["epoch"],
        "target_tokens": state["tokens"],
        "wall_minutes": round(state["wall_s"] / 60, 1),
        "final_train_loss": history[-1]["train_loss"] if history else None,
        "final_valid_nll": history[-1]["valid_nll"] if history else None,
        "valid_history": history,
    }


def run_from_args(args) -> int:
    """Entry point of ``python -m core train``."""
    fields = TrainOptions.__dataclass_fields__
    values = {k: getattr(args, k) for k in fields if k != "extra" and getattr(args, k, None) is not None}
    if args.resume:
        last = train(TrainOptions(train=[], valid=[], out=args.out), resume=True, overrides=values)
    else:
        if not values.get("train") or not values.get("valid"):
            raise SystemExit("train: --train and --valid are required (unless --resume)")
        last = train(TrainOptions(**values))
    print(f"checkpoint: {last}")
    return 0


def add_arguments(p) -> None:
    d = TrainOptions(train=[], valid=[], out="")
    p.add_argument("--train", nargs="+", help="PREFIX[*W]: files PREFIX.ko/PREFIX.en, repeated W times")
    p.add_argument("--valid", nargs="+", help="PREFIX: validation pairs")
    p.add_argument("--out", required=True, help="run directory (checkpoints, logs, resume state)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out exactly where it stopped")
    for name in ("src_vocab", "tgt_vocab", "d_model", "n_heads", "layers", "d_ff", "max_len", "max_tokens",
                 "max_steps", "warmup", "seed", "threads", "valid_every", "save_every", "keep", "joint_vocab",
                 "chrf_lines"):
        p.add_argument("--" + name.replace("_", "-"), type=int, default=None, help=f"default {getattr(d, name)}")
    for name in ("dropout", "max_minutes", "lr_scale", "label_smoothing", "clip", "attention_dropout",
                 "activation_dropout"):
        p.add_argument("--" + name.replace("_", "-"), type=float, default=None, help=f"default {getattr(d, name)}")
    p.add_argument("--positional", choices=["sinusoidal", "learned"], default=None)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None)
    p.add_argument("--precision", choices=list(PRECISIONS), default=None,
                   help="bf16: autocast forward pass, fp32 master weights and loss (default fp32)")
    p.add_argument("--norm-first", action="store_const", const=True, default=None,
                   help="pre-LN layers (Nguyen & Salazar 2019) instead of the paper's post-LN")
    p.add_argument("--init-from", default=None, help="warm-start from this checkpoint (fresh optimizer and warm-up)")
