"""Today's frame parser against msgspec Structs: the cost of decode + validate, and whether
msgspec refuses every frame today's parser refuses (issue 22).

Run by hand (never in CI; msgspec is not a dependency of the project)::

    pip install --target /tmp/msgspec msgspec
    PYTHONPATH=.:/tmp/msgspec .venv/bin/python bench/bench_codec.py

Today: ``codec.decode`` (the hardened standard-library decoder) then ``parse_command``
(:func:`~server.hub.commands.parse_envelope` + the command's :class:`FieldReader` schema), as the
transport does for every hub command. msgspec: one ``msgspec.json.Decoder`` over a tagged union
of frame Structs (tag ``t``, the payload a Struct under ``d`` with the same bounds as
``Meta`` constraints, unknown fields forbidden), plus what msgspec cannot say by itself and the
hub needs (text without NUL nor lone surrogate, ``range`` ordered), timed twice: the Struct
alone, and turned into today's command dataclass (what the hub consumes).

The second table feeds both parsers the same malformed frames (every field of the four commands
mistyped, missing, null, out of range, doubled; bad envelopes) and counts the frames one
accepts and the other refuses, and the refusals that lose the frame's ack id (today's
transport reads it from the decoded object to address the error; a typed decode that fails
gives nothing back).

Times are CPU time of this process (``time.process_time_ns``), the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_frames import best_ns  # noqa: E402  (the same timer as the frame bench)

from server.hub import commands as cmd  # noqa: E402
from server.hub.game_ids import GAME_ID_MAX_LENGTH  # noqa: E402
from server.rules.time_control import Byoyomi, Fischer, TimeControl  # noqa: E402
from server.transport import codec  # noqa: E402

FRAMES = {
    "move": '{"t":"move","d":{"game":"u8jzPde0","ply":31,"move":"c4c5+"},"a":6}',
    "join": '{"t":"join","d":{"game":"u8jzPde0","v":120},"a":"j-7"}',
    "seek": '{"t":"seek","a":2,"d":{"variant":"minishogi","tc":{"kind":"byoyomi","main_s":300,'
    '"period_s":10,"periods":3},"rated":true,"colour":"first","range":[1400,1800]}}',
    "chat (accents)": '{"t":"chat","d":{"game":"u8jzPde0","text":"bien jou\\u00e9, élève"}}',
}

# --- the same four commands as msgspec Structs -----------------------------------------------

Ack = (
    Annotated[int, Meta(ge=-cmd.MAX_ID, le=cmd.MAX_ID)]
    | Annotated[str, Meta(min_length=1, max_length=cmd.MAX_ACK_LENGTH)]
)
GameId = Annotated[str, Meta(min_length=1, max_length=GAME_ID_MAX_LENGTH)]
Name = Annotated[str, Meta(min_length=1, max_length=cmd.MAX_NAME_LENGTH)]
Rating = Annotated[int, Meta(ge=0, le=cmd.MAX_RATING)]


class _Payload(Struct, forbid_unknown_fields=True, frozen=True):
    pass


class MoveD(_Payload):
    game: GameId
    ply: Annotated[int, Meta(ge=1, le=cmd.MAX_PLY)]
    move: Annotated[str, Meta(min_length=1, max_length=cmd.MAX_MOVE_LENGTH)]


class JoinD(_Payload):
    game: GameId
    v: Annotated[int, Meta(ge=0, le=cmd.MAX_ID)] | None = None


class ChatD(_Payload):
    game: GameId
    text: Annotated[str, Meta(min_length=1, max_length=cmd.MAX_CHAT_LENGTH)]


class FischerD(_Payload, tag_field="kind", tag="fischer"):
    base_s: Annotated[int, Meta(ge=cmd.MIN_FISCHER_BASE_S, le=cmd.MAX_BASE_S)]
    inc_s: Annotated[int, Meta(ge=0, le=cmd.MAX_INCREMENT_S)]


class ByoyomiD(_Payload, tag_field="kind", tag="byoyomi"):
    main_s: Annotated[int, Meta(ge=0, le=cmd.MAX_BASE_S)]
    period_s: Annotated[int, Meta(ge=1, le=cmd.MAX_PERIOD_S)]
    periods: Annotated[int, Meta(ge=1, le=cmd.MAX_PERIODS)]


class SeekD(_Payload):
    variant: Name
    tc: FischerD | ByoyomiD
    rated: bool | None = None
    colour: Literal["first", "second", "random"] | None = None
    range: tuple[Rating, Rating] | None = None
    manual: bool | None = None


class _Frame(Struct, tag_field="t", forbid_unknown_fields=True, frozen=True):
    a: Ack | None = None


class MoveF(_Frame, tag="move"):
    d: MoveD | None = None


class JoinF(_Frame, tag="join"):
    d: JoinD | None = None


class ChatF(_Frame, tag="chat"):
    d: ChatD | None = None


class SeekF(_Frame, tag="seek"):
    d: SeekD | None = None


DECODER = msgspec.json.Decoder(MoveF | JoinF | ChatF | SeekF)


class Refused(ValueError):
    pass


def _text(value: str) -> str:
    if not cmd.valid_text(value):
        raise Refused("text must be valid Unicode without NUL")
    return value


def msgspec_struct(text: str) -> _Frame:
    """Decode + validate with msgspec, plus the checks msgspec has no constraint for."""
    frame = DECODER.decode(text)
    d = frame.d  # type: ignore[attr-defined]
    if d is None:
        raise Refused("missing payload")
    if isinstance(frame.a, str):
        _text(frame.a)
    if isinstance(d, MoveD):
        _text(d.game), _text(d.move)
    elif isinstance(d, JoinD):
        _text(d.game)
    elif isinstance(d, ChatD):
        _text(d.game), _text(d.text)
    elif isinstance(d, SeekD):
        _text(d.variant)
        if d.range is not None and d.range[0] > d.range[1]:
            raise Refused("range must be ordered")
    return frame


def _control(tc: FischerD | ByoyomiD) -> TimeControl:
    if isinstance(tc, FischerD):
        return Fischer.from_seconds(tc.base_s, tc.inc_s)
    return Byoyomi.from_seconds(tc.main_s, tc.period_s, tc.periods)


def msgspec_command(text: str) -> cmd.Command:
    """The Struct turned into today's command dataclass (what the hub consumes)."""
    frame = msgspec_struct(text)
    d, a = frame.d, frame.a  # type: ignore[attr-defined]
    if isinstance(d, MoveD):
        return cmd.MoveCommand(d.game, d.ply, d.move, ack=a)
    if isinstance(d, JoinD):
        return cmd.JoinCommand(d.game, d.v, ack=a)
    if isinstance(d, ChatD):
        return cmd.ChatCommand(d.game, d.text, ack=a)
    assert isinstance(d, SeekD)
    return cmd.SeekCommand(
        d.variant,
        _control(d.tc),
        rated=bool(d.rated),
        colour=d.colour or "random",
        rating_range=d.range,
        manual=bool(d.manual),
        ack=a,
    )


