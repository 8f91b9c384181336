#!/usr/bin/env bash
# Score a checkpoint before it ships: Tatoeba test and FLORES-200 devtest, greedy and beam 4 (into
# CK/eval.json, one entry per set and beam), and the lecture / copy checks (CK/check.json, greedy;
# CK/check-beam4.json). Run from the repository root: docs/experiments/ship.sh checkpoints/NAME
set -eu
CK=$1; PY=${PY:-python}; C=${C:-../shared/corpus}
for set in tatoeba-test flores200-devtest; do
  for beam in 1 4; do
    $PY -m core evaluate --checkpoint "$CK" --src "$C/test/$set.ko" --ref "$C/test/$set.en" --beam $beam --json "$CK/eval.json"
  done
done
$PY -m core check --checkpoint "$CK" --json "$CK/check.json"
$PY -m core check --checkpoint "$CK" --beam 4 --json "$CK/check-beam4.json"
