"""Text to token ids and back: our BPE tokenizers (``bpe``), OPUS-MT's SentencePiece ones
(``spm``), and ``files`` (open a tokenizer file of either kind)."""
