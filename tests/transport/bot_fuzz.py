"""Hypothesis strategies of bad Bot API requests (test_bot_api_bad_input.py).

Every request drawn here must be refused, *by construction*, not by luck: no strategy can build a
request that the server should carry out. The cast the test sets up (``Live`` values filled in
when a request is sent):

* ``robo`` (credential ``bot``), a bot account in a Mini-Shogi game (``Live("game")``) against
  ``alice`` after her first move ``a1b2`` (:data:`OPENING`), robo to move; robo's event
  stream and game stream are open. Robo's valid token on its real game appears only with a move
  the adjudicator refuses (:func:`~bot_requests.refused_move`), a legal move with a bad
  ``offeringDraw`` (refused before the move), a bad chat body or a bad offer answer; resign and
  abort (always valid there) and the answers ``yes``/``no`` never. The test checks the sample
  for this (``test_the_sample_reaches_the_bots_own_game_and_every_endpoint``).
* ``tron`` (``other``), an idle bot: only where it is no party (robo's game, a challenge
  answered long ago), or the computer challenge with at least one bad parameter.
* ``alice`` (``human``, a login session token): not a bot, so refused by every bot endpoint;
  she owns no API token, so revoking any id is a 404; never the upgrade (it would work) nor
  creating a token with a valid description.
* bad credentials (:data:`BAD_CREDENTIALS`) anywhere: nothing is done without an account.

Names and game ids are never those of a real account or game: names skip the cast (any case);
a well-formed but unknown game id is longer than the hub's generated ones.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from bot_requests import (
    BAD_CREDENTIALS,
    ENDPOINTS,
    FORM,
    GAME_ACTIONS,
    JSON,
    LEGAL,
    PUBLIC,
    Body,
    Call,
    Live,
    Part,
    any_body,
    bad_move,
    broken_body,
    codes,
    form,
    json_object,
    junk_game,
    junk_id,
    junk_name,
    not_a_number_of,
    path_of,
    refused_move,
    segment,
    wrong_password,
)
from fuzz_values import CONTROL_CHARACTERS, draw_examples
from hypothesis import strategies as st

from server.hub.user_text import forbidden_character
from server.rules import VARIANT_NAMES
from server.transport.http_api.app import MAX_BODY_BYTES

# --- robo's own game, robo's valid token --------------------------------------------------------


@st.composite
def own_game_calls(draw: st.DrawFn, kind: str) -> Call:
    """Robo on its real game, its turn: bad moves (``kind`` ``move``), a legal move with a bad
    flag (``flag``), bad chat bodies (``chat``), bad offer answers (``answer``)."""
    game = Live("game")
    if kind == "move":
        uci = draw(bad_move)
        query = draw(st.sampled_from(["", "", "offeringDraw=true", "offeringDraw=false"]))
        path = path_of(ENDPOINTS["move"][1], game=game, move=segment(uci))
        # 400, or 405 when no route takes the move (empty, a brace: :class:`Call`).
        return Call("own_move", "POST", path, "bot", expect=codes(400), query=query)
    if kind == "flag":
        # A legal move with a bad offeringDraw is refused before the move is played.
        uci = draw(st.sampled_from(LEGAL))
        value = draw(
            st.text(min_size=1, max_size=10).filter(lambda s: s.lower() not in ("true", "false"))
        )
        path = path_of(ENDPOINTS["move"][1], game=game, move=segment(uci))
        return Call(
            "own_move_flag",
            "POST",
            path,
            "bot",
            expect=codes(400),
            query=urlencode({"offeringDraw": value}),
        )
    if kind == "chat":
        body, content_type = draw(bad_chat_body())
        expect = codes(413) if body is not None and len(body) > MAX_BODY_BYTES else codes(400)
        path = path_of(ENDPOINTS["chat"][1], game=game)
        return Call("own_chat", "POST", path, "bot", body, content_type, expect)
    action = draw(st.sampled_from(["draw", "takeback"]))
    answer = draw(st.text(max_size=20).filter(lambda s: s not in ("", ".", "..", "yes", "no")))
    path = path_of(ENDPOINTS[action][1], game=game, answer=segment(answer))
    return Call("own_answer", "POST", path, "bot", expect=codes(404))


valid_chat_text = st.text(min_size=1, max_size=300).filter(
    lambda s: forbidden_character(s) < 0 and not any(0xD800 <= ord(c) <= 0xDFFF for c in s)
)


@st.composite
def bad_chat_body(draw: st.DrawFn) -> Body:
    """A chat body with at least one defect: a room that is neither, a text that is empty, too
    long, holds NUL or a lone surrogate, a value that is no scalar, or a broken body."""
    if draw(st.integers(0, 3)) == 0:
        return draw(broken_body)
    fields: dict[str, Any] = {}
    if draw(st.booleans()):
        fields["room"] = draw(st.sampled_from(["player", "spectator"]))
    fields["text"] = draw(valid_chat_text)
    defect = draw(
        st.sampled_from(["room", "empty", "long", "nul", "surrogate", "nested", "control"])
    )
    if defect == "room":
        fields["room"] = draw(
            st.text(max_size=20).filter(lambda s: s not in ("player", "spectator"))
        )
    elif defect == "empty":
        fields["text"] = ""
    elif defect == "long":
        fields["text"] = draw(st.text(alphabet="ab€字", min_size=301, max_size=600))
    elif defect == "nul":
        fields["text"] += "\x00"
    elif defect == "control":  # a line break, an escape, an override (server.hub.user_text)
        text = fields["text"][:299]
        at = draw(st.integers(0, len(text)))
        fields["text"] = text[:at] + draw(CONTROL_CHARACTERS) + text[at:]
    elif defect == "surrogate":
        # Only JSON can carry a lone surrogate (escaped); a form's bytes would be bad UTF-8.
        return json.dumps({**fields, "text": fields["text"] + "\ud800"}).encode(), JSON
    else:
        return json_object({**fields, "text": [fields["text"]]})
    if defect == "empty" and draw(st.booleans()):
        del fields["text"]  # absent is empty
    return draw(st.sampled_from([form(fields), json_object(fields)]))


# --- someone else's turn: tron (no party) and alice (no bot) on robo's game ---------------------


@st.composite
def wrong_party_calls(draw: st.DrawFn, who: str) -> Call:
    """Valid requests on robo's game, but by someone who may not make them."""
    game = Live("game")
    if who == "other":
        # Tron is no player of the game: it may watch it (a stream is refused: not its game),
        # never act in it. Not chat: a spectator may chat.
        action = draw(
            st.sampled_from(["move", "abort", "resign", "draw", "takeback", "game_stream"])
        )
        uci = draw(st.sampled_from(LEGAL))  # legal for robo, the player to move
        answer = draw(st.sampled_from(["yes", "no"]))
        method, template = ENDPOINTS[action]
        path = path_of(template, game=game, move=uci, answer=answer)
        return Call("tron_on_game", method, path, "other", expect=codes(400, 404))
    action = draw(st.sampled_from(GAME_ACTIONS))
    uci = draw(st.sampled_from(LEGAL))
    answer = draw(st.sampled_from(["yes", "no"]))
    body, kind = draw(any_body) if action == "chat" else (None, None)
    method, template = ENDPOINTS[action]
    path = path_of(template, game=game, move=uci, answer=answer)
    expect = codes(400, 413) if action == "chat" else codes(400)
    return Call("alice_on_game", method, path, "human", body, kind, expect)


