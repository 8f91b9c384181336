"""A model on disk: ``checkpoint`` (load and save a checkpoint folder, safetensors + JSON, no
pickle), ``atomic_io`` (crash-safe folder writes), ``marian`` / ``marian_weights`` (the OPUS-MT import),
``precision`` (a loaded model converted for inference: fp32, bf16, int8 or int8-output)."""
