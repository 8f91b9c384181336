"""Lecture files (gui/state/lecture.py, lecture_toml.py, lecture_pages.py) and lectures in the window
(gui/window/lecture.py, lecture_inputs.py, lecture_screen.py):

- the format: fields, defaults, problems named by step and field (the lecture still opens), a
  saved step read back by ``tomllib``;
- ``main.py --lecture``: Present mode steps through the lecture with the keys a presenter's clicker
  sends (Page Down / Up, → / ←), each step the live model's own result with its caption;
- ``main.py --lecture FILE --deck OUT``: numbered 1920 × 1080 PNGs, one PDF page per step and
  captions.md, on a tiny model;
- the shipped lecture (docs/lectures/attention-is-all-you-need.toml): valid on the shipped model,
  and every number or aligned word its captions name is what the shipped model computes.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest
import torch
from PySide6 import QtCore, QtGui, QtWidgets

from core.transformer.config import ModelConfig
from gui.state.lecture import LectureError, LectureStep, check_lecture, load_lecture, parse_lecture
from gui.state.lecture_toml import append_step, step_toml
from tests.support import ROOT, shipped, tiny_config
from tests.support.gui import WORK_TIMEOUT_MS

tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as the lecture files
SHIPPED_LECTURE = ROOT / "docs" / "lectures" / "attention-is-all-you-need.toml"
A, B = "집에 누군가 있어?", "제발 앉아."

TINY_LECTURE = f'''
title = "Tiny lecture"

[[steps]]
title = "Cross-attention"
sentence = "{A}"
view = "cross"
layer = 2
head = 3
caption = "First caption."

[[steps]]
sentence = "{B}"
reference = "Please sit down."
causal_mask = false
view = "decoder"
layer = 1
head = 2
step = 2
caption = "Second caption: teacher forcing without the mask."

[[steps]]
sentence = "{A}"
view = "encoder"
head = 9
caption = "never shown"

[[steps]]
sentence = "{B}"
batch_with = "{A}"
view = "masks"
mask = 3
caption = "Fourth caption: the padding."
'''


# ---------------------------------------------------------------------------------------------- the format


def test_fields_and_defaults():
    lec = parse_lecture(TINY_LECTURE, "tiny.toml")
    assert lec.title == "Tiny lecture" and len(lec.steps) == 4
    first, second, _, fourth = lec.steps
    assert (first.view, first.layer, first.head, first.decoder_step, first.beam) == ("cross", 2, 3, None, 1)
    assert (second.reference, second.causal_mask, second.decoder_step) == ("Please sit down.", False, 2)
    assert (fourth.batch_with, fourth.view, fourth.mask) == (A, "masks", 3)
    beam = parse_lecture('[[steps]]\nsentence = "나는 학생입니다."\ndecoding = "beam"\n').steps[0]
    assert (beam.decoding, beam.beam, beam.view, beam.layer, beam.head) == ("beam", 4, "cross", 1, 1)


def test_problems_name_the_step_and_field_and_the_lecture_still_opens():
    config = tiny_config()  # 2 + 2 layers, 4 heads
    lec = parse_lecture(TINY_LECTURE)
    problems = check_lecture(lec, config)
    assert problems == ["lecture step 3, head: 9 is out of range 1..4 (the model has 4 heads)"]
    assert [s.ok for s in lec.steps] == [True, True, False, True]
    bad = parse_lecture("""