# --- play the computer: tron (idle, so only the bad parameter refuses it) -----------------------


@st.composite
def ai_calls(draw: st.DrawFn) -> Call:
    """``POST /api/challenge/ai`` by an idle bot: valid fields plus one to three defects."""
    if draw(st.integers(0, 4)) == 0:
        body, kind = draw(broken_body)
    else:
        fields: dict[str, Any] = {"variant": draw(st.sampled_from(VARIANT_NAMES))}
        if draw(st.booleans()):
            fields["level"] = str(draw(st.integers(1, 8)))
        if draw(st.booleans()):
            fields["color"] = draw(st.sampled_from(["white", "black", "random"]))
        if draw(st.booleans()):
            fields["clock.limit"] = str(draw(st.integers(60, 600)))
            fields["clock.increment"] = str(draw(st.integers(0, 5)))
        defects = draw(
            st.lists(
                st.sampled_from(
                    ["level", "level_range", "color", "days", "fen", "clock", "variant"]
                ),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        for defect in defects:
            if defect == "level":
                fields["level"] = draw(not_a_number_of(9))
            elif defect == "level_range":
                fields["level"] = str(draw(st.sampled_from([0, 9, 10, 99, 123456789])))
            elif defect == "color":
                fields["color"] = draw(
                    st.text(max_size=10).filter(lambda s: s not in ("white", "black", "random"))
                )
            elif defect in ("days", "fen"):
                fields[defect] = draw(st.text(min_size=1, max_size=20))
            elif defect == "clock":
                name = draw(
                    st.sampled_from(
                        ["clock.limit", "clock.increment", "clock.byoyomi", "clock.periods"]
                    )
                )
                fields[name] = draw(not_a_number_of(9))
            else:
                fields["variant"] = draw(
                    st.text(max_size=20).filter(lambda s: s.strip().lower() not in VARIANT_NAMES)
                )
        body, kind = draw(st.sampled_from([form(fields), json_object(fields)]))
    expect = codes(413) if body is not None and len(body) > MAX_BODY_BYTES else codes(400)
    return Call("ai", "POST", path_of(ENDPOINTS["challenge_ai"][1]), "other", body, kind, expect)


# --- tokens: list, revoke, create with bad input ------------------------------------------------

TOKEN_ENDPOINTS = (
    "token_create",
    "token_list",
    "token_list_form",
    "token_revoke",
    "token_revoke_form",
)
TOKEN_CASES = ("alice_revoke", "alice_create", "api_token_manages", "password", "revoke_own")
token_id = st.one_of(st.sampled_from([Live("robo_token"), Live("tron_token")]), junk_id)


@st.composite
def token_calls(draw: st.DrawFn, kind: str) -> Call:
    """Token management refused: ``kind`` names the case (below)."""
    if kind == "alice_revoke":
        # Alice (her login session) owns no API token: robo's, tron's and made-up ids are 404.
        action = draw(st.sampled_from(["token_revoke", "token_revoke_form"]))
        method, template = ENDPOINTS[action]
        return Call(
            "alice_revoke", method, path_of(template, id=draw(token_id)), "human", expect=codes(404)
        )
    if kind == "alice_create":
        # Alice may make a token, but not with a description over 100 characters, nor one
        # holding a control character inside it (server.hub.user_text).
        description = draw(
            st.text(alphabet="ab €", min_size=101, max_size=200).filter(
                lambda s: len(s.strip()) > 100
            )
            | st.builds(lambda bad: f"my{bad}bot", CONTROL_CHARACTERS)
        )
        body, kind = form({"description": description})
        return Call(
            "alice_create", "POST", ("/", "api", "/", "token"), "human", body, kind, codes(400)
        )
    if kind == "api_token_manages":
        # An API token manages no tokens (not even its own account's).
        action = draw(st.sampled_from(TOKEN_ENDPOINTS))
        method, template = ENDPOINTS[action]
        path = path_of(template, id=draw(token_id))
        return Call(
            "api_token_manages",
            method,
            path,
            draw(st.sampled_from(["bot", "other"])),
            expect=codes(403),
        )
    if kind == "password":
        # By name and password, without a session: a wrong password, an unknown name, or none.
        action = draw(st.sampled_from(TOKEN_ENDPOINTS))
        method, template = ENDPOINTS[action]
        fields = {
            "name": draw(st.sampled_from(["robo", "tron", "alice", "nobody_here", ""])),
            "password": draw(wrong_password),
            "description": "x",
        }
        if draw(st.booleans()):
            del fields[draw(st.sampled_from(["name", "password"]))]
        body, content_type = draw(st.sampled_from([form(fields), json_object(fields)]))
        # A form refuses NUL in any field before the password is checked (JSON does not).
        nul = content_type == FORM and "\x00" in fields.get("password", "")
        path = path_of(template, id=draw(token_id))
        return Call(
            "password", method, path, "none", body, content_type, codes(400 if nul else 401)
        )
    assert kind == "revoke_own", kind
    # ``DELETE /api/token`` revokes the API token sent: never a valid one.
    who = draw(st.sampled_from(["human", *BAD_CREDENTIALS]))
    return Call("revoke_own", "DELETE", ("/", "api", "/", "token"), who, expect=codes(401))


# --- strangers: bad credentials on every endpoint -----------------------------------------------


@dataclass(frozen=True)
class Stranger:
    """What a stranger sends, for any endpoint (:func:`stranger_call` picks the parts it has)."""

    who: str
    name: str
    game: Part
    move: str
    answer: str
    id: Part
    body: Body


strangers = st.builds(
    Stranger,
    who=st.sampled_from(BAD_CREDENTIALS),
    name=junk_name,
    game=st.just(Live("game")) | junk_game,
    move=(st.sampled_from(LEGAL) | bad_move).map(lambda uci: segment(uci) or "a5a4"),
    answer=st.sampled_from(["yes", "no"]) | junk_name,
    id=st.just(Live("answered")) | token_id,
    body=st.just((None, None)) | any_body,
)


def stranger_call(endpoint: str, drawn: Stranger) -> Call:
    """Bad credentials on ``endpoint`` with the drawn path parts and body."""
    method, template = ENDPOINTS[endpoint]
    path = path_of(
        template,
        name=drawn.name,
        game=drawn.game,
        move=drawn.move,
        answer=drawn.answer,
        id=drawn.id,
    )
    body, kind = drawn.body if method != "GET" else (None, None)
    # Refused for the credentials, or before them for a bad body or path part.
    expect = frozenset() if endpoint in PUBLIC else codes(400, 401, 403, 404, 405, 413)
    return Call(f"stranger_{endpoint}", method, path, drawn.who, body, kind, expect)


# --- valid tokens with nothing to act on --------------------------------------------------------


NOTHING_THERE_CASES = ("no_challenge", "no_player", "no_game", "upgrade_again", "online_method")


@st.composite
def nothing_there_calls(draw: st.DrawFn, kind: str) -> Call:
    """Valid tokens on what does not exist (games, players, challenges) or is done already."""
    who = draw(st.sampled_from(["bot", "other", "human"]))
    if kind == "no_challenge":
        action = draw(st.sampled_from(["accept", "decline", "cancel"]))
        method, template = ENDPOINTS[action]
        path = path_of(template, id=draw(st.just(Live("answered")) | junk_id))
        return Call("no_challenge", method, path, who, expect=codes(404))
    if kind == "no_player":
        # To no one (a name no account has); robo is playing, so refused anyway.
        body, kind = form({"variant": draw(st.sampled_from(VARIANT_NAMES))})
        path = path_of(ENDPOINTS["challenge"][1], name=draw(junk_name))
        return Call(
            "no_player",
            "POST",
            path,
            draw(st.sampled_from(["bot", "other"])),
            body,
            kind,
            codes(400, 404),
        )
    if kind == "no_game":
        action = draw(
            st.sampled_from(["game_stream", "move", "abort", "resign", "draw", "takeback", "chat"])
        )
        method, template = ENDPOINTS[action]
        path = path_of(template, game=draw(junk_game), move="a5a4", answer="yes")
        body, kind = form({"text": "hi"}) if action == "chat" else (None, None)
        return Call(
            "no_game",
            method,
            path,
            draw(st.sampled_from(["bot", "other"])),
            body,
            kind,
            codes(400, 404),
        )
    if kind == "upgrade_again":  # a second upgrade
        return Call(
            "upgrade_again",
            "POST",
            path_of(ENDPOINTS["upgrade"][1]),
            draw(st.sampled_from(["bot", "other"])),
            expect=codes(400),
        )
    assert kind == "online_method", kind
    # The list of bots online is read with GET only (any other method: 405).
    method = draw(st.sampled_from(["POST", "PUT", "DELETE"]))
    return Call("online_method", method, path_of(ENDPOINTS["online"][1]), who, expect=codes(405))


@st.composite
def online_calls(draw: st.DrawFn) -> Call:
    """``GET /api/bot/online`` with any credentials and junk query: always the same list."""
    query = draw(
        st.sampled_from(["", "nb=1", "nb=-1", "nb=%FF", "x=%00"])
        | st.text(max_size=20).map(lambda s: quote(s, safe="=&"))
    )
    who = draw(st.sampled_from(["bot", "other", "human", *BAD_CREDENTIALS]))
    return Call(
        "online", "GET", path_of(ENDPOINTS["online"][1]), who, expect=codes(200), query=query
    )


# --- any method on any path: a status line always ----------------------------------------------

OTHER_METHODS = ("POST", "PUT", "DELETE", "PATCH", "OPTIONS")
"""Methods websockets' server never read (a connection got no answer at all before 34b24c5); GET and
HEAD of a page are answered with the page (tests/transport/test_http_methods.py)."""
PAGE_PATHS: tuple[tuple[Part, ...], ...] = (
    ("/", ""),
    ("/", "review"),
    ("/", "lobby"),
    ("/", "healthz"),
    ("/", "ws"),
    ("/", "api", "/", "variants"),
    ("/", "api", "/", "games"),
    ("/", "game", "/", "abcdefgh"),
)
"""Paths the websocket server's pages answer to a GET: any other method is a 405."""


@st.composite
def any_method_calls(draw: st.DrawFn) -> Call:
    """A method a path is not served by: 405 on a page, 404 where nothing is served (paths no
    route nor page has, under the API's prefixes or not)."""
    method = draw(st.sampled_from(OTHER_METHODS))
    who = draw(st.sampled_from(["none", "bot", "human", *BAD_CREDENTIALS]))
    if draw(st.integers(0, 2)) == 0:
        return Call("any_method_page", method, draw(st.sampled_from(PAGE_PATHS)), who, expect=codes(405))
    junk = draw(junk_name).removeprefix(".")
    path: tuple[Part, ...] = draw(
        st.sampled_from(
            [
                ("/", "x-" + junk),
                ("/", "api", "/", "tournaments"),
                ("/", "api", "/", "tournament", "/", "x", "/", "x-" + junk),
                ("/", "api", "/", "bot", "/", "x-" + junk),
                ("/", "fishnet", "/", "x-" + junk),
                ("/", "static", "/", "x-" + junk),
            ]
        )
    )
    return Call("any_method_nowhere", method, path, who, expect=codes(404))


SAMPLES: list[tuple[st.SearchStrategy[Call], int]] = [
    (own_game_calls("move"), 100),
    (own_game_calls("flag"), 10),
    (own_game_calls("chat"), 40),
    (own_game_calls("answer"), 16),
    (wrong_party_calls("other"), 20),
    (wrong_party_calls("human"), 20),
    (ai_calls(), 60),
    *((token_calls(kind), 12) for kind in TOKEN_CASES),
    *((nothing_there_calls(kind), 10) for kind in NOTHING_THERE_CASES),
    (online_calls(), 15),
    (any_method_calls(), 30),
]
"""Each strategy and how many requests of it the test sends (the same ones on every run)."""
STRANGERS_PER_ENDPOINT = 8

UNICODE_DIGITS = ("²", "٣", "５")
"""Digits ``str.isdigit`` accepts but no client means (``int`` refuses ``²``, reads ``٣`` as 3)."""


def edge_calls() -> list[Call]:
    """Inputs too rare for the draws to be sure to hold, each sent once: Unicode digits and
    out-of-range numbers in every numeric path part and field, moves at the length limit."""
    calls: list[Call] = []
    numbers = [*(segment(d) for d in UNICODE_DIGITS), "0", "00", str(2**53 + 1), "9" * 16]
    for number in numbers:
        for action in ("accept", "decline", "cancel"):
            path = path_of(ENDPOINTS[action][1], id=number)
            calls.append(Call("edge_challenge_id", "POST", path, "bot", expect=codes(404)))
        for action in ("token_revoke", "token_revoke_form"):
            method, template = ENDPOINTS[action]
            calls.append(
                Call(
                    "edge_token_id",
                    method,
                    path_of(template, id=number),
                    "human",
                    expect=codes(404),
                )
            )
    for field in ("level", "clock.limit", "clock.increment", "clock.byoyomi", "clock.periods"):
        for digit in UNICODE_DIGITS:
            body, kind = form({"variant": "minishogi", field: digit})
            path = path_of(ENDPOINTS["challenge_ai"][1])
            calls.append(Call("edge_ai", "POST", path, "other", body, kind, codes(400)))
    # (Blanks around a move are accepted: "a5a4" and 28 blanks is a move, not an edge.)
    edges = ("a1a1" + "+" * 28, "a1a1" + "+" * 29, "\x00", "a5a4\x00", "a5a4\ud800", "ａ５ａ４", "")
    for uci in edges:
        assert refused_move(uci), uci
        path = path_of(ENDPOINTS["move"][1], game=Live("game"), move=segment(uci))
        calls.append(Call("edge_move", "POST", path, "bot", expect=codes(400)))
    return calls


@functools.cache
def sample() -> tuple[Call, ...]:
    """The requests the test sends, the same on every run: the draws of :data:`SAMPLES`, the
    strangers' draws spread over every endpoint in turn, then :func:`edge_calls`."""
    calls = [c for strategy, count in SAMPLES for c in draw_examples(strategy, count)]
    endpoints = sorted(ENDPOINTS)
    drawn = draw_examples(strangers, STRANGERS_PER_ENDPOINT * len(endpoints))
    calls += [stranger_call(endpoints[i % len(endpoints)], d) for i, d in enumerate(drawn)]
    return (*calls, *edge_calls())
