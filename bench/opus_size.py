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
import tempfile
import time
from pathlib import Path

import torch

from bench import checkout
from bench.timing import median_time

VOCAB = 65001
TEXT = "그는 매일 아침 공원에서 달린다."


def _spm(lines: list[str], size: int, path: Path) -> list[str]:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=size, model_type="unigram",
                                   character_coverage=0.98, hard_vocab_limit=False, minloglevel=2, num_threads=1)
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
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "MarianTokenizer", "source_lang": "ko", "target_lang": "en"}), encoding="utf-8")
    cfg = MarianConfig(vocab_size=VOCAB, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                       decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048, activation_function="swish",
                       scale_embedding=True, max_position_embeddings=512, pad_token_id=VOCAB - 1,
                       decoder_start_token_id=VOCAB - 1, eos_token_id=0, forced_eos_token_id=0)
    torch.manual_seed(0)
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 0] = -1e4  # never EOS: both engines decode the full length
    model.save_pretrained(folder)

def bench_opus_size(repeats: int = 3) -> dict:
    """``opus_*`` metrics (see NOTES in bench/run.py); {} with a printed reason when skipped."""
    try:
        import sentencepiece  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        print(f"opus-size benchmark skipped: needs the import extra (pip install -e \".[import]\"): {exc}")
        return {}
    from core.checkpoints.checkpoint import load_checkpoint
    from core.checkpoints.marian import import_marian
    from core.decoding.session import DecodeSession, greedy_batch

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
        torch.set_num_threads(1)
        try:
            session = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
            session.run()
            n = len(session.steps)
            ours_ids = session.output_ids

            def app_path():
                s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
                s.run()

            out["opus_tokens"] = n
            out["opus_ms_per_token_ours_app"] = median_time(app_path, repeats) / n * 1000
            plain = lambda: greedy_batch(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, [TEXT])  # noqa: E731
            out["opus_ms_per_token_ours_plain"] = median_time(plain, repeats) / n * 1000
        finally:
            torch.set_num_threads(threads)
        try:
            import ctranslate2
            from ctranslate2.converters import TransformersConverter
        except ImportError as exc:
            print(f"CTranslate2 comparison skipped: pip install ctranslate2 ({exc})")
            return out
        TransformersConverter(str(tmp / "hf")).convert(str(tmp / "ct2"), force=True)
        tr = ctranslate2.Translator(str(tmp / "ct2"), device="cpu", inter_threads=1, intra_threads=1)
        src_tokens = [ck.src_tokenizer.pieces[i] for i in session.source.ids[:-1]] + ["</s>"]

        def ct2():
            return tr.translate_batch([src_tokens], beam_size=1, max_decoding_length=n)

        hyp = ct2()[0].hypotheses[0]
        out["opus_ct2_tokens"] = len(hyp)
        out["opus_ct2_same_output"] = hyp == [ck.tgt_tokenizer.pieces[i] for i in ours_ids]
        out["opus_ms_per_token_ct2"] = median_time(ct2, repeats) / len(hyp) * 1000
        out["opus_ours_app_vs_ct2_time"] = out["opus_ms_per_token_ours_app"] / out["opus_ms_per_token_ct2"]
        out["opus_ours_plain_vs_ct2_time"] = out["opus_ms_per_token_ours_plain"] / out["opus_ms_per_token_ct2"]
    return out


if __name__ == "__main__":
    res = bench_opus_size()
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}, indent=1))
