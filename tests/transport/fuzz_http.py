"""Hypothesis strategies of GET targets for the HTTP fuzz test (test_transport_fuzz.py): the
review API's paths with valid query parameters, one or two of them fuzzed (bad text, percent
escapes, huge numbers, edge dates), or any names and values at all; the other endpoints with
junk in the path.
"""

from __future__ import annotations

from urllib.parse import quote

from fuzz_values import BOOLEANS, bad_text, plain_text
from hypothesis import strategies as st

LIST_FIELDS = ("player", "variant", "result", "status", "since", "until", "limit", "offset", "cursor")
edge_dates = st.sampled_from(
    [
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
        "0001-01-01",
        "9999-12-31T23:59:59.999999Z",
        "2024-02-30",
        "2024-05-01T25:00:00",
        "2024-05-01T12:00:00+24:00",
        "2024-05-01T12:00:00+23:59",
        "20240501",
        "2024-W18-3",
    ]
)
query_value = st.one_of(
    plain_text.map(lambda text: quote(text, safe="")),
    bad_text.map(lambda text: quote(text.encode("utf-8", "surrogatepass"), safe="")),
    st.sampled_from(["%00", "a%00b", "%FF", "%ED%A0%80", "%C0%80", "%", "%G1", "+", "%2B", ""]),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.text(alphabet="0123456789", min_size=30, max_size=5000),
    edge_dates.map(lambda text: quote(text, safe="")),
    st.sampled_from(["minishogi", "spartan", "1-0", "1%2F2-1%2F2", "finished", "5", "100", "101"]),
)
query_name = st.one_of(
    st.sampled_from((*LIST_FIELDS, "ply")),
    plain_text.map(lambda t: quote(t, safe="")),
    st.just("%00"),
)
VALID_PARAMS = {
    "player": ["a", "Guest-1", "%C3%A9l%C3%A8ve"],
    "variant": ["minishogi", "spartan"],
    "result": ["1-0", "1%2F2-1%2F2"],
    "status": ["finished", "started"],
    "since": ["2024-01-01", "0001-01-01", "2024-05-01T12:00:00%2B02:00"],
    "until": ["9999-12-31", "2100-01-01T00:00:00Z"],
    "limit": ["1", "100"],
    "offset": ["0", "3"],
}
OTHER_PATHS = [
    "/healthz",
    "/api/variants",
    "/",
    "/game/{junk}",
    "/static/{junk}",
    "/{junk}",
    "/ws",
    "/api",
    "/api/{junk}",
]
GAME_PATHS = [
    "/api/games/{game}",
    "/api/games/{game}.pgn",
    "/api/games/{game}.kif",
    "/api/games/{game}.usi",
    "/api/games/{game}.zip",
    "/api/games/{junk}",
    "/api/games/{junk}.pgn",
    "/api/games/{game}/more",
]


@st.composite
def http_targets(draw: st.DrawFn) -> str:
    """A GET target on the review API: mostly valid parameters with one or two fuzzed ones
    (so that the fuzzed value reaches the store), or any names and values at all."""
    choice = draw(st.integers(0, 7))
    if choice == 0:
        # The other endpoints take no parameters: any query is ignored, never a failure.
        path = draw(st.sampled_from(OTHER_PATHS))
        junk = draw(plain_text.map(lambda text: quote(text, safe="")) | st.sampled_from(["%00", "%FF"]))
        path = path.replace("{junk}", junk or "x")
        params = {}
    elif choice <= 2:
        path = draw(st.sampled_from(GAME_PATHS))
        junk = draw(
            plain_text.map(lambda text: quote(text, safe="")) | st.sampled_from(["%00", "%FF", "x" * 40])
        )
        path = path.replace("{junk}", junk or "x")
        params = {"ply": draw(st.sampled_from(["0", "1"]))} if draw(BOOLEANS) else {}
    else:
        path = draw(st.sampled_from(["/api/games", "/api/games/"]))
        names = draw(st.lists(st.sampled_from(sorted(VALID_PARAMS)), max_size=4, unique=True))
        params = {name: draw(st.sampled_from(VALID_PARAMS[name])) for name in names}
    pairs = list(params.items())
    for _ in range(draw(st.integers(0, 2))):
        name = draw(query_name)
        value = draw(edge_dates.map(lambda text: quote(text, safe="")) if name in ("since", "until") and draw(BOOLEANS) else query_value)
        if name in params and draw(BOOLEANS):
            pairs = [(n, value if n == name else v) for n, v in pairs]
        else:
            pairs.append((name, value))
    if not pairs:
        return path
    return path + "?" + "&".join(f"{name}={value}" for name, value in pairs)
