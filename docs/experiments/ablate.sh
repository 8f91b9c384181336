#!/usr/bin/env bash
# Lever ablations of the model-quality issue at small scale, equal steps, one thread each, one after another.
# Run from the repository root after building runs/data as in docs/training.md ("Data").
# Each run writes runs/abl-NAME/ (log.jsonl has valid NLL and held-out chrF every 200 steps).
set -u
PY=${PY:-python}; C=${C:-../shared/corpus}; T=$C/train; D=runs/data
COMMON="--train $D/tatoeba-tr*4 $T/kss-nc $T/stylekqc-kosp2e $T/xpersona --valid $D/tatoeba-ho --d-model 128 --n-heads 4
 --layers 2 --d-ff 512 --dropout 0.2 --max-tokens 1500 --warmup 400 --max-steps 800 --valid-every 200 --save-every 800
 --threads 1 --chrf-lines 418"
run() { name=$1; shift; [ -f runs/abl-$name/last/model.safetensors ] && return
        $PY -m core train $COMMON --out runs/abl-$name "$@" > runs/abl-$name.log 2>&1; }
run A-fp32-post-sep --precision fp32 --src-vocab 4000 --tgt-vocab 4000
run B-bf16-post-sep --precision bf16 --src-vocab 4000 --tgt-vocab 4000
run C-bf16-pre-sep --precision bf16 --norm-first --src-vocab 4000 --tgt-vocab 4000
run D-bf16-pre-joint --precision bf16 --norm-first --joint-vocab 6000
