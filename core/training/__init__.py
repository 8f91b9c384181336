"""Making a model: ``data`` (parallel text → length-bucketed batches) → ``train`` (§5) →
``evaluate`` (sacreBLEU BLEU/chrF) → ``average`` (checkpoint averaging, §6.1)."""
