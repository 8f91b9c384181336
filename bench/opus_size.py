"""Greedy speed at the real OPUS-MT ko-en size, ours vs CTranslate2, on the same random weights.

Builds a random Hugging Face ``MarianMTModel`` shaped like Helsinki-NLP/opus-mt-ko-en (6 + 6 layers,
d_model 512, 8 heads, d_ff 2048, swish, vocabulary 65,001) with small SentencePiece models and a
padded 65k vocabulary, imports it with our ``import-marian`` and converts the same folder with
CTranslate2's ``TransformersConverter``. EOS gets a -1e4 logit bias in both, so both engines
decode exactly the same number of tokens. One CPU thread each (the machine is shared).

Needs the ``import`` extra; CTranslate2 is optional (``pip install ctranslate2``). Anything
missing is skipped with a printed reason.
"""

from __future__ import annotations

import io
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from bench import checkout
from bench.timing import round_times

VOCAB = 65001
TEXT = "그는 매일 아침 공원에서 달린다."


def _spm(lines: list[str], size: int, path: Path) -> list[str]:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=buf,
        vocab_size=size,
        model_type="unigram",
        character_coverage=0.98,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
    )
    path.write_bytes(buf.getvalue())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def build_hf(folder: Path) -> None:
    """Random OPUS-MT-sized Marian model + tokenizer files in ``folder`` (save_pretrained layout)."""
    from transformers import MarianConfig, MarianMTModel

    fx = checkout() / "tests" / "fixtures"
    ko = (fx / "tiny.ko").read_text(encoding="utf-8").splitlines()
    en = (fx / "tiny.en").read_text(encoding="utf-8").splitlines()
    for line in (fx / "lecture_sentences.tsv").read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2:
            ko.append(parts[0])
            en.append(parts[1])
    folder.mkdir(parents=True)
    pieces = _spm(ko, 400, folder / "source.spm") + _spm(en, 200, folder / "target.spm")
    vocab = {"</s>": 0, "<unk>": 1}
    for p in pieces:
        if p not in vocab and p not in ("<s>", "<unk>"):
            vocab[p] = len(vocab)
    while len(vocab) < VOCAB - 1:
        vocab[f"▁filler{len(vocab)}"] = len(vocab)
    vocab["<pad>"] = VOCAB - 1
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "ko", "target_lang": "en"}), encoding="utf-8"
    )
    cfg = MarianConfig(
        vocab_size=VOCAB,
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
        activation_function="swish",
        scale_embedding=True,
        max_position_embeddings=512,
        pad_token_id=VOCAB - 1,
        decoder_start_token_id=VOCAB - 1,
        eos_token_id=0,
        forced_eos_token_id=0,
    )
    torch.manual_seed(0)
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 0] = -1e4  # never EOS: both engines decode the full length
    model.save_pretrained(folder)


def _hf_generate(folder: Path, src_ids: list[int], n: int, dtype: torch.dtype = torch.float32):
    """A function running Hugging Face ``generate`` on the Marian model in ``folder`` the way
    bertviz and inseq collect attention (``output_attentions=True``, eager attention, greedy,
    ``n`` new tokens: EOS is suppressed by the model's logits bias), and its output ids."""
    from transformers import MarianMTModel

    model = MarianMTModel.from_pretrained(folder).to(dtype).eval()
    model.set_attn_implementation("eager")  # output_attentions needs the eager path
    inputs = torch.tensor([src_ids])

    def run():
        with torch.inference_mode():
            return model.generate(
                inputs,
                attention_mask=torch.ones_like(inputs),
                max_new_tokens=n,
                min_new_tokens=n,
                num_beams=1,
                do_sample=False,
                output_attentions=True,
                return_dict_in_generate=True,
                forced_eos_token_id=None,
            )  # as ours: no EOS forced at the length limit

    out = run()
    assert out.cross_attentions is not None and len(out.cross_attentions) == n  # every step's weights returned
    return run, out.sequences[0, 1:].tolist()


def _ct2(tmp: Path, ck, src_ids: list[int], n: int):
    """A function translating ``src_ids`` greedily with CTranslate2 float32 (one thread, ``n`` tokens) on
    the Marian model in ``tmp / "hf"``, or None with a printed reason when CTranslate2 is missing."""
    try:
        import ctranslate2
        from ctranslate2.converters import TransformersConverter
    except ImportError as exc:
        print(f"CTranslate2 comparison skipped: pip install ctranslate2 ({exc})")
        return None
    TransformersConverter(str(tmp / "hf")).convert(str(tmp / "ct2"), force=True)
    tr = ctranslate2.Translator(str(tmp / "ct2"), device="cpu", inter_threads=1, intra_threads=1)
    src_tokens = [ck.src_tokenizer.pieces[i] for i in src_ids[:-1]] + ["</s>"]
    return lambda: tr.translate_batch([src_tokens], beam_size=1, max_decoding_length=n)


