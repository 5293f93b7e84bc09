"""``python -m server.rules``: see :mod:`server.rules.cli`."""

from .cli import main

raise SystemExit(main())
