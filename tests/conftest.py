"""Suite-wide options. ``--long`` runs the long differential sweeps (minutes to hours)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the long differential sweeps")


@pytest.fixture(scope="session")
def long_sweep(request: pytest.FixtureRequest) -> bool:
    """True when the suite runs with ``--long``: differential tests use many more games."""
    return bool(request.config.getoption("--long"))
