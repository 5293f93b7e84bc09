"""Suite-wide options. ``--long`` runs the long sweeps: differential tests against Fairy-Stockfish
and the bad-input fuzz runs (minutes to hours)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the long sweeps (differential tests, fuzzing)")


@pytest.fixture(scope="session")
def long_sweep(request: pytest.FixtureRequest) -> bool:
    """True when the suite runs with ``--long``: differential tests use many more games, fuzz
    tests many more frames."""
    return bool(request.config.getoption("--long"))
