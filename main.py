"""Attention Studio: ``python main.py`` opens the app on the shipped Korean→English model.

See ``python main.py --help`` for headless rendering (``--text … --screenshot out.png``).
"""

import sys

from gui.app import main

if __name__ == "__main__":
    sys.exit(main())
