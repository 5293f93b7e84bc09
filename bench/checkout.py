"""The checkout a bench script measures, put on ``sys.path`` by importing this module.

A bench script runs as ``python bench/NAME.py``: Python puts ``bench/`` first on ``sys.path``,
and the virtual environment's editable install would otherwise import ``server`` from whichever
checkout installed it. Importing this module (``from checkout import ROOT``, or ``import
checkout``) puts this checkout's root and its ``tests/`` (``support.py``: a fresh database)
right after ``bench/``, so that ``server`` is the tree the script belongs to and the bench's own
modules still come first. ``scripts/`` is not added: it has a ``processes`` module of its own
(the cluster's), which would shadow ``bench/processes.py`` (see ``bench_cluster.py``).

A script that measures another tree (``--root``) puts that tree first itself, after this.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The root of the checkout this ``bench/`` belongs to.
ROOT = Path(__file__).resolve().parent.parent

for _folder in (ROOT / "tests", ROOT):  # ROOT ends up first of the two
    if str(_folder) not in sys.path:
        sys.path.insert(1, str(_folder))
