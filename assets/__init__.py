"""Files that ship with Attention Studio: the Hangul font (``fonts/``), the application icon (``icons/``)
and the Linux desktop entry.

This file makes the folder an importable package so that installed copies are found with
``importlib.resources`` (see ``core.locations``); it holds no code.
"""