[[steps]]
sentence = "나는 학생입니다."
haed = 2
[[steps]]
sentence = "나는 학생입니다."
causal_mask = false
layer = "two"
[[steps]]
sentence = "나는 학생입니다."
view = "sideways"
ablate = "2:x"
[[steps]]
sentence = "나는 학생입니다."
reference = "I am a student."
query = 2
force = "The"
[[steps]]
caption = "no sentence"
[[steps]]
sentence = "나는 학생입니다."
view = "encoder"
layer = 3
ablate = "1:5"
ablate_kind = "cross"
""")
    got = check_lecture(bad, config)
    want = [
        "lecture step 1, haed: unknown field (did you mean 'head'?)",
        "lecture step 2, layer: must be a whole number, got 'two'",
        "lecture step 2, causal_mask: false needs a reference",
        "lecture step 3, view: 'sideways' is not one of encoder, decoder, cross, masks",
        "lecture step 3, ablate: item '2:x' is not layer:head",
        "lecture step 4, force_at: force and force_at go together",
        "lecture step 4, force: works on decoded output",
        "lecture step 4, query: works on decoded output",
        "lecture step 5, sentence: missing or empty",
        "lecture step 6, layer: 3 is out of range 1..2 (the model has 2 encoder layers)",
        "lecture step 6, ablate: 1:5: head 5 out of range 1..4",
    ]
    for w in want:
        assert any(p.startswith(w) for p in got), (w, got)
    assert len(got) == len(want), got
    bigger = tiny_config(n_encoder_layers=3)  # another model: its own problems replace the old ones
    assert not any("layer: 3" in p for p in check_lecture(bad, bigger))


def test_files_that_cannot_open(tmp_path):
    with pytest.raises(LectureError, match=r"x\.toml: not valid TOML"):
        parse_lecture("title = \n", "x.toml")
    with pytest.raises(LectureError, match="no steps"):
        parse_lecture('title = "empty"\n')
    with pytest.raises(LectureError, match="cannot read"):
        load_lecture(tmp_path / "missing.toml")


def test_a_saved_step_reads_back(tmp_path):
    step = LectureStep(
        0,
        sentence='그는 "의사"입니다.\\',
        caption="line one\nline two\ttab",
        reference="He is a doctor.",
        causal_mask=False,
        view="decoder",
        layer=2,
        head=3,
        decoder_step=4,
    )
    data = tomllib.loads(step_toml(step))["steps"][0]
    assert data == {
        "sentence": '그는 "의사"입니다.\\',
        "reference": "He is a doctor.",
        "causal_mask": False,
        "view": "decoder",
        "layer": 2,
        "head": 3,
        "step": 4,
        "caption": "line one\nline two\ttab",
    }
    path = tmp_path / "mine.toml"
    assert append_step(path, step, title="Mine") == 1
    beam = LectureStep(0, sentence="나는 학생입니다.", beam=4, decoding="beam", view="masks", mask=2, force="The", force_at=1)
    assert append_step(path, beam) == 2
    lec = load_lecture(path)
    assert lec.title == "Mine" and [s.ok for s in lec.steps] == [True, True]
    again = lec.steps[1]
    assert (again.beam, again.view, again.mask, again.force, again.force_at) == (4, "masks", 2, "The", 1)
    (tmp_path / "broken.toml").write_text("title = [\n", encoding="utf-8")
    with pytest.raises(LectureError):
        append_step(tmp_path / "broken.toml", step)
    assert (tmp_path / "broken.toml").read_text(encoding="utf-8") == "title = [\n"  # left unchanged


# ---------------------------------------------------------------------------------------------- Present mode


def _wait_shown(qtbot, driver, index: int) -> None:
    qtbot.waitUntil(lambda: driver.done and driver.index == index, timeout=WORK_TIMEOUT_MS)


def _press(qtbot, widget, key) -> None:
    qtbot.keyClick(widget, key)


def test_clicker_keys_step_through_the_lecture_in_present_mode(qtbot, window, tiny_checkpoint, tmp_path):
    from gui.window.lecture import open_lecture

    path = tmp_path / "tiny.toml"
    path.write_text(TINY_LECTURE, encoding="utf-8")
    lecture = load_lecture(path)
    driver = open_lecture(window, lecture)
    _wait_shown(qtbot, driver, 0)
    pw = window.present_window
    assert pw is not None and pw.isVisible()
    keys = QtCore.Qt.Key

    def shown() -> tuple:
        vm = window.vm
        caption = driver.bar_label.text()
        return (vm.result.source.text, vm.kind, tuple(vm.selected), vm.step, pw.caption.text(), caption)

    text, kind, selected, _, present_caption, _ = shown()
    assert (text, kind, selected) == (A, "cross", (1, 2))
    assert A in present_caption
    assert "First caption." in driver.page.caption and "layer 2 / 2, head 3 / 4" in driver.page.drawn
    header, caption = [
        w.text() for w in pw.findChildren(type(pw.caption)) if "Lecture ·" in w.text() or "First caption." in w.text()
    ]
    assert "1 / 4" in header and "First caption." in caption

    _press(qtbot, pw, keys.Key_PageDown)  # what a clicker's "next" sends
    _wait_shown(qtbot, driver, 1)
    text, kind, selected, step, present_caption, bar = shown()
    assert (text, kind, selected, step) == (B, "decoder", (0, 1), 2)
    assert window.vm.teacher_forced and window.result.causal is False  # the live model's own mask-off pass
    assert "Second caption" in bar and "2 / 4" in bar and B in present_caption
    assert "causal mask OFF" in driver.page.drawn and "mean NLL" in driver.page.note
    # each reference token's probability, as the slide quotes it, against one teacher-forced pass of the
    # model without the causal mask (what this step asked for), computed here
    r, model = window.vm.result, window.worker.checkpoint.model
    ref = [st.token_id for st in r.steps]
    c = model.config
    with torch.inference_mode():
        src = torch.tensor([r.source.ids])
        enc = model.encode(src)
        logits = model.decode(torch.tensor([[c.start_id] + ref[:-1]]), enc.memory, enc.src_key_padding_mask, causal=False).logits[
            0
        ]
    probs = logits.float().softmax(-1)[torch.arange(len(ref)), torch.tensor(ref)].tolist()
    line = [x for x in driver.page.note.splitlines() if x.startswith("p(reference token) at each position: ")]
    assert len(line) == 1 and len(ref) >= 2
    assert line[0].split(": ", 1)[1].split(" · ") == [f"{st.token} {p:.2f}" for st, p in zip(r.steps, probs)]

    _press(qtbot, pw, keys.Key_Right)  # the wrong step: its problem is the caption, the lecture goes on
    _wait_shown(qtbot, driver, 2)
    assert "lecture step 3, head: 9 is out of range 1..4" in driver.bar_label.text()
    assert driver.page.error and window.vm.result.source.text == B  # nothing of the wrong step ran

    _press(qtbot, pw, keys.Key_Right)
    _wait_shown(qtbot, driver, 3)
    text, kind, selected, _, _, bar = shown()
    assert (text, kind, selected) == (B, "masks", (2, 0)) and "Fourth caption" in bar
    assert len(window.vm.state.batch) == 2 and "encoder key mask" in driver.page.drawn

    _press(qtbot, pw, keys.Key_Right)  # past the end: stays on the last step
    _wait_shown(qtbot, driver, 3)
    _press(qtbot, pw, keys.Key_PageUp)
    _wait_shown(qtbot, driver, 2)
    _press(qtbot, pw, keys.Key_Left)
    _wait_shown(qtbot, driver, 1)
    assert shown()[:3] == (B, "decoder", (0, 1))
    _press(qtbot, window, keys.Key_PageUp)  # the main window: Page Up / Down step the lecture too
    _wait_shown(qtbot, driver, 0)
    assert shown()[:3] == (A, "cross", (1, 2))
    end = window.vm.step
    _press(qtbot, pw, keys.Key_Up)  # ↓ ↑ step the decoder of the step shown
    qtbot.waitUntil(lambda: window.vm.step == end - 1, timeout=WORK_TIMEOUT_MS)
    _press(qtbot, pw, keys.Key_Down)
    qtbot.waitUntil(lambda: window.vm.step == end, timeout=WORK_TIMEOUT_MS)
    assert driver.index == 0
    driver.detach()


def test_fast_clicks_runtime_problems_and_present_mode_reopened(qtbot, window, tmp_path):
    from gui.window.lecture import open_lecture
    from gui.window.view_menu import toggle_present

    text = (
        TINY_LECTURE
        + f"""
