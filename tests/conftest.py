"""Shared fixtures: tiny configs and tokenizers so the suite stays fast on a CPU."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.defaults import DEFAULT_CHECKPOINT  # noqa: E402
from core.tokenizers.bpe import TextTokenizer  # noqa: E402
from core.transformer.config import ModelConfig  # noqa: E402
from core.transformer.model import Transformer  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent
SHIPPED = DEFAULT_CHECKPOINT


def tiny_config(**kw) -> ModelConfig:
    base = dict(src_vocab_size=40, tgt_vocab_size=36, d_model=32, n_heads=4, n_encoder_layers=2,
                n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=64)
    base.update(kw)
    return ModelConfig(**base)


@pytest.fixture(autouse=True)
def no_modal_dialogs(monkeypatch):
    """A modal dialog would block an offscreen test forever: record its text instead."""
    from PySide6 import QtWidgets

    shown: list[str] = []
    for name in ("critical", "warning", "information"):
        monkeypatch.setattr(QtWidgets.QMessageBox, name, lambda *a, **k: shown.append(str(a[2]) if len(a) > 2 else ""))
    return shown


@pytest.fixture
def tiny_model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


@pytest.fixture(scope="session")
def tiny_tokenizers() -> tuple[TextTokenizer, TextTokenizer]:
    ko = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
    en = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()
    return TextTokenizer.train(ko, 300, min_frequency=1), TextTokenizer.train(en, 200, min_frequency=1)


def save_tiny(path: Path, tokenizers, seed: int, **config) -> Path:
    """Save a random-weight :func:`tiny_config` model (``torch.manual_seed(seed)``, ``config``
    overrides) with ``tokenizers`` (source, target) as a checkpoint at ``path``."""
    from core.checkpoints.checkpoint import save_checkpoint

    src_tok, tgt_tok = tokenizers
    torch.manual_seed(seed)
    model = Transformer(tiny_config(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size,
                                    **config)).eval()
    return save_checkpoint(path, model, src_tok, tgt_tok)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, tiny_tokenizers) -> Path:
    """A small random-weight checkpoint with real tokenizers (saved once per session)."""
    return save_tiny(tmp_path_factory.mktemp("ckpt") / "tiny", tiny_tokenizers, seed=1)


def shipped() -> Path:
    """The shipped checkpoint (tests may override with STUDIO_TEST_CHECKPOINT while developing)."""
    return Path(os.environ.get("STUDIO_TEST_CHECKPOINT", SHIPPED))


@pytest.fixture
def window(qtbot, tiny_checkpoint):
    """The main window, shown, with ``tiny_checkpoint`` loaded on the CPU (race-free:
    :func:`tests.gui_support.open_window`); closed after the test."""
    from tests.gui_support import open_window

    win = open_window(qtbot, tiny_checkpoint)
    yield win
    win.close()


@pytest.fixture(scope="session")
def second_checkpoint(tmp_path_factory, tiny_tokenizers) -> Path:
    """Same tokenizers and sizes as ``tiny_checkpoint``, other weights: maps of the same shape."""
    return save_tiny(tmp_path_factory.mktemp("ckpt_b") / "tiny-b", tiny_tokenizers, seed=7)
