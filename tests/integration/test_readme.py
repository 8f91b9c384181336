"""The README's Quick start is what CI runs, and the shipped checkpoint is complete."""

from __future__ import annotations

import re

from tests.support import ROOT, SHIPPED


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
        assert {
            "config.json",
            "model.safetensors",
            "tokenizer_src.json",
            "tokenizer_tgt.json",
            "README.md",
            "training.json",
            "eval.json",
        } <= names, ck
        assert (ck / "model.safetensors").stat().st_size < 60_000_000


README_LIMIT = 10_240  # bytes: the README is the front page; the manual and the history live in docs/


def test_readme_stays_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes (limit {README_LIMIT}): move detail into docs/"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation (backticks included) dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    anchors: set[str] = set()
    counts: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", _prose(text, keep_inline=True), flags=re.M):
        slug = _slug(heading)
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")  # a repeated heading gets -1, -2, …
    return anchors


def _prose(text: str, keep_inline: bool = False) -> str:
    """The text without fenced code blocks (and inline code): a # or [x](y) there is not Markdown."""
    text = re.sub(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", "", text, flags=re.S | re.M)
    return text if keep_inline else re.sub(r"`[^`\n]*`", "``", text)


def test_relative_links_in_readme_and_docs_resolve():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for doc in docs:
        for target in re.findall(r"\]\(([^)\s]+)\)", _prose(doc.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc
            if not dest.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
