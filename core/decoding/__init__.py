"""Running a model on a sentence: ``session`` (step-by-step decoding with a KV cache, teacher
forcing, batched greedy search), ``beam`` (beam search), ``batch`` (padded batches), ``experiments``
(forced tokens, teacher forcing with its loss), ``live`` (the stepper the app drives) and ``translate``
(one call from text to a full, displayable result)."""