[[steps]]
sentence = "{A}"
view = "cross"
query = 99
caption = "Fifth caption."

[[steps]]
sentence = "{A}"
view = "encoder"
layer = 2
head = 4
query = 2
caption = "Sixth caption."
"""
    )
    (tmp_path / "t.toml").write_text(text, encoding="utf-8")
    driver = open_lecture(window, load_lecture(tmp_path / "t.toml"))
    _wait_shown(qtbot, driver, 0)
    pw = window.present_window
    for _ in range(4):  # faster than the model answers: only the last step is applied
        qtbot.keyClick(pw, QtCore.Qt.Key.Key_PageDown)
    _wait_shown(qtbot, driver, 4)
    assert "lecture step 5, query: 99 is out of range 1.." in driver.page.error  # found when it ran
    assert window.vm.result.source.text == A
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Escape)  # leave Present mode, then open it again (F11)
    assert not pw.isVisible()
    toggle_present(window)
    again = window.present_window
    assert again is not pw
    qtbot.keyClick(again, QtCore.Qt.Key.Key_PageDown)
    _wait_shown(qtbot, driver, 5)
    ip = window.inside_panel
    assert (ip.step.kind, ip.step.layer, ip.step.head, ip.step.query) == ("enc", 2, 4, 2)  # the tab's own answer
    assert window.vm.kind == "encoder" and tuple(window.vm.selected) == (1, 3)
    assert "q·k/√d_k\t" in driver.page.note and ip.step.query_token in driver.page.note
    labels = [w.text() for w in again.findChildren(type(again.caption))]
    assert any("Sixth caption." in t for t in labels) and any("Lecture · 6 / 6" in t for t in labels)
    driver.detach()


def test_save_state_as_lecture_step(qtbot, window, tmp_path, monkeypatch):
    from gui.window.lecture_inputs import step_from_window
    from tests.support.gui import do

    window.inputs.text.setText(A)
    window.inputs.reference.setText("Is anyone home?")
    do(qtbot, window, window.translate)
    window.set_view("decoder")
    window.select(1, 3)
    window.controls.set_position(2)
    step = step_from_window(window)
    assert (step.sentence, step.reference, step.view, step.layer, step.head, step.decoder_step) == (
        A,
        "Is anyone home?",
        "decoder",
        2,
        4,
        2,
    )
    path = tmp_path / "saved.toml"
    append_step(path, step)
    again = load_lecture(path).steps[0]
    assert (again.sentence, again.reference, again.view, again.layer, again.head, again.decoder_step) == (
        A,
        "Is anyone home?",
        "decoder",
        2,
        4,
        2,
    )
    action = next(a for a in window.menuBar().actions()[0].menu().actions() if a.text() == "Save state as &lecture step…")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "*.toml"))
    action.trigger()  # the menu: appended as step 2 of the same file
    assert [s.decoder_step for s in load_lecture(path).steps] == [2, 2]
    assert "saved as step 2" in window.status.currentMessage()


# ---------------------------------------------------------------------------------------------- the deck


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


# ---------------------------------------------------------------------------------------------- the shipped lecture

TRAIN = "나는 기차를 타고 학교에 가요."
CAT = "고양이가 의자 위에서 자고 있다."
APPLE = "나는 지금 사과를 먹고 있어요."


@pytest.fixture(scope="module")
def model():
    from core.checkpoints.checkpoint import load_checkpoint

    torch.set_num_threads(1)
    return load_checkpoint(shipped(), device="cpu")


@pytest.fixture(scope="module")
def train(model):
    from core.decoding.translate import translate

    r = translate(model, TRAIN)
    assert r.translation == "I go to school by train."
    return r


def near(value: float, claimed: str) -> str:
    """``value`` rounded to as many decimals as ``claimed`` is exactly the caption's text (a weight
    of 0.9943 is ".99", never "1.00", as the slide's own cells print it); returns ``claimed``."""
    decimals = len(claimed.split(".")[1]) if "." in claimed else 0
    shown = f"{value:.{decimals}f}".replace("-", "−")
    assert shown in (claimed, claimed.replace("−", "")) or float(shown.replace("−", "-")) == float(claimed.replace("−", "-")), (
        value,
        shown,
        claimed,
    )
    return claimed


