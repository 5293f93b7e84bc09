"""``python -m server``: run the game hub (see :mod:`server.app.main`)."""

import sys

from server.app.main import main

if __name__ == "__main__":
    sys.exit(main())
