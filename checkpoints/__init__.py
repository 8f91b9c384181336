"""The models that ship with Attention Studio, one folder each (config, safetensors, tokenizers, card).

This file makes the folder an importable package so that installed copies are found with
``importlib.resources`` (see ``core.locations``); it holds no code.
"""
