"""Checkpoint format (safetensors + JSON, no pickle) and tokenizer normalization."""

from __future__ import annotations

import json
import pickle
import shutil
import unicodedata

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.errors import CheckpointError
from core.transformer.model import Transformer
from tests.support import tiny_config


def logits_of(ckpt, src=((5, 6, 7, 2),), tgt=((1, 8, 9),)):
    with torch.no_grad():
        return ckpt.model(torch.tensor(src), torch.tensor(tgt))


def test_round_trip_gives_identical_logits(tiny_checkpoint, tmp_path):
    a = load_checkpoint(tiny_checkpoint, device="cpu")
    out = save_checkpoint(tmp_path / "again", a.model, a.src_tokenizer, a.tgt_tokenizer)
    b = load_checkpoint(out, device="cpu")
    assert torch.equal(logits_of(a), logits_of(b))
    assert b.model.generator.weight is b.model.tgt_embed.weight  # tying survives the round trip
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md",
        "config.json",
        "manifest.json",
        "model.safetensors",
        "tokenizer_src.json",
        "tokenizer_tgt.json",
    ]


def test_gpu_saved_weights_load_on_cpu(tiny_checkpoint, tmp_path, monkeypatch):
    # Simulate weights written from a CUDA model: safetensors stores plain bytes without device,
    # so we check the file carries no device and that device="cpu" never touches CUDA.
    from safetensors import safe_open

    with safe_open(str(tiny_checkpoint / "model.safetensors"), framework="pt") as f:
        assert "device" not in (f.metadata() or {})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    assert next(ck.model.parameters()).device.type == "cpu"
    assert load_checkpoint(tiny_checkpoint, device="auto").device.type == "cpu"
    with pytest.raises(ValueError, match="no CUDA GPU"):
        load_checkpoint(tiny_checkpoint, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU to write weights from CUDA")
def test_real_gpu_saved_checkpoint_loads_on_cpu(tiny_checkpoint, tmp_path):
    ck = load_checkpoint(tiny_checkpoint, device="cuda")
    out = save_checkpoint(tmp_path / "gpu", ck.model, ck.src_tokenizer, ck.tgt_tokenizer)
    assert next(load_checkpoint(out, device="cpu").model.parameters()).device.type == "cpu"


def corrupt(tiny_checkpoint, tmp_path, how):
    d = tmp_path / "bad"
    shutil.copytree(tiny_checkpoint, d)
    how(d)
    return d


class Evil:
    def __reduce__(self):
        return (exec, ("open('PWNED','w').write('x')",))


BAD_CHECKPOINTS = [
    ("missing weights", lambda d: (d / "model.safetensors").unlink(), "model.safetensors: missing"),
    (
        "truncated",
        lambda d: (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:500]),
        "model.safetensors: not a readable safetensors",
    ),
    (
        "random bytes",
        lambda d: (d / "model.safetensors").write_bytes(bytes(range(256)) * 40),
        "model.safetensors: not a readable safetensors",
    ),
    ("bad json", lambda d: (d / "config.json").write_text("{d_model: 32"), "config.json: invalid JSON"),
    (
        "wrong type",
        lambda d: (d / "config.json").write_text(json.dumps({**json.loads((d / "config.json").read_text()), "d_model": "big"})),
        "d_model must be int",
    ),
    (
        "shape mismatch",
        lambda d: (d / "config.json").write_text(json.dumps({**json.loads((d / "config.json").read_text()), "d_ff": 48})),
        "has shape",
    ),
    ("stray pickle", lambda d: (d / "model.pt").write_bytes(pickle.dumps(Evil())), "pickle-style file"),
    ("vocab mismatch", lambda d: shutil.copy(d / "tokenizer_src.json", d / "tokenizer_tgt.json"), "vocabulary has"),
    ("missing tokenizer", lambda d: (d / "tokenizer_src.json").unlink(), "tokenizer_src.json: missing"),
    # sizes that would exhaust the machine or hang building layers: refused before any allocation
    ("n_heads 1e9", lambda d: set_config(d, n_heads=10**9), "n_heads 1,000,000,000 is larger than"),
    ("max_len 1e9", lambda d: set_config(d, max_len=10**9), "max_len 1,000,000,000 is larger than"),
    ("d_model 2e9", lambda d: set_config(d, d_model=2 * 10**9), "d_model 2,000,000,000 is larger than"),
    ("1e6 encoder layers", lambda d: set_config(d, n_encoder_layers=10**6), "n_encoder_layers 1,000,000 is larger"),
    (
        "more than the memory",
        lambda d: set_config(d, d_model=16384, n_heads=16, d_ff=131072, n_encoder_layers=250, n_decoder_layers=250),
        "more than half of this machine's",
    ),
    ("deep json", lambda d: (d / "config.json").write_text("[" * 200_000 + "]" * 200_000), "nested too deeply"),
    (
        "tokenizer of the wrong kind",
        lambda d: (d / "tokenizer_tgt.json").write_text('{"model": {"type": "nope"}}'),
        "tokenizer_tgt.json: not a valid tokenizer",
    ),
    (
        "huge tensor header",
        lambda d: (d / "model.safetensors").write_bytes(huge_header()),
        "model.safetensors: not a readable safetensors",
    ),
    ("symlink loop", lambda d: ((d / "config.json").unlink(), (d / "config.json").symlink_to(d / "config.json")), "config.json"),
]


