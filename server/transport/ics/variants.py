"""How this server's variants look on an ICS: their names and their one-letter pieces.

ICS clients learn a game's variant from the words of its ``Creating`` and ``{Game N …}`` lines
and read boards one character per square. XBoard recognises a variant by a word it knows
anywhere in those lines: ``wild/1`` is its Wild Castle, ``spartan`` its Spartan Chess, and any
word ending in ``shogi`` makes a shogi board with holdings (its size comes from the board line
or the client's ``-boardWidth``/``-boardHeight`` options).

Style 12 has one character per square, so a promoted shogi piece (``+R`` in our FEN) needs a
letter of its own: :attr:`IcsVariant.letters` maps each of our piece symbols to that letter,
and the client's piece table must map the letters back (docs/ics.md gives XBoard's
``-pieceToCharTable`` for Mini-Shogi).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from server.rules import VARIANT_NAMES, Variant, get_variant

__all__ = ["ICS_VARIANTS", "IcsVariant", "ics_variant", "variant_by_word"]


@dataclass(frozen=True)
class IcsVariant:
    """One variant as ICS clients see it."""

    name: str
    """Our variant name (``server.rules``)."""
    kind: str
    """The word in ``Creating`` / ``{Game …}`` / seek lines (``wild/1``, ``spartan`` …)."""
    aliases: tuple[str, ...]
    """Other words accepted in ``seek`` and ``match`` (lower case)."""
    letters: dict[str, str] = field(default_factory=dict)
    """Our piece symbol -> its one-letter style-12 form (upper case), where they differ."""

    @property
    def variant(self) -> Variant:
        return get_variant(self.name)

    def letter(self, symbol: str) -> str:
        """The upper-case style-12 letter of one of our piece symbols (first player's case)."""
        letter = self.letters.get(symbol)
        if letter is not None:
            return letter
        # Unmapped (Dai Shogi's many pieces): the symbol's letter, without '+' or suffix marks.
        base = symbol.lstrip("+")
        return base[0].upper() if base else "?"

    def symbol(self, letter: str) -> str | None:
        """Our piece symbol for a style-12 letter (a drop ``R@c2``), or None."""
        upper = letter.upper()
        for symbol, mapped in self.letters.items():
            if mapped == upper:
                return symbol
        return upper if upper in self.variant.t.code else None


# Promoted shogi pieces get letters of their own (their FEN form "+X" is two characters).
_MINISHOGI_LETTERS = {"+P": "T", "+S": "V", "+B": "H", "+R": "D"}
_SHOSHOGI_LETTERS = {
    "+P": "T",
    "+L": "O",
    "+N": "M",
    "+S": "V",
    "+B": "H",
    "+R": "D",
    "+E": "C",
}

ICS_VARIANTS: tuple[IcsVariant, ...] = (
    IcsVariant(
        "minishogi",
        "minishogi",
        ("minishogi", "mini-shogi", "5x5+5_shogi", "gogo"),
        _MINISHOGI_LETTERS,
    ),
    IcsVariant("shoshogi", "shoshogi", ("shoshogi", "sho-shogi", "sho"), _SHOSHOGI_LETTERS),
    IcsVariant("wildcastle", "wild/1", ("wild/1", "w1", "wild1", "wildcastle", "wild-castle")),
    IcsVariant("spartan", "spartan", ("spartan", "spartanchess")),
    IcsVariant("daishogi", "daishogi", ("daishogi", "dai-shogi", "dai")),
)

_BY_NAME = {v.name: v for v in ICS_VARIANTS}
_BY_WORD = {alias: v for v in ICS_VARIANTS for alias in (*v.aliases, v.name, v.kind)}
assert set(_BY_NAME) == set(VARIANT_NAMES), "every variant needs its ICS description"


def ics_variant(name: str) -> IcsVariant:
    """The ICS description of one of our variants (by our name)."""
    return _BY_NAME[name]


def variant_by_word(word: str) -> IcsVariant | None:
    """The variant a ``seek``/``match`` word names (any case), or None."""
    return _BY_WORD.get(word.lower())
