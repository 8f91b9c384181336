"""SentencePiece tokenizers with a separate joint vocabulary, as OPUS-MT (Marian) models use.

Marian keeps two SentencePiece models (``source.spm`` for Korean, ``target.spm`` for English)
that cut text into pieces, and one ``vocab.json`` mapping every piece of either language to the
model's embedding row. A piece the vocabulary lacks becomes ``unk``. This reproduces Hugging
Face's ``MarianTokenizer`` (without its optional Moses punctuation normalizer and ``>>xx<<``
language codes, which ko→en does not use).

On disk a checkpoint holds a small descriptor (``tokenizer_src.json``)::

    {"type": "sentencepiece", "model": "source.spm", "vocab": "vocab.json",
     "pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"}

with file names relative to the descriptor's folder. The target side's descriptor may add
``"decode_model": "source.spm"``: the SentencePiece model that joins output pieces into text
(see :meth:`SentencePieceTokenizer.decode`); without it the side's own model does. Needs the
``sentencepiece`` package (``pip install -e ".[import]"``), imported only when such a tokenizer
is loaded.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from core.textio import check_regular_file, clean_text, read_json
from core.tokenizers.bpe import EOS, PAD, UNK, Encoding

WORD = "▁"  # SentencePiece's word-start mark, the same as in our BPE labels
MODEL_MAX_BYTES = 64 << 20  # a .spm model (OPUS-MT: under 1 MB) or a vocab.json (a few MB)
DESCRIPTOR_MAX_BYTES = 64 << 10  # a descriptor names its files: a few hundred bytes


def _named_file(descriptor: Path, name: str, key: str) -> Path:
    """The file ``name`` that a descriptor names, confined to the descriptor's folder: a plain file
    name (no folder part, not absolute), a regular file (never a FIFO or device that would hang or
    flood the reader) of at most :data:`MODEL_MAX_BYTES`. A checkpoint folder is untrusted input.

    Raises:
        ValueError: any of the above, naming the descriptor, the key and the file.
    """
    if Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"{descriptor}: {key!r} must be a file name inside the checkpoint folder, got {name!r}")
    file = descriptor.parent / name
    try:
        check_regular_file(file, MODEL_MAX_BYTES, inside=descriptor.parent)
    except FileNotFoundError:
        raise ValueError(f"{file}: missing ({key!r} of {descriptor.name})") from None
    return file


def _load_spm(path: Path):
    try:
        import sentencepiece
    except ImportError:
        raise ValueError(
            f'{path}: reading SentencePiece models needs `pip install sentencepiece` (or the extra: pip install -e ".[import]")'
        ) from None
    sp = sentencepiece.SentencePieceProcessor()
    try:
        sp.Load(str(path))
    except (OSError, RuntimeError) as exc:
        raise ValueError(f"{path}: not a SentencePiece model ({str(exc).splitlines()[0][:100]})") from None
    return sp


def _copy_into(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` unless they are already the same file."""
    if src.resolve() != dst.resolve():
        shutil.copyfile(src, dst)


