"""`translate --reference` prints the model's argmax at each reference position (not a
translation), as the README says: checked against an independent teacher-forced forward pass."""

from __future__ import annotations

import torch

from core.__main__ import main
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from tests.support import ROOT

TEXT = "집에 누군가 있어?"
REFERENCE = "Is someone at home?"


def test_reference_line_is_the_argmax_per_reference_position(tiny_checkpoint, capsys):
    assert main(["translate", TEXT, "--reference", REFERENCE, "--checkpoint", str(tiny_checkpoint)]) == 0
    printed, err = capsys.readouterr()
    assert "loss:" in err
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    c, tgt_tok = ck.config, ck.tgt_tokenizer
    src = torch.tensor([translate(ck, TEXT).source.ids])  # the source ids the app encodes
    tgt_in = torch.tensor([[c.start_id] + tgt_tok.encode(REFERENCE).ids])
    with torch.no_grad():
        argmax = ck.model(src, tgt_in)[0].argmax(-1).tolist()  # [T]: one per reference position
    ids = argmax[:argmax.index(c.eos_id)] if c.eos_id in argmax else argmax
    assert printed == tgt_tok.decode(ids) + "\n"
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "model's argmax at each reference position" in doc.replace("\n", " ")
