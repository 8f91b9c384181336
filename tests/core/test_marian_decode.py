"""An imported Marian (OPUS-MT) model's output reads as transformers' ``MarianTokenizer.decode``
gives it, in every place that shows text: the translation (CLI and app), the hypotheses, the
beam table and the app's line after each step. Output pieces that the joint ``vocab.json`` has
but ``target.spm`` lacks (the source language's pieces) must not show SentencePiece's ``▁``.

Tiny random models built offline (tests/support/marian.py).
"""

from __future__ import annotations

import html
import json
import random
import re
import shutil

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.live import LiveDecoder
from core.decoding.translate import translate
from gui.state.view_model import ViewModel
from tests.support.marian import build_marian, require_import_extra

SENTENCES = ["나는 학생입니다.", "제발 앉아.", "손대지 마."]


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    """(transformers' MarianTokenizer, path of our imported checkpoint)."""
    require_import_extra()
    from core.checkpoints.marian import import_marian

    root = tmp_path_factory.mktemp("marian-decode")
    _, tok = build_marian(root / "hf", "swish", probe=SENTENCES)
    return tok, import_marian(str(root / "hf"), root / "ours", log=lambda _: None)


def hf_text(tok, ids: list[int]) -> str:
    """What transformers shows for an output: ``decode`` with pad and EOS left out (as our outputs
    never show them) and ``<unk>`` under our label ``[UNK]``."""
    keep = [i for i in ids if i not in (tok.pad_token_id, tok.eos_token_id)]
    return tok.decode(keep).replace(tok.unk_token, "[UNK]")


def source_only_pieces(tok) -> list[int]:
    """Ids of word-start pieces that vocab.json and source.spm have but target.spm lacks."""
    target = {tok.spm_target.id_to_piece(i) for i in range(tok.spm_target.get_piece_size())}
    source = {tok.spm_source.id_to_piece(i) for i in range(tok.spm_source.get_piece_size())}
    ids = [i for p, i in tok.encoder.items() if p.startswith("▁") and len(p) > 1 and p not in target and p in source]
    assert len(ids) >= 3
    return ids


def test_pieces_unknown_to_target_spm_read_as_transformers_reads_them(marian):
    tok, path = marian
    ours = load_checkpoint(path, device="cpu").tgt_tokenizer
    a, b, c = source_only_pieces(tok)[:3]
    for ids in ([a, a], [a, b, c], [a, 1, b], [5, a, 7, 0]):
        assert ours.decode(ids) == hf_text(tok, ids)
        assert "▁" not in ours.decode(ids)
    assert ours.decode([a, a]) == tok.decode([a, a], skip_special_tokens=True)


def test_decode_equals_marian_tokenizer_on_random_outputs(marian):
    """Random outputs over the whole vocabulary, with unk, EOS and pad mixed in: the same text as
    transformers, and without unk the same as its ``skip_special_tokens=True`` (what its
    translation pipeline prints)."""
    tok, path = marian
    ours = load_checkpoint(path, device="cpu").tgt_tokenizer
    rng = random.Random(0)
    v = len(tok.encoder)
    specials = [tok.unk_token_id, tok.eos_token_id, tok.pad_token_id]
    for _ in range(400):
        ids = [rng.choice(specials) if rng.random() < 0.15 else rng.randrange(v) for _ in range(rng.randrange(0, 12))]
        assert ours.decode(ids) == hf_text(tok, ids), (ids, tok.convert_ids_to_tokens(ids))
        if tok.unk_token_id not in ids:
            assert ours.decode(ids) == tok.decode(ids, skip_special_tokens=True)


@pytest.fixture
def says_source_pieces(marian):
    """A fresh load of the checkpoint whose output bias is raised on two source-only pieces, so
    that the model says them (and its output holds ``▁`` pieces target.spm does not know)."""
    tok, path = marian
    ck = load_checkpoint(path, device="cpu")
    a, b = source_only_pieces(tok)[:2]
    with torch.no_grad():
        ck.model.final_logits_bias[a] += 40.0
        ck.model.final_logits_bias[b] += 39.0
    return tok, ck, (a, b)


