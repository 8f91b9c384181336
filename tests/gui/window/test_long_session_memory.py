"""A long lecture session: 2,000 operations (translations, stepping the slider both ways, view
switches, head selections) in one window keep the memory flat: the resident set grows by less than
40 MB after the warm-up (leaked results, maps or widgets would grow it by megabytes per hundred)."""

from __future__ import annotations

import os

from tests.support.gui import do, open_window

SENTENCES = ["나는 학생입니다.", "비가 와서 집에 있었어요.", "오늘 날씨가 좋네요.", "고양이가 의자 위에 있어요."]
VIEWS = ["encoder", "decoder", "cross", "masks"]


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def session(qtbot, win, n_ops: int, start: int = 0) -> int:
    done = 0
    i = start
    while done < n_ops:
        i += 1
        if i % 100 == 0:  # a new sentence: a worker round trip and a full redraw
            win.inputs.text.setText(SENTENCES[(i // 100) % len(SENTENCES)])
            do(qtbot, win, win.translate)
        elif i % 7 == 0:
            win.set_view(VIEWS[i % len(VIEWS)])
        elif i % 5 == 0:
            win.select(i % 2, (i // 5) % 2)
        else:
            win.controls.set_position((i * 3) % (win.vm.n_steps + 1))
        done += 1
    return i


def test_two_thousand_operations_keep_memory_flat(qtbot, tiny_checkpoint):
    if not os.path.exists(f"/proc/{os.getpid()}/statm"):
        import pytest

        pytest.skip("needs /proc (Linux) to read the resident set")
    win = open_window(qtbot, tiny_checkpoint)
    win.inputs.text.setText(SENTENCES[0])
    do(qtbot, win, win.translate)
    i = session(qtbot, win, 300)  # warm-up: caches, fonts, every view built once
    before = rss_mb()
    session(qtbot, win, 2000, start=i)
    grown = rss_mb() - before
    assert grown < 40, f"resident set grew by {grown:.1f} MB over 2,000 operations"
