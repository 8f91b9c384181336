#!/usr/bin/env bash
# One prepared training run for a GPU lent through the device tool (never needed: everything trains
# on the CPU too, only slower). On the device machine, in the repository root, with runs/gpu_pack
# carried (docs/experiments/gpu_pack.sh made it here):
#   MINUTES=7 bash docs/experiments/gpu_train.sh
# Trains shape A (today's 4 + 4 layers, d_model 256, the shipped tokenizer) from scratch on the stage 7
# mix in bf16 for MINUTES, then writes the newest checkpoint's shipped files (model, config,
# tokenizers, manifest; no optimizer state: the tool brings back at most 64 MiB) to $OUT as
# ckpt.tar.part-aa, -ab, … of 15 MB and the run's log.jsonl. Here:
#   cat <files_at>/ckpt.tar.part-* | tar -C runs/gpu_result -xf -
# The checkout is larger than the tool's 64 MiB with both shipped checkpoints (docs/training.md, "On a
# GPU lent through the device tool"): move checkpoints/ko-en-base and checkpoints/ko-en-nc out of the
# checkout for the call and back after it. DEVICE=cpu PRECISION=fp32 MAX_STEPS=2 tries it here.
set -euo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${MINUTES:-7}; DEVICE=${DEVICE:-cuda}; PRECISION=${PRECISION:-bf16}; MAX_STEPS=${MAX_STEPS:-200000}
MAX_TOKENS=${MAX_TOKENS:-12000}; OUTDIR=${OUT:-/tmp/gpu_out}; WORK=${WORK:-/tmp/gpu_work}
P=runs/gpu_pack; D=$WORK/data; RUN=$WORK/run
rm -rf "$WORK"; mkdir -p "$D" "$RUN" "$OUTDIR"
for f in "$P"/data/*.gz; do gunzip -c "$f" > "$D/$(basename "$f" .gz)"; done
cp "$P"/tokenizer_src.json "$P"/tokenizer_tgt.json "$RUN/"
MIX="$D/tatoeba-tr*4 $D/kss-nc*2 $D/stylekqc-kosp2e $D/xpersona $D/cocoa-mt*2 $D/korsts-nofin \
  $D/asp-storybooks*2 $D/asp-storybooks-nc*2 $D/renpy-the-question*2 $D/renpy-tutorial $D/games-gpl-l10n \
  $D/ud-pud $D/cldr-terms $D/cldr-emoji-names $D/kengdic-basic $D/python-docs-sub \
  $D/copy-aug2 $D/copy-aug3 $D/copy-aug4 $D/copy-aug-py docs/training/data/lecture-domain*6 $D/templates-filled"
PY=${PYTHON:-python3}
PYTHONUNBUFFERED=1 $PY -m core train --train $MIX --out "$RUN" --device "$DEVICE" --precision "$PRECISION" \
  --dropout 0.3 --attention-dropout 0.1 --activation-dropout 0.1 --label-smoothing 0.1 \
  --max-tokens "$MAX_TOKENS" --chrf-lines 418 --valid "$D/tatoeba-ho" "$D/jhe-dev" \
  --joint-vocab 8000 --norm-first --warmup 800 --lr-scale 1.0 --valid-every 500 --save-every 500 --keep 2 \
  --d-model 256 --n-heads 4 --layers 4 --d-ff 1024 --max-steps "$MAX_STEPS" --max-minutes "$MINUTES"
last=$(ls -d "$RUN"/step_* | sort -t_ -k2 -n | tail -1)
tar -C "$last" -cf - model.safetensors config.json tokenizer_src.json tokenizer_tgt.json manifest.json \
  | split -b 15M - "$OUTDIR/ckpt.tar.part-"
cp "$RUN/log.jsonl" "$OUTDIR/"
ls -l "$OUTDIR"