def profile_summary(ck, top: int = 12) -> list[str]:
    """Markdown lines: the ``top`` functions by own time (cProfile) over three app-path decodes of
    ``TEXT`` with ``ck`` (one thread), after one warm-up."""
    import cProfile
    import pstats

    from core.decoding.session import DecodeSession

    DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT).run()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3):
        DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT).run()
    prof.disable()
    stats = pstats.Stats(prof)
    total = stats.total_tt
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    lines = [
        f"cProfile of 3 app-path decodes at OPUS-MT size ({ck.precision}), {total * 1000:.0f} ms in all:",
        "",
        "| function | calls | own ms | own % |",
        "|---|---|---|---|",
    ]
    for (file, line, name), (_, calls, own, _, _) in rows:
        where = f"{Path(file).name}:{line}" if line else "built-in"
        lines.append(f"| `{name}` ({where}) | {calls} | {own * 1000:.1f} | {own / total * 100:.0f} |")
    return lines


def step_weight_bytes(model) -> int:
    """Bytes of weights one cached greedy decoder step reads (a ``[1, 1]`` query): every decoder layer's
    parameters except the cross-attention key/value projections (the memory's keys and values are
    projected once per sentence), the final LayerNorm, the output projection ``[V, d_model]`` and its
    logits bias. At batch 1 each is read from memory once per step."""
    skip = {id(layer.cross_attn.w_k.weight) for layer in model.decoder_layers}
    skip |= {id(layer.cross_attn.w_k.bias) for layer in model.decoder_layers}
    skip |= {id(layer.cross_attn.w_v.weight) for layer in model.decoder_layers}
    skip |= {id(layer.cross_attn.w_v.bias) for layer in model.decoder_layers}
    params = {id(p): p for p in model.decoder_layers.parameters() if id(p) not in skip}
    for extra in (model.decoder_norm, model.generator):
        if extra is not None:
            params.update({id(p): p for p in extra.parameters()})
    if model.final_logits_bias is not None:
        params[id(model.final_logits_bias)] = model.final_logits_bias
    return sum(p.numel() * p.element_size() for p in params.values())


def read_bandwidth_gb_s(repeats: int = 5) -> float:
    """This machine's memory read bandwidth on the current thread count, in GB/s: the faster of a
    sum over 256 MB of float32 and a matrix-vector product with a 65,001 × 512 float32 matrix
    (the output projection's shape), best of ``repeats`` each (both far larger than the caches)."""
    big = torch.ones(64 * 1024 * 1024)
    w, x = torch.randn(VOCAB, 512), torch.randn(512)
    best = 0.0
    for fn, nbytes in ((big.sum, big.numel() * 4), (lambda: torch.mv(w, x), w.numel() * 4)):
        fn()
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best = max(best, nbytes / (time.perf_counter() - t0) / 1e9)
    return best