def today(text: str) -> cmd.Command:
    return cmd.parse_command(codec.decode(text))


# --- malformed frames --------------------------------------------------------------------------

BAD_VALUES: list[object] = [None, True, 1.5, -1, 0, 2**60, "", "x" * 400, "a\x00b", [], {}]


def malformed() -> list[str]:
    """Every field of the four frames replaced by each bad value, dropped, or joined by an
    unknown one; bad envelopes; lone surrogates (written as JSON escapes)."""
    out: list[str] = []
    for text in FRAMES.values():
        frame = json.loads(text)
        payload = frame["d"]
        for name in payload:
            for value in BAD_VALUES:
                out.append(json.dumps({**frame, "d": {**payload, name: value}}))
            out.append(json.dumps({**frame, "d": {k: v for k, v in payload.items() if k != name}}))
        out.append(json.dumps({**frame, "d": {**payload, "extra": 1}}))
        for value in BAD_VALUES:
            out.append(json.dumps({**frame, "a": value}))
        out.append(json.dumps({**frame, "x": 1}))
        out.append(json.dumps({**frame, "t": "mvoe"}))
        out.append(json.dumps({**frame, "d": [1]}))
        out.append(json.dumps([frame]))
    seek = json.loads(FRAMES["seek"])
    for name in ("kind", "main_s", "period_s", "periods"):
        for value in BAD_VALUES:
            out.append(
                json.dumps({**seek, "d": {**seek["d"], "tc": {**seek["d"]["tc"], name: value}}})
            )
    out.append(json.dumps({**seek, "d": {**seek["d"], "range": [1800, 1400]}}))
    out.append(json.dumps({**seek, "d": {**seek["d"], "range": [1, 2, 3]}}))
    out.append('{"t":"chat","d":{"game":"g","text":"\\ud800"}}')
    out.append('{"t":"move","d":{"game":"g","ply":1,"move":"e2e4"},"a":"\\udfff"}')
    out.append('{"t":"move","d":{"game":"g","ply":1,"move":"e2e4"},"a":1,"a":2}')
    out.append('{"t":"move","d":{"game":"g","ply":1.0,"move":"e2e4"}}')
    out.append('{"t":"move","d":{"game":"g","ply":1e0,"move":"e2e4"}}')
    out.append('{"t":"move","d":{"game":"g","ply":NaN,"move":"e2e4"}}')
    return out


def accepts(parse: Callable[[str], Any], text: str) -> bool:
    try:
        parse(text)
    except (ValueError, msgspec.MsgspecError):
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"msgspec {msgspec.__version__}, today's JSON library {codec.JSON_LIBRARY}")
    print(f"{'frame':<16} {'today ns':>9} {'msgspec ns':>11} {'+ command ns':>13} {'ratio':>6}")
    for name, text in FRAMES.items():
        assert today(text) == msgspec_command(text), name
        t = best_ns(lambda text=text: today(text), args.number, args.repeat)
        m = best_ns(lambda text=text: msgspec_struct(text), args.number, args.repeat)
        c = best_ns(lambda text=text: msgspec_command(text), args.number, args.repeat)
        print(f"{name:<16} {t:>9.0f} {m:>11.0f} {c:>13.0f} {t / c:>5.1f}x")

    bad = malformed()
    differ = [
        (t, accepts(today, t)) for t in bad if accepts(today, t) != accepts(msgspec_command, t)
    ]
    both = sum(not accepts(today, t) and not accepts(msgspec_command, t) for t in bad)
    lost_ack = 0
    for text in bad:
        if accepts(msgspec_command, text):
            continue
        try:
            obj = codec.decode(text)
        except codec.DecodeError:
            continue
        if cmd.ack_of(obj) is not None:
            lost_ack += 1  # today answers with it; msgspec's failed decode has none to give
    print(f"\n{len(bad)} malformed frames: {both} refused by both, {len(differ)} differ")
    for text, today_accepts in differ:
        print(f"  {'today accepts' if today_accepts else 'msgspec accepts'}: {text[:90]}")
    print(f"refusals whose ack id msgspec cannot give back: {lost_ack}")


if __name__ == "__main__":
    main()
