"""Suite-wide options. ``--long`` runs the long sweeps: differential tests against Fairy-Stockfish
and the bad-input fuzz runs (minutes to hours)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the long sweeps (differential tests, fuzzing)")


@pytest.fixture(scope="session")
def long_sweep(request: pytest.FixtureRequest) -> bool:
    """True when the suite runs with ``--long``: differential tests use many more games, fuzz
    tests many more frames."""
    return bool(request.config.getoption("--long"))


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    """The collector runs only when the test asks (memory tests inspect what it finds)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
