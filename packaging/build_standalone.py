"""Build Attention Studio as one folder that runs without Python: ``dist/attention-studio/``.

    python3 packaging/build_standalone.py [--cuda] [--check] [--venv-only]

Steps: a build virtual environment in ``build/standalone/venv`` gets CPU torch (on Linux from
PyTorch's CPU index: PyPI's Linux torch is the CUDA build, about 5.8 GB with its nvidia-* wheels;
``--cuda`` takes that one instead), the wheel of this
checkout (so the bundle holds exactly what the wheel ships: the default model, the font, the icon)
and PyInstaller; PyInstaller then freezes ``gui.app:main`` with Qt, torch and the ``checkpoints`` and
``assets`` data packages into ``dist/attention-studio/`` (start it with ``dist/attention-studio/attention-studio``).
The entry script is written into build/, away from the checkout, so that the installed packages are
frozen rather than the source tree. The same script runs on Windows and macOS (docs/install.md says
what each needs); it builds for the system it runs on.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

REPO = Path.cwd()
NAME = "attention-studio"
ENTRY = (
    '"""Standalone Attention Studio: the same main as the attention-studio command."""\n'
    "import sys\n\nfrom gui.app import main\n\nif __name__ == '__main__':\n    sys.exit(main())\n"
)


# PyTorch's CPU-only wheels; Linux only: PyPI's Windows and macOS torch wheels are already CPU-only.
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Distributions that only a CUDA torch pulls in (nvidia-cublas, cuda-bindings, triton, ...).
CUDA_PREFIXES = ("nvidia-", "cuda-", "triton")


def run(*cmd: str | Path, cwd: Path | None = None, env: dict | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=cwd, env=env)


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def installed(py: Path) -> dict[str, str] | None:
    """The build venv's distributions, name (lower case) -> version, from ``pip list``; None when
    its pip does not run (a venv left half-made)."""
    out = subprocess.run([str(py), "-m", "pip", "list", "--format=json"], capture_output=True, text=True)
    return {d["name"].lower(): d["version"] for d in json.loads(out.stdout)} if out.returncode == 0 else None


def cuda_packages(dists: dict[str, str]) -> list[str]:
    """The CUDA-only distributions among ``dists``, and torch itself when its version says +cuNNN."""
    names = [n for n in dists if n.startswith(CUDA_PREFIXES)]
    return sorted(names + (["torch"] if "+cu" in dists.get("torch", "") else []))


def largest(folder: Path, n: int = 6) -> list[tuple[str, float]]:
    """The ``n`` largest entries directly under ``folder`` (the bundle's _internal/), as (name, MiB)."""

    def size(entry: Path) -> int:
        files = entry.rglob("*") if entry.is_dir() else [entry]
        return sum(f.stat().st_size for f in files if f.is_file() and not f.is_symlink())

    sizes = sorted(((e.name, size(e)) for e in folder.iterdir()), key=lambda x: -x[1])
    return [(name, b / 2**20) for name, b in sizes[:n]]


def pyinstaller_args(work: Path, dist: Path, icon_png: Path) -> list[str]:
    """PyInstaller's options: one folder, the two data packages (found by importlib.resources at
    run time), a window without a console and the icon on Windows and macOS."""
    args = [
        "--noconfirm",
        "--clean",
        "--onedir",
        "--name",
        NAME,
        "--distpath",
        str(dist),
        "--workpath",
        str(work / "pyinstaller"),
        "--specpath",
        str(work),
        "--collect-data",
        "checkpoints",
        "--collect-data",
        "assets",
        "--hidden-import",
        "checkpoints",
        "--hidden-import",
        "assets",
        "--exclude-module",
        "tkinter",
    ]
    if sys.platform in ("win32", "darwin"):  # Linux ignores both; Pillow turns the PNG into .ico/.icns
        args += ["--windowed", "--icon", str(icon_png)]
    if sys.platform == "darwin":
        args += ["--osx-bundle-identifier", "org.attention-studio.app"]
    return args


def check(exe: Path) -> None:
    """Start the built app from an empty folder, offscreen: it must translate and save a screenshot."""
    with tempfile.TemporaryDirectory() as empty:
        t0 = time.perf_counter()
        run(
            exe,
            "--text",
            "나는 학생입니다.",
            "--screenshot",
            "OUT.png",
            cwd=Path(empty),
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
        if not (Path(empty) / "OUT.png").stat().st_size:
            sys.exit("error: the standalone app wrote an empty OUT.png")
        print(f"standalone check: screenshot saved in {time.perf_counter() - t0:.1f} s")


def build_parser() -> argparse.ArgumentParser:
    """The script's options: CPU torch unless ``--cuda`` (tests/integration/test_readme.py checks the default)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--torch", default="torch==2.13.0", help="torch requirement (default torch==2.13.0)")
    p.add_argument(
        "--torch-index",
        default=CPU_INDEX if sys.platform.startswith("linux") else None,
        help="index torch comes from (default on Linux: PyTorch's CPU index; elsewhere PyPI, already CPU-only)",
    )
    p.add_argument(
        "--cuda", action="store_true", help="bundle PyPI's torch, the CUDA build on Linux (several GB more) instead of CPU torch"
    )
    p.add_argument("--venv-only", action="store_true", help="only make the build venv and list what it holds; no PyInstaller")
    p.add_argument("--dist", default="dist", help="output folder (default dist/)")
    p.add_argument("--check", action="store_true", help="then run it from an empty folder: translate + screenshot")
    return p


def main() -> int:
    args = build_parser().parse_args()
    if not (REPO / "pyproject.toml").is_file():
        sys.exit("error: run from the repository root: python3 packaging/build_standalone.py")
    t0 = time.perf_counter()
    work, dist = REPO / "build" / "standalone", (REPO / args.dist).resolve()
    env_dir = work / "venv"
    py = venv_python(env_dir)
    dists = installed(py) if py.exists() else None
    if py.exists() and (dists is None or bool(cuda_packages(dists)) != args.cuda):  # half-made, or made for the other torch
        print(f"removing {env_dir}: {'half-made' if dists is None else 'made for the other torch'}", flush=True)
        shutil.rmtree(env_dir)
    if not py.exists():
        venv.create(env_dir, with_pip=True)
    if args.cuda:
        run(py, "-m", "pip", "install", "-q", args.torch)
    else:
        # torch alone from its index, so only torch is looked up there; its dependencies (filelock,
        # sympy, ...) come with the wheel's from the default index below.
        index = ["--index-url", args.torch_index] if args.torch_index else []
        run(py, "-m", "pip", "install", "-q", "--no-deps", args.torch, *index)
    shutil.rmtree(REPO / "build" / "lib", ignore_errors=True)  # setuptools never empties it
    shutil.rmtree(work / "wheel", ignore_errors=True)
    run(py, "-m", "pip", "wheel", REPO, "--no-deps", "-q", "-w", work / "wheel")
    wheel = next((work / "wheel").glob("attention_studio-*.whl"))
    extras = ["pillow"] if sys.platform in ("win32", "darwin") else []
    run(py, "-m", "pip", "install", "-q", wheel, "pyinstaller>=6.10", *extras)
    run(py, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", wheel)  # same version, new files
    dists = installed(py) or {}
    cuda = cuda_packages(dists)
    print(f"build venv: torch {dists['torch']}, {len(dists)} distributions, CUDA ones: {', '.join(cuda) or 'none'}")
    if bool(cuda) != args.cuda:
        sys.exit(f"error: {'no CUDA torch' if args.cuda else 'CUDA packages'} in the build venv: {cuda}; delete {env_dir}")
    if args.venv_only:
        print("\n".join(f"  {name} {version}" for name, version in sorted(dists.items())))
        return 0
    entry = work / "entry" / "attention_studio.py"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(ENTRY, encoding="utf-8")
    # From the entry's folder: run from the checkout, PyInstaller would import (and bundle) the source
    # tree's packages, ko-en-base included, instead of the installed wheel's.
    run(
        py, "-m", "PyInstaller", *pyinstaller_args(work, dist, REPO / "assets" / "icons" / f"{NAME}.png"), entry, cwd=entry.parent
    )
    bundled = sorted(p.name for p in (dist / NAME).rglob("checkpoints/*") if p.is_dir())
    if bundled != ["ko-en-nc"]:
        sys.exit(f"error: the bundle holds the models {bundled}, expected only the wheel's ko-en-nc")
    folder = dist / NAME
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20
    print(f"built {folder} ({size:.0f} MiB) in {time.perf_counter() - t0:.0f} s; start it with {folder / NAME}")
    inside = folder / "_internal" if (folder / "_internal").is_dir() else folder
    print("largest parts: " + ", ".join(f"{name} {mib:.0f} MiB" for name, mib in largest(inside)))
    if args.check:
        check(folder / (NAME + (".exe" if sys.platform == "win32" else "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
