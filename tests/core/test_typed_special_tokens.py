"""User text is text: a typed ``[PAD]``, ``[EOS]``, ``[BOS]`` or ``[UNK]`` is cut into ordinary
pieces, never turned into the control id (which would mask a typed word as padding, end a
sentence early, or put EOS into a forced prefix or a teacher-forced reference)."""

from __future__ import annotations

import json

import pytest

from core.__main__ import main as cli_main
from tests.support import shipped

SPECIAL_IDS = {0, 1, 2, 3}


@pytest.mark.parametrize("typed", ["[PAD]", "[EOS]", "[BOS]"])
def test_a_typed_special_token_is_ordinary_pieces(tiny_tokenizers, typed):
    for tok in tiny_tokenizers:
        enc = tok.encode(f"a {typed} b")
        assert typed not in enc.tokens
        assert not {tok.pad_id, tok.bos_id, tok.eos_id} & set(enc.ids), enc.tokens

    from core.checkpoints.checkpoint import load_checkpoint

    tgt = load_checkpoint(shipped(), device="cpu").tgt_tokenizer
    ids = tgt.encode(f"Apple {typed} please").ids
    assert not {tgt.pad_id, tgt.bos_id, tgt.eos_id} & set(ids)
    assert tgt.decode(ids) == f"Apple {typed} please"  # the typed text comes back as typed


def test_typed_pad_in_a_source_is_not_masked(capsys):
    code = cli_main(["translate", "사과 [PAD] 주세요.", "--checkpoint", str(shipped()), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert "[PAD]" not in out["src_tokens"]
    assert out["src_tokens"][:7] == ["▁사과", "▁", "[", "P", "A", "D", "]"]
    assert out["masks"]["src_key_padding"] == [False] * len(out["src_tokens"])  # nothing typed is masked


def test_typed_eos_in_a_source_prefix_or_reference_injects_no_id(capsys):
    from core.checkpoints.checkpoint import load_checkpoint

    ck = load_checkpoint(shipped(), device="cpu")
    for text in ("[EOS] 사과 주세요.", "[BOS]"):
        assert not {ck.config.eos_id, ck.config.pad_id, ck.config.bos_id} & set(ck.src_tokenizer.encode(text).ids)
    code = cli_main(["translate", "사과 주세요.", "--checkpoint", str(shipped()), "--prefix", "[EOS]", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["translation"].startswith("[EOS]"), out["translation"]
    code = cli_main(["translate", "사과 주세요.", "--checkpoint", str(shipped()), "--reference", "Apple [EOS] please.", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["tgt_tokens"].count("[EOS]") <= 1  # only the EOS the model code appends, never the typed one
