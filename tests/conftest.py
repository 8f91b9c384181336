"""Shared pytest fixtures (their helpers: tests/support/): tiny models, tokenizers and checkpoints, and the main window."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.tokenizers.bpe import TextTokenizer
from core.transformer.model import Transformer
from tests.support import FIXTURES, save_tiny, tiny_config


@pytest.fixture(autouse=True)
def no_modal_dialogs(monkeypatch):
    """A modal dialog would block an offscreen test forever: record its text instead."""
    from PySide6 import QtWidgets

    shown: list[str] = []
    for name in ("critical", "warning", "information"):
        monkeypatch.setattr(QtWidgets.QMessageBox, name, lambda *a, **k: shown.append(str(a[2]) if len(a) > 2 else ""))
    return shown


@pytest.fixture(autouse=True)
def collect_between_tests():
    """Once a worker thread has switched cyclic collection to the GUI thread's timer
    (gui/workers/threads.py), collect after each test here, on the test's (the GUI) thread: the
    windows a test closed are freed before the next test starts its threads."""
    yield
    if not gc.isenabled():
        gc.collect()


@pytest.fixture
def tiny_model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


@pytest.fixture(scope="session")
def tiny_tokenizers() -> tuple[TextTokenizer, TextTokenizer]:
    ko = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
    en = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()
    return TextTokenizer.train(ko, 300, min_frequency=1), TextTokenizer.train(en, 200, min_frequency=1)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, tiny_tokenizers) -> Path:
    """A small random-weight checkpoint with real tokenizers (saved once per session)."""
    return save_tiny(tmp_path_factory.mktemp("ckpt") / "tiny", tiny_tokenizers, seed=1)


@pytest.fixture
def window(qtbot, tiny_checkpoint):
    """The main window, shown, with ``tiny_checkpoint`` loaded on the CPU (race-free:
    :func:`tests.support.gui.open_window`); closed after the test."""
    from tests.support.gui import open_window

    win = open_window(qtbot, tiny_checkpoint)
    yield win
    win.close()


@pytest.fixture(scope="session")
def second_checkpoint(tmp_path_factory, tiny_tokenizers) -> Path:
    """Same tokenizers and sizes as ``tiny_checkpoint``, other weights: maps of the same shape."""
    return save_tiny(tmp_path_factory.mktemp("ckpt_b") / "tiny-b", tiny_tokenizers, seed=7)
