"""Every command line in a fenced code block of README.md or docs/*.md that runs this project still
parses, checked without running it:

- ``python -m core SUB …`` (also under ``torchrun … -m core``) against the CLI's own parser
  (``core.__main__.build_parser``);
- ``python main.py …``, ``attention-studio …`` (also ``dist/attention-studio/attention-studio``)
  against the app's parser (``gui.app.build_parser``);
- ``python -m bench…`` and ``python -m core.training.copy_augment …`` against the parser their
  ``main`` builds, caught as it calls ``parse_args`` (before any work; they have no parser function);
- scripts (``python docs/…py``, ``docs/…sh``, ``bash packaging/…sh``): the file exists, and is
  executable when the command runs it directly.

Shell variables set in the same block (``A="…"``, ``C=…; D=…``) are expanded with word splitting,
as the shell would; any other ``$NAME`` becomes the placeholder ``NAME``. A synopsis line (``[--opt]``,
``...``, ``a|b|c``) cannot be parsed as a whole: there every option must exist and every listed
choice must be one of its choices. A line that fails names its file, line and command."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

from tests.support import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
SHELL = {"", "bash", "sh", "shell", "console", "zsh"}  # info strings of shell blocks; ```text is skipped
VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
WRAPPERS = {"nohup", "time", "env", "exec"}
ELISIONS = {"...", "…"}


@dataclass
class Command:
    where: str  # file:line
    text: str  # the logical line as written (continuations joined)
    argv: list[str]  # the statement that runs the project, variables expanded

    def __str__(self) -> str:
        return f"{self.where}: {self.text.strip()}"


def fenced_blocks(text: str) -> list[tuple[int, list[str]]]:
    """Shell blocks: (line number of the first body line, body lines with the fence's indentation removed)."""
    lines, blocks, i = text.split("\n"), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, body, j = m["indent"], m["fence"], [], i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and not lines[j].strip().strip(fence[0])):
            line = lines[j]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            j += 1
        if m["info"].lower() in SHELL:
            blocks.append((i + 2, body))
        i = j + 1
    return blocks


