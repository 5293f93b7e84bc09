"""``python -m server``: run the game hub (see :mod:`server.app`)."""

import sys

from server.app import main

if __name__ == "__main__":
    sys.exit(main())
