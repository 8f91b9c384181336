"""``python -m core translate|train|evaluate|average``: the scriptable side of Attention Studio."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from core import train as train_mod

    train_mod.add_arguments(sub.add_parser("train", help="train a model (resumable)"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.command == "train":
        return train_mod.run_from_args(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