def row(maps, kind: str, layer: int, head: int, query: str, tokens=None):
    """The (1-based layer/head) row of ``query`` as {key token: weight} and its argmax key."""
    w = {"enc": maps.encoder_self, "cross": maps.cross, "dec": maps.decoder_self}[kind][layer - 1, head - 1]
    rows = maps.src_tokens if kind == "enc" else maps.tgt_tokens
    keys = maps.tgt_tokens if kind == "dec" else maps.src_tokens
    r = w[rows.index(query)]
    return {k: float(r[j]) for j, k in enumerate(keys)}, keys[int(r.argmax())]


def aligned(maps, kind, layer, head, query, key, claimed) -> str:
    weights, top = row(maps, kind, layer, head, query)
    assert top == key, (kind, layer, head, query, top, key)
    return near(weights[key], claimed)


def check_tokens(model, train):
    c = model.config
    assert train.maps.src_tokens == ["▁나는", "▁기", "차", "를", "▁타고", "▁학교에", "▁가", "요", ".", "[EOS]"]
    assert (c.src_vocab_size, c.tgt_vocab_size, c.d_model) == (8000, 8000, 256)
    m = model.model
    assert m.src_embed.weight is m.tgt_embed.weight is m.generator.weight  # one table for all three
    assert c.scale_embedding and m.embed_scale == 16.0
    return ["10", "9", "8,000", "256", "256", "16", aligned(train.maps, "enc", 1, 1, "▁기", "차", "0.99")]


