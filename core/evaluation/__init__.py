"""Judging a model: ``evaluate`` (sacreBLEU BLEU/chrF on a test set), ``validation`` (chrF while
training), ``lecture_check`` (the lecture and copy fixtures) and ``overlap`` (exact and near-duplicate
overlap between an evaluation set and training files)."""
