"""``main.py --lecture FILE --deck OUT``: numbered 1920 × 1080 PNGs, one PDF page per step and
captions.md, on a tiny model; bad lecture options give one error line."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from PySide6 import QtGui

from tests.gui.lecture.test_lecture_format import TINY_LECTURE, A
from tests.support import ROOT


def _pages_in_pdf(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def test_deck_in_one_command(tiny_checkpoint, tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_LECTURE, encoding="utf-8")
    out = tmp_path / "deck"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run(
        [sys.executable, "main.py", "--checkpoint", str(tiny_checkpoint), "--lecture", str(path), "--deck", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "warning: lecture step 3, head: 9 is out of range" in r.stderr
    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == [f"step-{i:02d}.png" for i in range(1, 5)]
    for p in pngs:
        img = QtGui.QImage(str(p))
        assert (img.width(), img.height()) == (1920, 1080)
    assert _pages_in_pdf((out / "tiny.pdf").read_bytes()) == 4
    md = (out / "captions.md").read_text(encoding="utf-8")
    assert md.count("\n## ") == 4 and "![step 1](step-01.png)" in md
    assert "First caption." in md and "Second caption" in md and "Fourth caption" in md
    assert "⚠ lecture step 3, head: 9 is out of range" in md
    assert f"**Sentence:** {A}" in md and "layer 2 / 2, head 3 / 4" in md  # the sentence, the step, what is drawn
    assert "**Step:** step 2 / " in md and "causal mask OFF" in md
    assert "saved 4 pages" in r.stdout
    assert "propagateSizeHints" not in r.stderr  # the offscreen platform's note for every window is dropped


def test_pdf_page_count_ignores_the_pages_tree():
    assert _pages_in_pdf(b"<< /Type /Pages /Kids [] >> << /Type /Page >> << /Type/Page /Parent 1 0 R >>") == 2


def test_bad_lecture_options(tmp_path):
    from gui import app

    assert app.main(["--deck", str(tmp_path / "out")]) == 2
    assert app.main(["--lecture", str(tmp_path / "missing.toml")]) == 2
    (tmp_path / "x.toml").write_text('[[steps]]\nsentence = "나는 학생입니다."\n', encoding="utf-8")
    assert app.main(["--lecture", str(tmp_path / "x.toml"), "--text", "나는 학생입니다."]) == 2
