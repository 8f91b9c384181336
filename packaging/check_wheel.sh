#!/usr/bin/env bash
# The app as a user installs it: build the wheel, install it (no -e, no PYTHONPATH) into a fresh
# virtual environment in an empty folder outside the checkout, and check there that
# `python -m core translate` gives the default model's translation and `attention-studio` renders a
# screenshot. Prints each step's time. Run by .ci/run; by hand: bash packaging/check_wheel.sh
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
TEXT="나는 학생입니다."
EXPECTED="I'm a student."  # the greedy translation by the default model, checkpoints/ko-en-nc
WORK="$(mktemp -d "${TMPDIR:-/tmp}/studio-wheel.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
unset PYTHONPATH
step() { echo "wheel check: $1 ($((SECONDS - T)) s)"; T=$SECONDS; }
T=$SECONDS

python3 -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
# setuptools builds in the checkout's build/ and never empties build/lib: a module removed since the
# last build would ride along, so start from none.
rm -rf "$REPO/build/lib" "$REPO"/build/bdist.*
"$PY" -m pip wheel "$REPO" --no-deps -w "$WORK/wheels" -q
WHEEL=$(ls "$WORK"/wheels/attention_studio-*.whl)
step "built $(basename "$WHEEL"), $(du -m "$WHEEL" | cut -f1) MB"
# torch alone from PyTorch's CPU index (PyPI's Linux torch is the CUDA build); its dependencies come
# from the default index with the wheel's.
"$PY" -m pip install -q --no-deps torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
"$PY" -m pip install -q "$WHEEL"
step "installed into a fresh venv"

mkdir "$WORK/empty" && cd "$WORK/empty"  # nothing to import from the current folder
export PATH="$WORK/venv/bin:$PATH"
where=$(python -c "import core, checkpoints, assets; print(core.__file__, checkpoints.__file__, assets.__file__)")
case "$where" in *"$REPO"*) echo "wheel check: imported from the checkout: $where" >&2; exit 1;; esac
attention-studio --version && python -m core --version
attention-studio --help >/dev/null && python -m core --help >/dev/null
out=$(python -m core translate "$TEXT")
if [ "$out" != "$EXPECTED" ]; then
  echo "wheel check: python -m core translate printed '$out', expected '$EXPECTED'" >&2; exit 1
fi
step "python -m core translate: $out"
QT_QPA_PLATFORM=offscreen attention-studio --text "$TEXT" --screenshot OUT.png
[ -s OUT.png ] || { echo "wheel check: attention-studio wrote no OUT.png" >&2; exit 1; }
step "attention-studio --screenshot: OUT.png, $(du -k OUT.png | cut -f1) KB"
echo "wheel check: passed"