def bench_opus_size(repeats: int = 3, profile: bool = False) -> dict:
    """``opus_*`` metrics (see NOTES in bench/run.py); {} with a printed reason when skipped. With
    ``profile``, ``opus_profile`` holds :func:`profile_summary`'s lines for the fp32 app path."""
    try:
        import sentencepiece  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        print(f'opus-size benchmark skipped: needs the import extra (pip install -e ".[import]"): {exc}')
        return {}
    from core.checkpoints.checkpoint import load_checkpoint
    from core.checkpoints.marian import import_marian
    from core.decoding.session import DecodeSession, greedy_batch
    from core.defaults import PRECISIONS

    out: dict = {}
    threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory(prefix="opus-bench-") as tmp:
        tmp = Path(tmp)
        build_hf(tmp / "hf")
        import_marian(str(tmp / "hf"), tmp / "ours", log=lambda m: None)
        out["opus_checkpoint_mb"] = (tmp / "ours" / "model.safetensors").stat().st_size / 1e6
        t0 = time.perf_counter()
        ck = load_checkpoint(tmp / "ours", device="cpu")
        out["opus_load_s"] = time.perf_counter() - t0
        out["opus_params_m"] = ck.model.num_parameters() / 1e6
        cks = {"fp32": ck, **{p: load_checkpoint(tmp / "ours", device="cpu", precision=p) for p in PRECISIONS if p != "fp32"}}
        torch.set_num_threads(1)
        try:
            session = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
            session.run()
            n = len(session.steps)
            ours_ids = session.output_ids
            out["opus_tokens"] = n
            out["opus_step_weight_mb"] = step_weight_bytes(ck.model) / 1e6
            out["mem_read_gb_s_1thread"] = read_bandwidth_gb_s()
            out["opus_floor_ms_per_token"] = out["opus_step_weight_mb"] / out["mem_read_gb_s_1thread"]  # MB / (GB/s) = ms
            c8 = cks["int8-output"]  # the precision whose tokens and attention should equal fp32's
            s8 = DecodeSession(c8.model, c8.src_tokenizer, c8.tgt_tokenizer, TEXT)
            s8.run()
            out["opus_app_int8_output_same_output"] = s8.output_ids == ours_ids
            if s8.output_ids == ours_ids:  # (weights are comparable step by step only along the same tokens)
                out["opus_app_int8_output_attn_max_abs"] = max(
                    float((a - b).abs().max())
                    for x, y in zip(session.steps, s8.steps)
                    for a, b in ((x.self_attn, y.self_attn), (x.cross_attn, y.cross_attn))
                )
            suffix = {"fp32": "", "bf16": "_bf16", "int8": "_int8", "int8-output": "_int8_output"}
            engines = {}  # metric name -> a function decoding TEXT once (n tokens)
            for p, c in cks.items():

                def app_path(c=c):
                    DecodeSession(c.model, c.src_tokenizer, c.tgt_tokenizer, TEXT).run()

                engines[f"ours_app{suffix[p]}"] = app_path
            plain = lambda: greedy_batch(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, [TEXT])  # noqa: E731
            plain8 = lambda: greedy_batch(c8.model, c8.src_tokenizer, c8.tgt_tokenizer, [TEXT])  # noqa: E731
            out["opus_plain_int8_output_same_output"] = plain8() == plain()
            engines.update(ours_plain=plain, ours_plain_int8_output=plain8)
            hf_run, hf_ids = _hf_generate(tmp / "hf", session.source.ids, n)
            out["opus_hf_same_output"] = hf_ids == ours_ids
            engines["hf_generate"] = hf_run
            engines["hf_generate_bf16"], _ = _hf_generate(tmp / "hf", session.source.ids, n, torch.bfloat16)
            ct2 = _ct2(tmp, ck, session.source.ids, n)
            if ct2 is not None:
                hyp = ct2()[0].hypotheses[0]
                out["opus_ct2_tokens"] = len(hyp)
                out["opus_ct2_same_output"] = hyp == [ck.tgt_tokenizer.pieces[i] for i in ours_ids]
                engines["ct2"] = ct2
            torch.set_num_threads(1)  # (again: loading CTranslate2 may reset the OpenMP pool)
            # every engine once per round, in turns: a slower stretch of the shared machine falls on all
            rounds = round_times(list(engines.values()), repeats)
            times = {
                name: [t / (out.get("opus_ct2_tokens", n) if name == "ct2" else n) for t in ts]
                for name, ts in zip(engines, rounds)
            }  # seconds per token
            for name, ts in times.items():
                out[f"opus_ms_per_token_{name}"] = statistics.median(ts) * 1000
            out["mem_read_gb_s_1thread"] = max(out["mem_read_gb_s_1thread"], read_bandwidth_gb_s())
            out["opus_floor_ms_per_token"] = out["opus_step_weight_mb"] / out["mem_read_gb_s_1thread"]

            def ratio(a: str, b: str) -> float:  # median over rounds of a's time per token / b's in that round
                return statistics.median(x / y for x, y in zip(times[a], times[b]))

            out["opus_hf_vs_ours_app_time"] = ratio("hf_generate", "ours_app")
            out["opus_hf_vs_ours_app_int8_output_time"] = ratio("hf_generate", "ours_app_int8_output")
            out["opus_hf_vs_floor_time"] = out["opus_ms_per_token_hf_generate"] / out["opus_floor_ms_per_token"]
            out["opus_hf_bf16_vs_ours_app_bf16_time"] = ratio("hf_generate_bf16", "ours_app_bf16")
            if ct2 is not None:
                for name in engines:
                    if name.startswith("ours_"):
                        out[f"opus_{name}_vs_ct2_time"] = ratio(name, "ct2")
                out["opus_floor_vs_ct2_time"] = out["opus_floor_ms_per_token"] / out["opus_ms_per_token_ct2"]
            if profile:
                out["opus_profile"] = profile_summary(ck)
        finally:
            torch.set_num_threads(threads)
    return out


if __name__ == "__main__":
    res = bench_opus_size()
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}, indent=1))