def check_positions(model, train):
    from core.decoding.translate import translate

    r = translate(model, "나는 커피를 좋아하고 그는 커피를 싫어해.")
    assert r.translation == "I like coffee and he hates coffee."
    toks = r.maps.src_tokens
    assert [i + 1 for i, t in enumerate(toks) if t == "▁커피"] == [2, 7]
    assert model.config.positional == "sinusoidal" and model.config.d_model // 2 == 128
    w = r.maps.encoder_self[0, 3]  # layer 1, head 4
    assert int(w[1].argmax()) == 1 and int(w[6].argmax()) == 6  # each ▁커피 on itself
    return [
        "2",
        "7",
        "128",
        near(float(w[1, 1]), "0.56"),
        "2",
        near(float(w[1, 6]), "0.04"),
        near(float(w[6, 6]), "0.82"),
        "7",
        near(float(w[6, 1]), "0.00"),
    ]


def check_encoder(model, train):
    m = train.maps
    return [
        aligned(m, "enc", 2, 4, "▁기", "를", "0.76"),
        aligned(m, "enc", 2, 4, "차", "를", "0.69"),
        aligned(m, "enc", 2, 4, "를", "▁타고", "0.56"),
    ]


def _forced(model, causal: bool):
    from core.decoding.translate import translate

    return translate(model, TRAIN, reference="I go to school by train.", causal=causal)


def check_causal(model, train):
    r = _forced(model, True)
    t = r.maps.decoder_self.shape[-1]
    assert bool(torch.triu(torch.ones(t, t, dtype=torch.bool), 1).eq(r.maps.causal_mask).all())
    assert float(r.maps.decoder_self[..., torch.triu(torch.ones(t, t, dtype=torch.bool), 1)].max()) == 0.0
    return [near(r.loss, "0.31")]


def check_causal_off(model, train):
    on, off = _forced(model, True), _forced(model, False)
    w = off.maps.decoder_self
    t = w.shape[-1]
    share = w[:, :, range(t - 1), range(1, t)]
    return [
        near(100 * float(share.mean()), "16"),
        near(100 * float(share[2, 0].mean()), "29"),
        near(on.loss, "0.31"),
        near(off.loss, "1.40"),
    ]


def check_padding(model, train):
    from core.decoding.batch import translate_batch
    from core.decoding.translate import translate

    short, long = translate_batch(model, ["나는 학생입니다.", TRAIN])
    pad = short.maps.src_key_padding_mask
    assert len(long.maps.src_tokens) == 10 and int(pad.sum()) == 5 and short.source.n_real == 5
    assert float(short.maps.encoder_self[..., pad].abs().max()) == 0.0  # exactly 0, every layer and head
    assert float(short.maps.cross[..., pad].abs().max()) == 0.0
    assert short.translation == translate(model, "나는 학생입니다.").translation == "I'm a student."
    return ["10", "5", "5", "0"]


def check_step_by_step(model, train):
    from core.decoding.live import LiveDecoder

    live = LiveDecoder(model, TRAIN)
    live.seek(2)
    r = live.state().result
    assert [s.token for s in r.steps] == ["▁I", "▁go"] and r.maps.tgt_tokens == ["[BOS]", "▁I"]
    return ["2", aligned(r.maps, "cross", 4, 1, "▁I", "▁가", "0.88")]


def check_alignment(model, train):
    m = train.maps
    return [
        "1",
        aligned(m, "cross", 1, 1, "▁school", "▁학교에", "1.00"),
        aligned(m, "cross", 1, 1, "▁I", "▁나는", "0.99"),
        aligned(m, "cross", 1, 1, "▁go", "▁가", "0.97"),
        aligned(m, "cross", 1, 1, "▁train", "차", "0.70"),
    ]


def check_next_word(model, train):
    m = train.maps
    weights, _ = row(m, "cross", 4, 1, "▁by")
    return [
        aligned(m, "cross", 4, 1, "▁by", "차", "0.67"),
        near(weights["▁기"], "0.27"),
        aligned(m, "cross", 4, 1, "▁go", "▁학교에", "0.79"),
    ]


