"""Attention Studio desktop app (PySide6 + pyqtgraph). Widgets wrap plain core results;
model work runs in a worker thread."""