class SentencePieceTokenizer:
    """One side (source or target) of a Marian tokenizer, behind :class:`TextTokenizer`'s interface.

    Args:
        model_file: the ``.spm`` SentencePiece model that cuts text into pieces.
        vocab: piece → id for the model's whole (joint) vocabulary; ids must be 0..V-1.
        pad_token, eos_token, unk_token: the vocabulary's special pieces (Marian: ``<pad>``,
            ``</s>``, ``<unk>``). There is no BOS: ``bos_id`` is None.
        decode_model_file: the ``.spm`` model whose decoder joins pieces into text in
            :meth:`decode` (default: ``model_file``). transformers' ``MarianTokenizer`` decodes
            a joint-vocabulary model's output with the *source* model, so the Marian import
            passes ``source.spm`` here for the target side.
    Raises:
        ValueError: ids not 0..V-1 without gaps, a special piece missing, unreadable model.
    """

    def __init__(
        self,
        model_file: str | Path,
        vocab: dict[str, int],
        pad_token: str = "<pad>",
        eos_token: str = "</s>",
        unk_token: str = "<unk>",
        decode_model_file: str | Path | None = None,
    ) -> None:
        self.model_file = Path(model_file)
        self.sp = _load_spm(self.model_file)
        self.decode_model_file = self.model_file if decode_model_file is None else Path(decode_model_file)
        same = self.decode_model_file.resolve() == self.model_file.resolve()
        self.decode_sp = self.sp if same else _load_spm(self.decode_model_file)
        if sorted(vocab.values()) != list(range(len(vocab))):
            raise ValueError("vocabulary ids must be 0..V-1, each used once")
        for name, tok in (("pad", pad_token), ("eos", eos_token), ("unk", unk_token)):
            if tok not in vocab:
                raise ValueError(f"{name} token {tok!r} is not in the vocabulary")
        self.vocab = dict(vocab)
        self.pieces = [""] * len(vocab)
        for piece, i in vocab.items():
            self.pieces[i] = piece
        self.special_tokens = {"pad_token": pad_token, "eos_token": eos_token, "unk_token": unk_token}
        self.pad_id, self.eos_id, self.unk_id = vocab[pad_token], vocab[eos_token], vocab[unk_token]
        self.bos_id: int | None = None  # OPUS-MT has no BOS
        self._labels = {self.pad_id: PAD, self.eos_id: EOS, self.unk_id: UNK}

    @classmethod
    def from_file(cls, path: str | Path) -> SentencePieceTokenizer:
        """Load from a descriptor JSON (see the module docstring). Raises ValueError or OSError."""
        path = Path(path)
        desc = read_json(path, DESCRIPTOR_MAX_BYTES)
        if not isinstance(desc, dict):
            raise ValueError(f"{path}: a descriptor must be a JSON object")
        for key in ("model", "vocab"):
            if not isinstance(desc.get(key), str):
                raise ValueError(f"{path}: descriptor lacks {key!r}")
        model_file = _named_file(path, desc["model"], "model")
        vocab_file = _named_file(path, desc["vocab"], "vocab")
        try:
            vocab = read_json(vocab_file, MODEL_MAX_BYTES)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{vocab_file}: not a readable vocabulary ({exc})") from None
        if not isinstance(vocab, dict) or not all(isinstance(v, int) for v in vocab.values()):
            raise ValueError(f"{vocab_file}: must map pieces to integer ids")
        decode_model = desc.get("decode_model")
        if decode_model is not None and not isinstance(decode_model, str):
            raise ValueError(f"{path}: 'decode_model' must be a file name")
        specials = {k: desc[k] for k in ("pad_token", "eos_token", "unk_token") if k in desc}
        if not all(isinstance(v, str) for v in specials.values()):
            raise ValueError(f"{path}: special tokens must be strings")
        return cls(
            model_file,
            vocab,
            **specials,
            decode_model_file=None if decode_model is None else _named_file(path, decode_model, "decode_model"),
        )

    def save(self, path: str | Path) -> None:
        """Write the descriptor to ``path`` and copy the ``.spm`` model(s) and ``vocab.json`` next to it."""
        path = Path(path)
        model_name = self.model_file.name
        _copy_into(self.model_file, path.parent / model_name)
        (path.parent / "vocab.json").write_text(json.dumps(self.vocab, ensure_ascii=False) + "\n", encoding="utf-8")
        desc = {"type": "sentencepiece", "model": model_name, "vocab": "vocab.json", **self.special_tokens}
        if self.decode_sp is not self.sp:
            decode_name = self.decode_model_file.name
            if decode_name == model_name:  # two different files of one name: keep both
                decode_name = f"decode-{decode_name}"
            _copy_into(self.decode_model_file, path.parent / decode_name)
            desc["decode_model"] = decode_name
        path.write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def normalize(self, text: str) -> str:
        """The text after SentencePiece's own normalization (e.g. NFKC, collapsed spaces)."""
        return self.sp.normalize(clean_text(text))

    def encode(self, text: str) -> Encoding:
        """Cut ``text`` into pieces with the SentencePiece model and map them through the joint
        vocabulary (a piece it lacks becomes ``[UNK]``), exactly as ``MarianTokenizer``. Offsets
        are character spans in :meth:`normalize`'s output (a word-start ``▁`` covers no
        character). Adds no special tokens."""
        text = clean_text(text)
        norm = self.sp.normalize(text)
        ids, tokens, offsets, pos = [], [], [], 0
        for piece in self.sp.encode(text, out_type=str):
            i = self.vocab.get(piece, self.unk_id)
            ids.append(i)
            tokens.append(self._labels.get(i, piece))
            surface = piece.replace(WORD, " ")
            if not norm.startswith(surface, pos):
                surface = surface.lstrip(" ")  # the word mark SentencePiece adds before the first word
            start = pos + (len(surface) - len(surface.lstrip(" ")) if norm.startswith(surface, pos) else 0)
            if norm.startswith(surface, pos):
                pos += len(surface)
            offsets.append((start, pos))
        return Encoding(ids, tokens, offsets)

    def decode(self, ids: Iterable[int]) -> str:
        """The display text of ``ids``. Like :meth:`~core.tokenizers.bpe.TextTokenizer.decode`
        for our own models, this is the one place output ids become text: the translation,
        hypotheses, beam rows and the app's line after each step are all made by it.

        Exactly transformers' ``MarianTokenizer.decode`` (``convert_tokens_to_string``), with
        pad and EOS left out and ``unk`` (or an id outside the vocabulary) shown as ``[UNK]``:
        each run of pieces between unks is joined by the decode model's SentencePiece decoder,
        each ``[UNK]`` is followed by one space, then every ``▁`` still left becomes a space and
        the ends are stripped. The last step matters for a joint vocabulary: a piece that the
        decode model does not know (e.g. a Korean piece in English output, when it is not in
        that ``.spm``) passes SentencePiece's decoder unchanged, word mark included.
        """
        out: list[str] = []
        run: list[str] = []  # pieces since the last unknown id
        for i in ids:
            i = int(i)
            if i in (self.pad_id, self.eos_id):
                continue
            if i == self.unk_id or not 0 <= i < len(self.pieces):
                out.append(self.decode_sp.decode_pieces(run) + UNK + " ")
                run = []
            else:
                run.append(self.pieces[i])
        out.append(self.decode_sp.decode_pieces(run))
        return "".join(out).replace(WORD, " ").strip()

    def id_to_token(self, i: int) -> str:
        """The piece of id ``i`` (``▁`` marks a word start); specials read ``[PAD]``/``[EOS]``/``[UNK]``."""
        i = int(i)
        if i in self._labels:
            return self._labels[i]
        return self.pieces[i] if 0 <= i < len(self.pieces) else UNK

    def ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.id_to_token(int(i)) for i in ids]
