"""Using a trained model: ``tokenizer`` (text → ids) → ``checkpoint`` (load/save, no pickle)
→ ``decoding`` (greedy steps with a KV cache, teacher forcing) → ``beam`` → ``maps``
(attention maps for display) → ``translate`` (one call for the CLI and the app)."""
