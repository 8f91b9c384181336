"""Copy probe: exact-copy rate of 240 random strings in Korean frames, by shape.

A less noisy companion of the 42-string copy check (`python -m core check`). Strings come from
the copy augmentation's own generators with a fixed seed (12345, not a training seed), so they
are new strings of the trained *shapes*: 60 each of `repeat_string` numbers (3.11, 41115,
010-1111-2345) and text (www. hosts, C++, doubled letters), and `rich_string` numbers and text.
The frames are five Korean sentences per kind written for this probe. Greedy decoding.

usage: python docs/experiments/probe_copy.py CHECKPOINT [CHECKPOINT ...]
prints one line per checkpoint: copied/total per shape and in all.
"""

import random
import sys

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.evaluation.evaluate import translate_corpus
from core.training.copy_shapes import repeat_string, rich_string

FRAMES_NUM = ["버전 {}을 설치하세요.", "제 번호는 {}이에요.", "가격은 {}원이에요.", "코드는 {}입니다.", "{}번 버스를 타세요."]
FRAMES_TXT = ["{}에 방문하세요.", "파일 이름은 {}입니다.", "{}에게 메일을 보냈어요.", "{}를 좋아해요.", "비밀번호는 {}예요."]


def probe_items(seed: int = 12345, n: int = 60) -> list[tuple[str, str, str]]:
    """``[(shape, string, korean sentence)]``: ``n`` per shape, shapes ``repeat-num``,
    ``repeat-txt``, ``rich-num``, ``rich-txt``."""
    rng = random.Random(seed)
    items = []
    for kind, draw in (("repeat", repeat_string), ("rich", rich_string)):
        for numeric, frames in ((True, FRAMES_NUM), (False, FRAMES_TXT)):
            for _ in range(n):
                s = draw(rng, numeric)
                items.append((f"{kind}-{'num' if numeric else 'txt'}", s, rng.choice(frames).format(s)))
    return items


def main(paths: list[str]) -> None:
    torch.set_num_threads(1)
    items = probe_items()
    for path in paths:
        outs = translate_corpus(load_checkpoint(path, device="cpu"), [t for *_, t in items])
        res: dict[str, list[bool]] = {}
        for (shape, s, _), o in zip(items, outs):
            res.setdefault(shape, []).append(s in o)
        total = sum(sum(v) for v in res.values())
        print(path, " ".join(f"{k} {sum(v)}/{len(v)}" for k, v in res.items()), f"all {total}/{len(items)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
