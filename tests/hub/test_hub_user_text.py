"""The one rule of user text (``server.hub.user_text``), checked against an independent reading
of the Unicode character database over arbitrary text."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.hub.errors import ProtocolError
from server.hub.fields import FieldReader
from server.hub.user_text import check_user_text, forbidden_character, neutralised

BIDI_CONTROLS = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}

texts = st.text(
    st.characters(blacklist_categories=("Cs",))
    | st.sampled_from(["\r", "\n", "\t", "\x1b", "\x7f", "\x85", "\u2028", "\u202e", "\u2066"]),
    max_size=40,
)


def _refused(char: str) -> bool:
    """Controls (Cc), line and paragraph separators (Zl, Zp), bidirectional embeddings,
    overrides and isolates: read off the character database, not the module's table."""
    category = unicodedata.category(char)
    return category in ("Cc", "Zl", "Zp") or unicodedata.bidirectional(char) in BIDI_CONTROLS


@given(texts)
def test_user_text_refuses_exactly_controls_separators_and_bidi_controls(text: str) -> None:
    bad = [i for i, char in enumerate(text) if _refused(char)]
    assert forbidden_character(text) == (bad[0] if bad else -1)
    safe = neutralised(text)
    assert len(safe) == len(text) and forbidden_character(safe) == -1
    assert safe == text if not bad else all(safe[i] == "\ufffd" for i in bad)
    reader = FieldReader("chat", {"text": text})
    if text and not bad:
        assert check_user_text(text, "text", 40) == text == reader.string("text", 40)
    else:
        with pytest.raises(ProtocolError, match="text"):
            check_user_text(text, "text", 40)
        with pytest.raises(ProtocolError, match="'text'"):
            reader.string("text", 40)