def test_every_place_that_shows_text_reads_as_transformers(says_source_pieces, monkeypatch, capsys):
    from core.__main__ import main as cli

    tok, ck, (a, b) = says_source_pieces
    text = SENTENCES[1]
    r = translate(ck, text)
    ids = [s.token_id for s in r.steps]
    assert {a, b} & set(ids)  # the case under test: pieces target.spm does not know
    assert r.translation == hf_text(tok, ids) and "▁" not in r.translation
    assert [s.text for s in r.steps] == [hf_text(tok, ids[: k + 1]) for k in range(len(ids))]

    beam = translate(ck, text, beam=2)
    assert [t for t, _, _ in beam.hypotheses] and all("▁" not in t for t, _, _ in beam.hypotheses)
    rows = [row for step in beam.beam_trace for row in step]
    assert rows and all(row.text == hf_text(tok, row.ids) for row in rows)

    monkeypatch.setattr("core.checkpoints.checkpoint.load_checkpoint", lambda *a, **k: ck)
    assert cli(["translate", text, "--checkpoint", "unused"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == hf_text(tok, ids)
    assert cli(["translate", text, "--checkpoint", "unused", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["translation"] == hf_text(tok, ids)

    live = LiveDecoder(ck, text)
    vm = ViewModel()
    for k in range(1, len(ids) + 1):  # the app's line after each step, then the full translation
        live.seek(k)
        vm.set_state(live.state())
        line = vm.translation_html()
        assert f"<b>After step {k}:</b> {html.escape(hf_text(tok, ids[:k]))} " in line
    # the whole text, then the line's end or the sentence score beside it
    assert re.search(
        re.escape(f"<b>Translation:</b> {html.escape(hf_text(tok, ids))}") + "( &nbsp;<span|<br>)", vm.translation_html()
    )


def test_one_decode_makes_every_shown_text(says_source_pieces, monkeypatch):
    """Every text shown goes through the target tokenizer's ``decode``: marking its output marks
    all of them."""
    _, ck, _ = says_source_pieces
    real = ck.tgt_tokenizer.decode
    monkeypatch.setattr(ck.tgt_tokenizer, "decode", lambda ids: f"«{real(ids)}»")
    r = translate(ck, SENTENCES[1], beam=2)
    assert r.translation.startswith("«") and all(s.text.startswith("«") for s in r.steps)
    assert all(t.startswith("«") for t, _, _ in r.hypotheses)
    assert all(row.text.startswith("«") for step in r.beam_trace for row in step)
    vm = ViewModel()
    vm.set_state(r, step=2)
    assert "<b>After step 2:</b> «" in vm.translation_html()


def test_descriptor_names_the_decode_model_and_older_ones_still_read_without_word_marks(marian, tmp_path):
    """The import writes ``"decode_model": "source.spm"`` beside ``"model": "target.spm"``. A
    descriptor from before (no decode_model) joins with target.spm, which is transformers'
    ``use_source_tokenizer=False``: the same text but for the spacing after an ``<unk>``."""
    from core.tokenizers.spm import SentencePieceTokenizer

    tok, path = marian
    desc = json.loads((path / "tokenizer_tgt.json").read_text(encoding="utf-8"))
    assert desc["model"] == "target.spm" and desc["decode_model"] == "source.spm"
    for name in ("target.spm", "vocab.json"):
        shutil.copyfile(path / name, tmp_path / name)
    old = {k: v for k, v in desc.items() if k != "decode_model"}
    (tmp_path / "tokenizer_tgt.json").write_text(json.dumps(old), encoding="utf-8")
    older = SentencePieceTokenizer.from_file(tmp_path / "tokenizer_tgt.json")
    rng = random.Random(1)
    a, b, c = source_only_pieces(tok)[:3]
    for ids in [[a, a], [a, b, c]] + [[rng.randrange(len(tok.encoder)) for _ in range(8)] for _ in range(100)]:
        keep = [i for i in ids if i not in (tok.pad_token_id, tok.eos_token_id)]
        assert older.decode(ids) == tok.decode(keep, use_source_tokenizer=False).replace(tok.unk_token, "[UNK]")
        assert "▁" not in older.decode(ids)