def check_inside(model, train):
    from core.analysis.inside import inside_step

    st, _ = inside_step(model, TRAIN, "cross", 4, 1, 6)
    assert st.query_token == "▁by" and st.q.numel() == 64
    order = sorted(range(len(st.key_tokens)), key=lambda i: -float(st.scores[i]))
    assert [st.key_tokens[i] for i in order[:2]] == ["차", "▁기"]
    first, second = order[:2]
    return [
        "6",
        "64",
        near(float(st.scores[first]), "2.84"),
        near(float(st.scores[second]), "1.93"),
        near(float(st.weights[first]), "0.67"),
        near(float(st.weights[second]), "0.27"),
    ]


def check_heads(model, train):
    from core.analysis.head_stats import head_table

    table = {(h.layer, h.head): h for h in head_table(train.maps, "cross")}
    return [near(table[1, 2].entropy, "1.75"), near(table[1, 1].entropy, "0.70"), near(100 * table[1, 2].sink, "43")]


def check_one_head(model, train):
    from core.analysis.ablation import translate_ablated

    heads = [(la, h) for la in range(1, 5) for h in range(1, 5)]
    out = {lh: translate_ablated(model, TRAIN, [lh], "cross").ablated.translation for lh in heads}
    assert out[1, 1] == "I go to school for train."
    changed = [lh for lh in heads if out[lh] != train.translation]
    assert {out[lh] for lh in changed} == {"I go to school for train."}, out  # the one change any head makes
    assert all("school" in t and "train" in t for t in out.values())
    return ["1", "16", str(len(changed)), str(len(heads) - len(changed))]


def check_word_layer(model, train):
    from core.analysis.ablation import translate_ablated

    r = translate_ablated(model, TRAIN, [(1, h) for h in range(1, 5)], "enc")
    assert r.ablated.translation == "I go to school for a train."
    assert translate_ablated(model, TRAIN, [(4, h) for h in range(1, 5)], "enc").ablated.translation == train.translation
    assert train.maps.encoder_self[0, :, 1, 2].max() > 0.9  # a layer-1 head joins ▁기 and 차
    assert model.config.norm_first  # pre-LN: x + Sublayer(LayerNorm(x)) keeps x whatever the sub-layer does
    return ["1"]


def check_teacher_forcing(model, train):
    from core.decoding.translate import translate

    r = translate(model, CAT, reference="The cat is sleeping on the chair.")
    first = r.steps[0]
    assert first.token == "▁The" and first.argmax == "▁A"
    return [near(math.exp(first.logprob), "0.13"), near(r.loss, "0.43")]


def check_free_running(model, train):
    from core.decoding.live import LiveDecoder
    from core.decoding.translate import translate

    live = LiveDecoder(model, CAT)
    live.seek(10**9)
    assert live.state().result.translation == "A cat is sleeping on a chair."
    live.fork(1, model.tgt_tokenizer.encode("The").ids)  # what the app's force does
    free = live.state().result
    assert free.translation == "The cat is sleeping on the chair."
    forced = translate(model, CAT, reference="The cat is sleeping on the chair.")  # the teacher-forcing page
    assert free.maps.tgt_tokens == forced.maps.tgt_tokens
    for kind in ("encoder_self", "decoder_self", "cross"):  # one pass or step by step: the same maps
        assert torch.allclose(getattr(free.maps, kind), getattr(forced.maps, kind), atol=1e-4), kind
    return []


def check_greedy(model, train):
    from core.decoding.translate import translate

    r = translate(model, APPLE)
    assert r.translation == "I'm eating apological apples now."
    tokens = [s.token for s in r.steps]
    i = tokens.index("▁ap")
    assert tokens[i - 1] == "▁eating" and tokens[i + 1 : i + 3] == ["olog", "ical"]
    probs = dict(r.steps[i].top_k)
    assert max(probs, key=probs.get) == "▁ap" and sorted(probs, key=probs.get)[-2] == "▁apple"
    return [near(probs["▁ap"], "0.62"), near(probs["▁apple"], "0.17"), near(r.logprob, "−4.39")]


def check_beam(model, train):
    from core.decoding.translate import translate

    greedy, beam = translate(model, APPLE), translate(model, APPLE, beam=4)
    assert beam.translation == "I'm eating apple now." and beam.beam == 4
    g, b = [s.token for s in greedy.steps], [s.token for s in beam.steps]
    i = next(i for i, (x, y) in enumerate(zip(g, b)) if x != y)
    assert (g[i - 1], g[i], b[i]) == ("▁eating", "▁ap", "▁apple")  # the beam kept the second choice
    assert beam.logprob > greedy.logprob
    return ["4", near(beam.logprob, "−3.08"), near(greedy.logprob, "−4.39")]


