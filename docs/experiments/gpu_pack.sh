#!/usr/bin/env bash
# Run here, before a GPU run through the device tool: pack the training mix of docs/training.md's
# stage 7 / shape runs (gzip'd, about 4x smaller) and the shipped tokenizers into runs/gpu_pack
# (ignored by git; name it in the run's `carry`). Needs runs/data (runs/build_data.sh) and ../shared.
# Then see docs/experiments/gpu_train.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
C=../shared/corpus; T=$C/train; D=runs/data; P=runs/gpu_pack
rm -rf "$P"; mkdir -p "$P/data"
for prefix in $D/tatoeba-tr $T/kss-nc $T/stylekqc-kosp2e $T/xpersona $T/cocoa-mt $D/korsts-nofin \
    $T/asp-storybooks $T/asp-storybooks-nc $T/renpy-the-question $T/renpy-tutorial $T/games-gpl-l10n \
    $T/ud-pud $T/cldr-terms $T/cldr-emoji-names $T/kengdic-basic $D/python-docs-sub \
    $D/copy-aug2 $D/copy-aug3 $D/copy-aug4 $D/copy-aug-py $D/templates-filled $D/tatoeba-ho $C/valid/jhe-dev; do
  for side in ko en; do
    gzip -9 -c "$prefix.$side" > "$P/data/$(basename "$prefix").$side.gz"
  done
done
cp checkpoints/ko-en-nc/tokenizer_src.json checkpoints/ko-en-nc/tokenizer_tgt.json "$P/"
du -sh "$P"