def logical_lines(first: int, body: list[str]) -> list[tuple[int, str]]:
    """Join backslash continuations (as the shell does, also inside double quotes) and the indented
    ``[--option …]`` lines that continue a synopsis."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for n, line in enumerate(body, first):
        if pending is not None:
            pending = (pending[0], pending[1] + line)
        elif out and line[:1].isspace() and line.lstrip().startswith("["):
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
            continue
        else:
            pending = (n, line)
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1])
            continue
        out.append(pending)
        pending = None
    if pending is not None:
        out.append(pending)
    return out


def split_statements(line: str) -> list[str]:
    """Split at ; && || | & outside quotes and drop a # comment (a # that starts a word). A | with no
    space on either side is a synopsis' alternation (``--device auto|cpu|cuda``), not a pipe."""
    parts, cur, quote, i = [], [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            cur.append(c)
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"' and i + 1 < len(line):
                cur.append(line[i + 1])
                i += 1
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == "\\" and i + 1 < len(line):
            cur.append(line[i : i + 2])
            i += 1
        elif c == "#" and (not cur or "".join(cur)[-1:].isspace()):
            break
        elif (
            c == ";"
            or (c == "|" and (line[i + 1 : i + 2] == "|" or line[i - 1 : i].isspace() or line[i + 1 : i + 2].isspace()))
            or (c == "&" and line[i - 1 : i] != ">" and line[i + 1 : i + 2] != ">")
        ):
            parts.append("".join(cur))
            cur = []
            if line[i + 1 : i + 2] == c:  # && or ||
                i += 1
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand(statement: str, env: dict[str, str]) -> str:
    """$NAME and ${NAME} outside single quotes: the block's value, else the placeholder NAME."""
    out, quote, i = [], None, 0
    while i < len(statement):
        c = statement[i]
        if c == "'" and quote != '"':
            quote = None if quote == "'" else "'"
        elif c == '"' and quote != "'":
            quote = None if quote == '"' else '"'
        elif c == "$" and quote != "'" and (m := VAR.match(statement, i)):
            name = m[1] or m[2]
            out.append(env.get(name, name))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def drop_redirections(tokens: list[str]) -> list[str]:
    out, skip = [], False
    for tok in tokens:
        if skip:
            skip = False
        elif re.fullmatch(r"\d?(>>?|<|>&|&>)", tok):
            skip = True
        elif not re.match(r"\d?(>>?|<|&>)\S", tok):
            out.append(tok)
    return out


def is_python(prog: str) -> bool:
    return re.fullmatch(r"python(\d+(\.\d+)?)?|py", Path(prog).name) is not None


def project_statement(tokens: list[str]) -> bool:
    if not tokens:
        return False
    prog, args = tokens[0], tokens[1:]
    if Path(prog).name in ("attention-studio", "torchrun") and (Path(prog).name != "torchrun" or "-m" in args):
        return Path(prog).name == "attention-studio" or project_module(args[args.index("-m") + 1 :][:1])
    if is_python(prog) and args:
        return project_module(args[1:2]) if args[0] == "-m" else args[0].endswith(".py") and not args[0].startswith("-")
    return prog.endswith((".py", ".sh")) or (prog in ("bash", "sh") and bool(args) and args[0].endswith(".sh"))


def project_module(names: list[str]) -> bool:
    return bool(names) and (names[0] in ("core", "bench") or names[0].startswith(("core.", "bench.", "gui.")))


def commands_in(text: str, name: str) -> list[Command]:
    found = []
    for first, body in fenced_blocks(text):
        env: dict[str, str] = {}
        for n, line in logical_lines(first, body):
            for statement in split_statements(line):
                try:
                    tokens = drop_redirections(shlex.split(expand(statement, env)))
                except ValueError:  # unbalanced quotes: not a shell line (e.g. a code sample)
                    continue
                while tokens and ASSIGNMENT.match(tokens[0]) and len(tokens) > 1:
                    tokens = tokens[1:]  # VAR=value before a command: its environment
                if len(tokens) == 1 and ASSIGNMENT.match(tokens[0]):
                    key, value = tokens[0].split("=", 1)
                    env[key] = value
                    continue
                while tokens and tokens[0] in WRAPPERS:
                    tokens = tokens[1:]
                if project_statement(tokens):
                    found.append(Command(f"{name}:{n}", line, tokens))
    return found


def documented_commands() -> list[Command]:
    return [c for doc in DOCS for c in commands_in(doc.read_text(encoding="utf-8"), str(doc.relative_to(ROOT)))]


# --- the parsers -------------------------------------------------------------------------------------


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def parser_built_by(module: str) -> argparse.ArgumentParser:
    """The parser that ``module.main`` builds, taken from its ``parse_args`` call (nothing else runs)."""
    if module == "bench":
        module = "bench.run"  # bench/__main__.py runs bench.run.main on import
    try:
        main = importlib.import_module(module).main
    except (ImportError, AttributeError) as exc:
        raise AssertionError(f"python -m {module}: no such module with a main(): {exc}") from exc

    def capture(self, args=None, namespace=None):
        raise _Captured(self)

    with mock.patch.object(argparse.ArgumentParser, "parse_args", capture):
        try:
            main([])
        except _Captured as got:
            return got.parser
    raise AssertionError(f"{module}.main() returned without calling parse_args")


def core_parser() -> argparse.ArgumentParser:
    from core.__main__ import build_parser

    return build_parser()


def app_parser() -> argparse.ArgumentParser:
    from gui.app import build_parser

    return build_parser()


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def parse_error(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code:
                return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {exc.code}"
    return None


def is_synopsis(argv: list[str]) -> bool:
    return any(a in ELISIONS or a.startswith("[") or a.endswith("]") for a in argv)


def synopsis_error(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """Every option named exists; every ``a|b|c`` after an option with choices lists only choices."""
    known = parser._option_string_actions
    previous = None
    for raw in argv:
        word = raw.strip("[]")
        if re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", word):
            option = word.split("=", 1)[0]
            if option not in known:
                return f"unknown option {option}"
            previous = known[option]
            continue
        if previous is not None and previous.choices and "|" in word:
            bad = [c for c in word.split("|") if c not in previous.choices]
            if bad:
                return f"{previous.option_strings[0]}: {bad} not among {list(previous.choices)}"
        previous = None
    return None


def check(cmd: Command) -> str | None:
    """None when the command is valid, else why not."""
    prog, args = cmd.argv[0], cmd.argv[1:]
    name = Path(prog).name
    if name == "torchrun":
        args = args[args.index("-m") :]
    elif name == "attention-studio":
        return (synopsis_error if is_synopsis(args) else parse_error)(app_parser(), args)
    elif not is_python(prog):
        script = args[0] if prog in ("bash", "sh") else prog
        path = ROOT / script
        if not path.is_file():
            return f"no such script {script}"
        if script == prog and not os.access(path, os.X_OK):
            return f"{script} is run directly but is not executable"
        return None
    if args[0] != "-m":
        script = args[0]
        if Path(script).name == "main.py":
            if not (ROOT / script).is_file():
                return f"no such script {script}"
            args = args[1:]
            return (synopsis_error if is_synopsis(args) else parse_error)(app_parser(), args)
        return None if (ROOT / script).is_file() else f"no such script {script}"
    module, args = args[1], args[2:]
    if module == "core":
        parser = core_parser()
        if is_synopsis(args):
            sub = subparser(parser, args[0]) if args else None
            return synopsis_error(sub, args[1:]) if sub else f"no subcommand {args[:1]}"
        return parse_error(parser, args)
    try:
        parser = parser_built_by(module)
    except AssertionError as exc:
        return str(exc)
    return (synopsis_error if is_synopsis(args) else parse_error)(parser, args)


COMMANDS = documented_commands()


@pytest.mark.parametrize("cmd", COMMANDS, ids=[c.where for c in COMMANDS])
def test_documented_command_is_valid(cmd):
    problem = check(cmd)
    assert problem is None, f"{cmd}\n  -> {problem}\n  argv: {cmd.argv}"


def test_every_kind_of_command_is_found():
    """The extractor itself: each kind the docs use is found, so the check above is not vacuous."""
    kinds = {" ".join(c.argv[:3]) for c in COMMANDS}
    for want in (
        "python -m core",
        "python main.py",
        "attention-studio",
        "python -m core.training.copy_augment",
        "python -m bench",
        "torchrun",
        "docs/experiments/ship.sh",
        "python3 packaging/build_standalone.py",
    ):
        assert any(k.startswith(want) or want in k for k in kinds), (want, sorted(kinds))
    subcommands = {c.argv[c.argv.index("core") + 1] for c in COMMANDS if "core" in c.argv[:5] and c.argv[-1] != "core"}
    assert {"translate", "train", "average", "evaluate", "check", "import-marian"} <= subcommands, subcommands
    assert len(COMMANDS) >= 40, len(COMMANDS)


def test_variables_set_in_the_block_expand_with_word_splitting():
    text = (
        '```bash\nA="--train xp --valid dev --max-steps 40"\nC=../corpus; D=$C/data\n'
        'OMP_NUM_THREADS=1 nohup python -m core train $A --out "$D/run 1" > log.txt 2>&1 &\n'
        "python -m core train --train $T/x*4 \\\n  --out r   # a comment $Z\n```\n"
    )
    first, second = commands_in(text, "t.md")
    assert first.argv == [
        "python",
        "-m",
        "core",
        "train",
        "--train",
        "xp",
        "--valid",
        "dev",
        "--max-steps",
        "40",
        "--out",
        "../corpus/data/run 1",
    ]
    assert second.argv == ["python", "-m", "core", "train", "--train", "T/x*4", "--out", "r"]
    assert check(first) is None and check(second) is None


PLANTED = """
Some prose, then a block with one good line and broken ones:

```bash
python -m core translate "나는 학생입니다." --beam 4
python -m core translate "나는 학생입니다." --no-such-option
python -m core translate "나는 학생입니다." --beam four
python -m core no-such-subcommand --out x
python -m core train --train PREFIX[*W] ... --out RUN [--no-such-option]
python -m core translate "문장" [--device auto|cpu|tpu]
python main.py --text "나는 학생입니다." --no-such-option
python main.py --layer 0
attention-studio --view sideways
torchrun --standalone --nproc_per_node 2 -m core train --out runs/x --no-such-option
python -m core.training.copy_augment --out x --no-such-option src
python -m bench --no-such-option
python -m bench.no_such_module
python docs/no_such_script.py
docs/experiments/no_such.sh
```

- in a list item:

  ```bash
  python -m core evaluate --src x.ko --ref x.en --no-such-option
  ```
"""


def test_a_broken_command_fails_and_is_shown():
    cmds = commands_in(PLANTED, "planted.md")
    assert len(cmds) == 16
    good, *broken = cmds
    assert check(good) is None
    problems = {c.where: check(c) for c in broken}
    assert all(problems.values()), problems
    assert "unrecognized arguments: --no-such-option" in problems["planted.md:6"]
    assert "invalid int value: 'four'" in problems["planted.md:7"]
    assert "invalid choice: 'no-such-subcommand'" in problems["planted.md:8"]
    assert problems["planted.md:9"] == "unknown option --no-such-option"
    assert "'tpu'" in problems["planted.md:10"]
    assert "numbered from 1" in problems["planted.md:12"]
    assert "no such module" in problems["planted.md:17"]
    assert problems["planted.md:18"] == "no such script docs/no_such_script.py"
    assert broken[-1].where == "planted.md:25" and "--no-such-option" in problems["planted.md:25"]
    # what the parametrized test prints for a broken line: file, line and the command as written
    with pytest.raises(
        AssertionError, match=re.escape('planted.md:6: python -m core translate "나는 학생입니다." --no-such-option')
    ):
        test_documented_command_is_valid(broken[0])
