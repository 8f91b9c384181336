"""English monolingual text for back-translation, from packages installed on this machine.

Two sources, both shipped under free licences by a package manager (nothing is downloaded here):

* **WordNet 3.0 usage examples** (Debian package ``wordnet-base``, WordNet 3.0 licence, permissive):
  the quoted examples in the glosses of ``data.noun``/``data.verb``/``data.adj``/``data.adv``
  ("a teacher should make eye contact with the students"). Short everyday English, 48k lines.
* **Docstring sentences of an installed Python package** (e.g. ``torch``, BSD-3-Clause; ``transformers``,
  Apache-2.0): plain prose sentences of module, class and function docstrings, optionally only those
  naming a word of ``--topic`` (attention, encoder, decoder, …), the vocabulary of a Transformer lecture.

Lines that are exact or near duplicates (character 3-gram Jaccard ≥ ``--threshold``,
:mod:`core.evaluation.overlap`) of an English evaluation line given with ``--exclude`` are dropped, so
no test reference reaches training through the synthetic pairs.

    python -m core.training.monolingual --wordnet /usr/share/wordnet --docstrings torch transformers \\
        --topic --exclude ../shared/corpus/test/*.en tests/fixtures/*.tsv --out runs/data/mono.en
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import math
import re
from pathlib import Path

from core.evaluation.overlap import normalise, trigrams

TOPIC_WORDS = (
    "attention encoder decoder layer head query queries key keys value values mask masks masked "
    "padding token tokens embedding embeddings softmax training trained train loss translation "
    "translate sequence sequences model models weight weights vector vectors batch gradient "
    "vocabulary sentence sentences word words position positional probability"
).split()
# a paragraph holding any of these is code, markup or a field list, not prose
_CODE = re.compile(r">>>|::|`|[{}\[\]=()\\_/*#@<>|]|^\s*\w+:\s*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|cf)\b|[:;]")


SUBJECT_OR_AUX = frozenset(
    "i you he she it we they is was are were am has have had will would can could did does do should must may might shall".split()
)


def wordnet_past_forms(folder: str | Path) -> frozenset[str]:
    """Past-tense and participle forms of WordNet's verbs: the irregular forms of ``verb.exc`` ending in
    -ed/-d/-t/-n or not (every form listed there), and lemma + "ed"/"d" for each one-word lemma of
    ``index.verb`` (regular past forms). Used to tell a clause ("the grass tickled her calves") from a
    noun phrase ("a slow walk")."""
    folder = Path(folder)
    forms: set[str] = set()
    exc = folder / "verb.exc"
    if exc.is_file():
        forms.update(line.split()[0] for line in exc.read_text(encoding="latin-1").splitlines() if line.strip())
    index = folder / "index.verb"
    if index.is_file():
        for line in index.read_text(encoding="latin-1").splitlines():
            lemma = line.split(" ", 1)[0]
            if line.startswith(" ") or "_" in lemma:
                continue
            forms.add(lemma + ("d" if lemma.endswith("e") else "ed"))
    return frozenset(forms)


def sentence_case(text: str, past_forms: frozenset[str] = frozenset()) -> str:
    """``text`` with a capital first letter, and a full stop added when it reads as a clause (a subject
    pronoun or auxiliary, or after its first word a past form from ``past_forms``; hyphenated words are
    not counted) and ends without ``.``, ``!``, ``?`` or a quote. Noun phrases stay without a stop
    ("A terrible curse"). Training targets then look like the rest of the English side."""
    if not text:
        return text
    words = [w for w in re.split(r"\s+", text.lower()) if w]
    plain = [re.sub(r"[^a-z']", "", w) for w in words if "-" not in w]
    clause = any(w in SUBJECT_OR_AUX for w in plain) or any(w in past_forms for w in plain[1:])
    out = text[0].upper() + text[1:]
    if clause and out[-1] not in ".!?\"'":
        out += "."
    return out


def wordnet_examples(folder: str | Path, min_words: int = 3, max_words: int = 30, case: bool = False) -> list[str]:
    """The quoted usage examples of WordNet's ``data.*`` files, in file order, without repeats.

    An example is a ``"…"`` span after the ``|`` that starts a synset's gloss; lines of the licence
    header (which start with two spaces) are skipped. Only examples of ``min_words``..``max_words``
    words are kept. With ``case``, each is passed through :func:`sentence_case` (WordNet writes most
    examples in lower case without a stop).

    Raises:
        FileNotFoundError: ``folder`` has no ``data.noun``.
    """
    folder = Path(folder)
    if not (folder / "data.noun").is_file():
        raise FileNotFoundError(f"no WordNet data.noun in {folder} (Debian: apt-get install wordnet-base)")
    past = wordnet_past_forms(folder) if case else frozenset()
    out: dict[str, None] = {}
    for pos in ("noun", "verb", "adj", "adv"):
        path = folder / f"data.{pos}"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "|" not in line:
                continue
            for ex in re.findall(r'"([^"]+)"', line.split("|", 1)[1]):
                ex = " ".join(ex.split()).strip(" ;,")
                if min_words <= len(ex.split()) <= max_words:
                    out[sentence_case(ex, past) if case else ex] = None
    return list(out)


def docstring_sentences(package: str, topic: tuple[str, ...] = (), min_words: int = 5, max_words: int = 30) -> list[str]:
    """Prose sentences from the docstrings of every module of an installed ``package``, without repeats.

    A paragraph with code or markup characters is skipped whole; a sentence must start with a capital,
    end with ``.``, ``!`` or ``?``, hold no abbreviation, colon or semicolon, and have
    ``min_words``..``max_words`` words. With ``topic``, only sentences naming one of its words (lower case,
    whole word) are kept.

    Raises:
        ModuleNotFoundError: ``package`` is not installed.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"package {package!r} is not installed")
    words = set(topic)
    out: dict[str, None] = {}
    for path in sorted(Path(spec.origin).parent.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            for para in re.split(r"\n\s*\n", doc or ""):
                if _CODE.search(para):
                    continue
                for s in _SENTENCE_END.split(" ".join(para.split())):
                    n = len(s.split())
                    if not (min_words <= n <= max_words and s[0].isupper() and s[-1] in ".!?") or _ABBREV.search(s):
                        continue
                    if words and not words & set(re.findall(r"[a-z]+", s.lower())):
                        continue
                    out[s] = None
    return list(out)


def english_lines(path: str | Path) -> list[str]:
    """English evaluation lines: every line of a ``.en`` file, or every reference of the second column of
    a ``Korean<TAB>English | English…`` fixture (``#`` comment lines skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if Path(path).suffix == ".tsv":
        return [
            r.strip() for x in lines if "\t" in x and not x.startswith("#") for r in x.split("\t")[1].split(" | ") if r.strip()
        ]
    return [x.strip() for x in lines if x.strip()]


def drop_overlaps(lines: list[str], exclude: list[str], threshold: float = 0.6) -> tuple[list[str], int]:
    """``lines`` without every line that is equal after normalisation to an ``exclude`` line, or whose
    3-gram Jaccard with *any* ``exclude`` line is ≥ ``threshold``; returns the kept lines and how many
    were dropped.

    Exact, not sampled: a line x can only reach Jaccard t with y if they share at least ⌈t·|x|⌉
    trigrams, so y must hold one of x's |x| − ⌈t·|x|⌉ + 1 trigrams that are rarest among ``exclude``
    (prefix filtering); only those are looked up, then each candidate's Jaccard is computed in full.
    """
    if not exclude:
        return list(lines), 0
    ref_grams = [trigrams(x) for x in exclude]
    exact = {normalise(x) for x in exclude}
    index: dict[str, list[int]] = {}
    for i, g in enumerate(ref_grams):
        for x in g:
            index.setdefault(x, []).append(i)
    kept = []
    for line in lines:
        g = trigrams(line)
        prefix = sorted(g, key=lambda x: (len(index.get(x, ())), x))[: len(g) - math.ceil(threshold * len(g)) + 1]
        cands = {i for x in prefix for i in index.get(x, ())}
        if normalise(line) in exact or any(len(g & ref_grams[i]) / len(g | ref_grams[i]) >= threshold for i in cands):
            continue
        kept.append(line)
    return kept, len(lines) - len(kept)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet", help="folder with WordNet's data.noun … (Debian: /usr/share/wordnet)")
    ap.add_argument(
        "--sentence-case",
        action="store_true",
        help="capitalise WordNet examples, and end those that read as clauses with a full stop",
    )
    ap.add_argument("--docstrings", nargs="*", default=[], help="installed Python packages to read docstrings from")
    ap.add_argument("--topic", action="store_true", help="keep only docstring sentences naming a lecture word")
    ap.add_argument("--exclude", nargs="*", default=[], help="English evaluation files (.en, or .tsv fixtures)")
    ap.add_argument("--threshold", type=float, default=0.6, help="near-duplicate 3-gram Jaccard (default 0.6)")
    ap.add_argument("--out", required=True, help="output file, one English line each")
    args = ap.parse_args(argv)
    found: dict[str, None] = {}
    if args.wordnet:
        ex = wordnet_examples(args.wordnet, case=args.sentence_case)
        print(f"WordNet examples: {len(ex)}")
        found.update(dict.fromkeys(ex))
    for pkg in args.docstrings:
        s = docstring_sentences(pkg, tuple(TOPIC_WORDS) if args.topic else ())
        print(f"{pkg} docstring sentences: {len(s)}")
        found.update(dict.fromkeys(s))
    exclude = [x for path in args.exclude for x in english_lines(path)]
    kept, dropped = drop_overlaps(list(found), exclude, args.threshold)
    print(
        f"{len(found)} lines, {dropped} dropped as exact or near duplicates of {len(exclude)} evaluation lines, "
        f"{len(kept)} written to {args.out}"
    )
    Path(args.out).write_text("".join(x + "\n" for x in kept), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
