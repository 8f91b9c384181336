"""The README's Quick start is what CI runs, every install route in it takes CPU torch, and the
shipped checkpoint is complete."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys

from tests.support import ROOT, SHIPPED

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:bash|sh)?\n(.+?)\n```", section, flags=re.S)


def test_quick_start_is_system_packages_app_and_tests_and_ci_runs_the_test_one():
    cmds = quick_start_commands()
    assert len(cmds) == 3 and all("\n" not in c for c in cmds)
    system, app, tests = cmds
    assert system == "python3 gui/system_deps.py --install"
    assert app.endswith(".venv/bin/python main.py") and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci


def cuda_routes(text: str) -> list[str]:
    """Install commands in ``text`` (fenced blocks and inline code) that could pull PyPI's CUDA torch
    on Linux. A ``pip install`` naming torch must name PyTorch's CPU index; one installing the project
    (``.``, ``-e .``, a wheel) must follow, in the same ``&&`` chain, a CPU-index torch install into the
    same environment (pip then keeps that torch); ``pipx install`` must pass the CPU index in
    ``--pip-args`` and a constraint file pinning a ``+cpu`` torch (with PyPI as a second index, pip
    otherwise takes PyPI's CUDA torch whenever it is newer). ``pip install --user pipx`` installs no torch."""
    spans = re.findall(r"```(?:bash|sh)?\n(.+?)\n```", text, flags=re.S) + [
        " ".join(code.split()) for code in re.findall(r"`([^`]+)`", _prose_without_fences(text))
    ]  # inline code may wrap
    bad = []
    for span in spans:
        for line in span.splitlines():
            cpu_torch_in = set()  # the pip executables that got CPU torch earlier in this chain
            for part in re.split(r"&&|;|\|\|", line):
                argv = shlex.split(part, comments=True)
                if "install" not in argv:
                    continue
                tool = argv[argv.index("install") - 1]
                args = argv[argv.index("install") + 1 :]
                targets = [a for a in args if not a.startswith("-") and "download.pytorch.org" not in a]
                project = any(t == "." or t.startswith(".[") or t.endswith(".whl") for t in targets)
                torch = any(re.match(r"torch\b", t) for t in targets)
                if tool == "pipx":  # both indexes: pip takes the highest torch, so a +cpu pin is needed too
                    pins = re.findall(r"(?:-c|--constraint)[ =](\S+)", part)
                    pinned = any(re.search(r"^torch==[\w.]+\+cpu$", (ROOT / c).read_text(), flags=re.M) for c in pins)
                    if CPU_INDEX not in part or not pinned:
                        bad.append(part.strip())
                elif tool in ("pip", "pip3") or tool.endswith("/pip"):
                    if torch and ("--index-url" not in args or args[args.index("--index-url") + 1] != CPU_INDEX):
                        bad.append(part.strip())
                    elif torch:
                        cpu_torch_in.add(tool)
                    elif (project or "-e" in args) and tool not in cpu_torch_in:
                        bad.append(part.strip())
    return bad


def _prose_without_fences(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def test_every_readme_install_route_takes_cpu_torch():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert cuda_routes(readme) == []
    # Not vacuous: the routes are found (venv, tests, pipx), and the ones that pulled CUDA are caught.
    assert readme.count(CPU_INDEX) >= 3
    old = (
        "```bash\npython3 -m venv .venv && .venv/bin/pip install -q torch==2.13.0 -e . && .venv/bin/python main.py\n```\n"
        f'`pipx install . --pip-args="--extra-index-url {CPU_INDEX}"`\n'
        "`pip wheel . --no-deps -w dist && pipx install dist/attention_studio-*.whl` or `pip install\n"
        "torch==2.13.0 dist/attention_studio-*.whl`; `.venv/bin/pip install -q -e .`"
    )
    assert cuda_routes(old) == [
        ".venv/bin/pip install -q torch==2.13.0 -e .",
        f'pipx install . --pip-args="--extra-index-url {CPU_INDEX}"',
        "pipx install dist/attention_studio-*.whl",
        "pip install torch==2.13.0 dist/attention_studio-*.whl",
        ".venv/bin/pip install -q -e .",
    ]


def test_standalone_build_takes_cpu_torch_unless_asked_for_cuda():
    spec = importlib.util.spec_from_file_location("build_standalone", ROOT / "packaging" / "build_standalone.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    args = build.build_parser().parse_args([])
    assert build.CPU_INDEX == CPU_INDEX
    assert (args.torch_index, args.cuda) == (CPU_INDEX if sys.platform.startswith("linux") else None, False)
    assert build.build_parser().parse_args(["--cuda"]).cuda
    cpu = {"torch": "2.13.0+cpu", "sympy": "1.14.0", "pyside6-essentials": "6.11.3"}
    cuda = {"torch": "2.13.0", "nvidia-cublas": "13.1.1.3", "cuda-bindings": "13.5.0", "triton": "3.7.1"}
    assert build.cuda_packages(cpu) == []
    assert build.cuda_packages(cuda) == ["cuda-bindings", "nvidia-cublas", "triton"]
    assert build.cuda_packages({"torch": "2.13.0+cu130"}) == ["torch"]


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
