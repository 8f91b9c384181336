"""The tab panels the main window creates, in tab order (after the live experiment tabs Force a
token, Teacher forcing and Beam, which the window's live controller owns).

Each entry is a callable ``make(ctx: PanelContext) -> Panel`` (usually the panel class). Adding a
panel is one new module in ``gui/panels/`` and one line here."""

from __future__ import annotations

from gui.panels.adapt import AdaptPanel
from gui.panels.analysis import AnalysisTabs
from gui.panels.heads import HeadTools
from gui.panels.inside import InsidePanel
from gui.panels.learn import LearnPanel
from gui.panels.positional import PositionalPanel

TAB_PANELS = [
    AnalysisTabs,  # Ablate heads, Compare
    InsidePanel,  # Inside one step
    PositionalPanel,  # Positional encoding
    HeadTools,  # Heads (and Alignment lines beside the enlarged map)
    LearnPanel,  # Learn (train a small Transformer on a toy task, live)
    AdaptPanel,  # Adapt (fine-tune the loaded model on the lecturer's pairs)
]
