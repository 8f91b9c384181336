"""The README's Quick start is what CI runs, and the shipped checkpoint is complete."""

from __future__ import annotations

import re

from .conftest import ROOT, SHIPPED


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:bash|sh)?\n(.+?)\n```", section, flags=re.S)


def test_quick_start_has_two_one_line_commands_and_ci_runs_the_test_one():
    cmds = quick_start_commands()
    assert len(cmds) == 2 and all("\n" not in c for c in cmds)
    app, tests = cmds
    assert "main.py" in app and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci


def test_shipped_checkpoints_are_complete():
    shipped = sorted(p for p in (ROOT / "checkpoints").iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert SHIPPED in shipped
    for ck in shipped:
        names = {p.name for p in ck.iterdir()}
        assert {"config.json", "model.safetensors", "tokenizer_src.json", "tokenizer_tgt.json", "README.md",
                "training.json", "eval.json"} <= names, ck
        assert (ck / "model.safetensors").stat().st_size < 60_000_000