CHECKS = {
    "Tokens and embeddings": check_tokens,
    "Positional encodings": check_positions,
    "Encoder self-attention": check_encoder,
    "The causal mask": check_causal,
    "Without the causal mask": check_causal_off,
    "Padding masks in a batch": check_padding,
    "Decoding, one step at a time": check_step_by_step,
    "Cross-attention: alignment": check_alignment,
    "Cross-attention: predicting the next word": check_next_word,
    "Inside one attention step": check_inside,
    "Multi-head diversity": check_heads,
    "Ablation: one head at a time": check_one_head,
    "Ablation: a whole encoder layer": check_word_layer,
    "Teacher forcing": check_teacher_forcing,
    "Free running": check_free_running,
    "Greedy decoding": check_greedy,
    "Beam search": check_beam,
}
# what is not a claim about the model: section numbers, equation, layer / head / row / position names
NOT_CLAIMS = re.compile(r"§[\d.]+|Eq\. \d|layer \d|head \d|heads? of one|row \d|position \d|√256|\b1-based", re.IGNORECASE)


def caption_numbers(caption: str) -> list[str]:
    """The numbers a caption states (1,000s and decimals whole; −2.59 keeps its sign)."""
    text = NOT_CLAIMS.sub(" ", caption)
    return re.findall(r"−?\d[\d,]*(?:\.\d+)?(?<!,)", text)


def test_the_shipped_lecture_is_valid_on_the_shipped_model():
    lecture = load_lecture(SHIPPED_LECTURE)
    config = ModelConfig.from_dict(json.loads((shipped() / "config.json").read_text(encoding="utf-8")))
    assert check_lecture(lecture, config) == []
    assert (config.n_encoder_layers, config.n_decoder_layers, config.n_heads, config.d_model) == (4, 4, 4, 256)
    assert [s.title for s in lecture.steps] == list(CHECKS)  # every step has its check below
    assert all(s.caption for s in lecture.steps)


@pytest.mark.parametrize("title", list(CHECKS))
def test_every_number_and_aligned_word_in_a_caption_is_true(title, model, train):
    step = next(s for s in load_lecture(SHIPPED_LECTURE).steps if s.title == title)
    checked = CHECKS[title](model, train)
    stated = caption_numbers(step.caption)
    missing = [n for n in stated if n not in checked]
    assert not missing, f"{title}: the caption states {missing}, which the check does not verify ({checked})"


def test_caption_numbers():
    assert caption_numbers("log P −2.59 (row 6) in layer 4, head 1 (§3.2.2): 16% of 8,000 and 0.64, Eq. 1") == [
        "−2.59",
        "16",
        "8,000",
        "0.64",
    ]


def test_beam_note_gives_each_hypothesis_its_log_p():
    """The beam page's note carries the log P of the best hypotheses, the greedy one's included (the
    shipped beam slide's caption compares beam's −3.08 with greedy's −4.39); each equals the search's own."""
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.beam import beam_search
    from core.decoding.translate import translate
    from gui.state.lecture_pages import result_note

    ck = load_checkpoint(shipped(), device="cpu")
    sentence = APPLE
    r = translate(ck, sentence, beam=4)
    hyps = beam_search(ck.model, ck.src_tokenizer, sentence, 4)
    assert r.hypothesis_logprobs == pytest.approx([h.logprob for h in hyps])
    assert [t for t, _, _ in r.hypotheses] == [ck.tgt_tokenizer.decode(h.ids) for h in hyps]

    class VM:
        result, teacher_forced, state = r, False, None

        def side_by_side(self):
            return []

    note = result_note(VM(), None)
    for text, lp in zip([t for t, _, _ in r.hypotheses[:3]], r.hypothesis_logprobs[:3]):
        assert f"{text!r}" in note and f"(log P {lp:.2f})" in note
    # the slide's greedy output and its log P
    assert repr("I'm eating apological apples now.") in note and "(log P -4.39)" in note
    assert [round(x, 6) for x in r.hypothesis_logprobs] == [h["logprob"] for h in r.to_json()["hypotheses"]]
