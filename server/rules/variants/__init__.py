"""The registry of variants: name → :class:`~server.rules.variant.Variant`."""

from __future__ import annotations

from ..variant import Variant
from .daishogi import DAISHOGI
from .minishogi import MINISHOGI
from .shoshogi import SHOSHOGI
from .spartan import SPARTAN
from .wildcastle import WILDCASTLE

VARIANTS: dict[str, Variant] = {v.name: v for v in (MINISHOGI, SHOSHOGI, WILDCASTLE, SPARTAN)}
VARIANTS[DAISHOGI.name] = DAISHOGI
VARIANT_NAMES: tuple[str, ...] = tuple(VARIANTS)


def get_variant(name: str) -> Variant:
    """The variant called ``name``; raise KeyError with the known names otherwise."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}") from None