def set_config(d, **values):
    (d / "config.json").write_text(json.dumps({**json.loads((d / "config.json").read_text()), **values}))


def huge_header() -> bytes:
    """A safetensors file whose header claims a 10^12-element tensor over 16 bytes of data."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [10**12], "data_offsets": [0, 4 * 10**12]}}).encode()
    return len(header).to_bytes(8, "little") + header + b"\0" * 16


@pytest.mark.parametrize("name,how,msg", BAD_CHECKPOINTS)
def test_bad_checkpoints_raise_project_error(tiny_checkpoint, tmp_path, monkeypatch, name, how, msg):
    monkeypatch.chdir(tmp_path)
    d = corrupt(tiny_checkpoint, tmp_path, how)
    with pytest.raises(CheckpointError, match=msg):
        load_checkpoint(d, device="cpu")
    assert not (tmp_path / "PWNED").exists()


def test_not_a_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no such directory"):
        load_checkpoint(tmp_path / "nope")
    (tmp_path / "weights.pth").write_bytes(b"\x80\x04")
    with pytest.raises(CheckpointError, match="pickle files are never loaded"):
        load_checkpoint(tmp_path / "weights.pth")


def test_untied_and_shared_variants_round_trip(tmp_path, tiny_tokenizers):
    src_tok, tgt_tok = tiny_tokenizers
    for kw in ({"tie_output": False}, {"positional": "learned"}):
        cfg = tiny_config(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, **kw)
        model = Transformer(cfg).eval()
        out = save_checkpoint(tmp_path / str(kw), model, src_tok, tgt_tok)
        loaded = load_checkpoint(out, "cpu")
        saved, back = model.state_dict(), loaded.model.state_dict()
        assert saved.keys() == back.keys() and all(torch.equal(saved[k], back[k]) for k in saved)  # bit for bit
        # the loaded model multiplies column-major weights (another BLAS summation order): float32 rounding only
        torch.testing.assert_close(logits_of(loaded), logits_of(type("C", (), {"model": model})), atol=1e-5, rtol=1e-5)


def test_loaded_fp32_model_has_column_major_linears_with_ties_kept(tmp_path, tiny_tokenizers):
    src_tok, tgt_tok = tiny_tokenizers
    cfg = tiny_config(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, share_src_tgt_embed=False)
    model = Transformer(cfg).eval()
    out = save_checkpoint(tmp_path / "ck", model, src_tok, tgt_tok)
    loaded = load_checkpoint(out, "cpu").model
    linears = [m for m in loaded.modules() if isinstance(m, torch.nn.Linear)]
    wide = [m for m in linears if m.out_features >= m.in_features]  # streamed along their outputs
    assert wide and all(m.weight.t().is_contiguous() and not m.weight.is_contiguous() for m in wide)
    narrow = [m for m in linears if m.out_features < m.in_features]  # the FFN's second layer: its inputs
    assert narrow and all(m.weight.is_contiguous() for m in narrow)
    assert loaded.generator.weight is loaded.tgt_embed.weight  # the output projection is still tied
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), loaded.state_dict().values()))


def test_nfd_and_nfc_give_same_ids(tiny_tokenizers):
    src_tok, _ = tiny_tokenizers
    nfc = "한국어 형태소"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc and len(nfd) > len(nfc)
    assert src_tok.encode(nfd).ids == src_tok.encode(nfc).ids
    assert src_tok.encode(nfc).ids  # not empty


def test_unknown_characters_are_visible_unk_not_dropped(tiny_tokenizers):
    src_tok, _ = tiny_tokenizers
    enc = src_tok.encode("나 😀 ☃")
    assert enc.tokens.count("[UNK]") == 2
    assert src_tok.normalize("１２３！  a\n\tb") == "123! a b"


def test_special_token_ids_are_fixed(tiny_tokenizers):
    for tok in tiny_tokenizers:
        assert [tok.id_to_token(i) for i in range(4)] == ["[PAD]", "[BOS]", "[EOS]", "[UNK]"]


def test_an_exception_from_progress_propagates_unchanged(tiny_checkpoint):
    """A caller cancels a load by raising from its progress callback: that exception comes back,
    not a CheckpointError calling the file unreadable (an empty message used to raise IndexError)."""

    class Stop(Exception):
        pass

    def progress(message, fraction):
        if message.startswith("reading weights"):
            raise Stop()

    with pytest.raises(Stop):
        load_checkpoint(tiny_checkpoint, device="cpu", progress=progress)
    seen = []
    ck = load_checkpoint(tiny_checkpoint, device="cpu", progress=lambda m, f: seen.append(f))
    assert ck.config.d_model > 0 and seen[-1] == 1.0 and seen == sorted(seen)
