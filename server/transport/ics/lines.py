"""FICS text lines other than boards: game start and end, seeks, challenges, lists.

Each function returns text without a line end. The forms are the ones ICS clients parse
(XBoard's ``backend.c``): ``Creating: alice (1500) bob (++++) unrated spartan 5 0``,
``{Game 7 (alice vs. bob) Creating unrated spartan match.}``,
``{Game 7 (alice vs. bob) bob resigns} 1-0``, ``<s> 8 w=alice ti=00 rt=1500  t=5 i=0 r=u
tp=spartan c=? rr=0-9999 a=t f=f``, ``Challenge: alice (1500) bob (1500) unrated spartan 5 0.``
"""

from __future__ import annotations

from server.hub.payloads import ChallengeView, PlayerView, SeekView, TimeControlView
from server.transport.ics.variants import ics_variant

__all__ = [
    "challenge_text",
    "clock_words",
    "computer_notice",
    "continuing_line",
    "creating_lines",
    "end_line",
    "end_reason",
    "kind_words",
    "rating_text",
    "seek_announcement",
    "seek_line",
    "sought_line",
    "title_mark",
]


def title_mark(guest: bool, computer: bool) -> str:
    """FICS's title after a handle where it shows titles (``who``, ``sought``, ``finger``):
    ``(U)`` unregistered (a guest), ``(C)`` a computer (the server's computer player or a bot
    account). FICS never puts titles in game lines (``Creating:``, ``{Game N (a vs. b) …}``,
    the observe header, ``games``, style 12): clients read plain handles there."""
    return "(U)" if guest else "(C)" if computer else ""


def _is_computer(player: PlayerView) -> bool:
    return bool(player.get("computer") or player.get("bot"))


def computer_notice(player: PlayerView) -> list[str]:
    """FICS's ``--** robo is a computer **--`` after a challenge to or from a computer."""
    return [f"--** {player['name']} is a computer **--"] if _is_computer(player) else []


def rating_text(player: PlayerView) -> str:
    """A player's rating as FICS shows it: ``1500``, or ``++++`` for a guest."""
    rating = player.get("rating")
    if player.get("guest") or rating is None:
        return "++++"
    return str(int(rating))


def clock_words(tc: TimeControlView) -> tuple[int, int]:
    """(minutes, seconds) of a time control as FICS writes them: base and increment, or for
    byoyomi the main time and the period; correspondence the days per move in minutes and 0;
    unlimited 0 0."""
    if tc["kind"] == "correspondence":
        return tc["days"] * 1440, 0
    if tc["kind"] == "unlimited":
        return 0, 0
    if tc["kind"] == "byoyomi":
        return int(tc["main_s"]) // 60, int(tc["period_s"])
    return int(tc["base_s"]) // 60, int(tc["inc_s"])


def kind_words(variant: str, rated: bool, tc: TimeControlView) -> str:
    """``unrated spartan`` / ``rated minishogi byoyomi/3``: rated-ness and the ICS variant word."""
    words = f"{'rated' if rated else 'unrated'} {ics_variant(variant).kind}"
    if tc["kind"] == "byoyomi":
        words += f" byoyomi/{tc['periods']}"
    elif tc["kind"] == "correspondence":
        words += f" corr/{tc['days']}d"
    elif tc["kind"] == "unlimited":
        words += " corr/unlimited"
    return words


def creating_lines(
    game: int, white: PlayerView, black: PlayerView, variant: str, rated: bool, tc: TimeControlView
) -> list[str]:
    """The two lines announcing a new game to its players."""
    minutes, seconds = clock_words(tc)
    kind = kind_words(variant, rated, tc)
    return [
        f"Creating: {white['name']} ({rating_text(white)}) {black['name']} "
        f"({rating_text(black)}) {kind} {minutes} {seconds}",
        f"{{Game {game} ({white['name']} vs. {black['name']}) Creating {kind} match.}}",
    ]


def continuing_line(
    game: int, white: PlayerView, black: PlayerView, variant: str, rated: bool, tc: TimeControlView
) -> str:
    """What FICS says to a player who logs in during a game of theirs, before its board
    (``{Game 7 (alice vs. bob) Continuing unrated spartan match.}``): XBoard takes the variant
    from it (without it a Spartan board is drawn as chess)."""
    kind = kind_words(variant, rated, tc)
    return f"{{Game {game} ({white['name']} vs. {black['name']}) Continuing {kind} match.}}"


def end_line(game: int, white: str, black: str, reason: str, result: str | None) -> str:
    """``{Game 7 (alice vs. bob) bob resigns} 1-0`` (``*`` for an aborted game)."""
    return f"{{Game {game} ({white} vs. {black}) {reason}}} {result or '*'}"


def finished_game_line(game: int, game_id: str, result: str | None) -> str:
    """The answer to ``observe`` of a game that has ended (its room is still held a while):
    where to read it instead.

    >>> finished_game_line(4, "Xq3fT0aa", "1-0")
    'Game 4 is over (1-0); "smoves #Xq3fT0aa" lists its moves, "examine #Xq3fT0aa" steps through them.'
    """
    return (
        f"Game {game} is over ({result or '*'}); \"smoves #{game_id}\" lists its moves, "
        f'"examine #{game_id}" steps through them.'
    )


def end_reason(
    termination: str,
    result: str | None,
    white: str,
    black: str,
    ply: int,
    detail: str | None = None,
) -> str:
    """The words FICS uses for an ending, naming the player concerned; an abort says why when
    ``detail`` does (the end event's ``detail``).

    >>> end_reason("abort", None, "alice", "bob", 1, "no_first_move")
    'Game aborted on move 1: bob made no first move in time'
    """
    if result == "1-0":
        winner, loser = white, black
    elif result == "0-1":
        winner, loser = black, white
    else:
        winner = loser = ""
    decided = bool(winner)
    reasons = {
        "checkmate": f"{loser} checkmated",
        "resignation": f"{loser} resigns",
        "time": f"{loser} forfeits on time",
        "stalemate": f"{loser} is stalemated and loses" if decided else "Game drawn by stalemate",
        "royal_capture": f"{winner} captures {loser}'s king",
        "repetition": f"{loser} loses by repetition" if decided else "Game drawn by repetition",
        "perpetual_check": f"{loser} loses by perpetual check",
        "fifty_moves": "Game drawn by the 50 move rule",
        "seventy_five_moves": "Game drawn by the 75 move rule",
        "dead_position": "Game drawn because neither player has mating material",
        "agreement": "Game drawn by mutual agreement",
        "abandonment": (
            f"{loser} forfeits by disconnection" if decided else "Game drawn by disconnection"
        ),
    }
    if termination == "abort":
        aborted = f"Game aborted on move {(ply + 2) // 2}"
        if detail == "no_first_move":
            return f"{aborted}: {black if ply % 2 else white} made no first move in time"
        if detail in ("first_aborted", "second_aborted"):
            return f"{aborted} by {white if detail == 'first_aborted' else black}"
        return aborted
    if termination == "time" and not decided:
        return "Game drawn: a player ran out of time and the other has no mating material"
    return reasons.get(termination, f"Game ended ({termination})")


def _seek_rating(player: PlayerView) -> str:
    rating = player.get("rating")
    if player.get("guest") or rating is None:
        return "0 "
    return f"{int(rating)}{'P' if player.get('provisional') else ' '}"


def seek_line(seek: SeekView) -> str:
    """The ``<s>`` line of one seek (``iset seekinfo 1``)."""
    minutes, seconds = clock_words(seek["tc"])
    player = seek["player"]
    low, high = seek.get("range") or (0, 9999)
    colour = {"first": "W", "second": "B"}.get(seek.get("colour", "random"), "?")
    # FICS's ti= is a hex bit field of titles: 0x1 unregistered, 0x2 computer.
    titles = (1 if player.get("guest") else 0) | (2 if _is_computer(player) else 0)
    return (
        f"<s> {seek['id']} w={player['name']} ti={titles:02X} "
        f"rt={_seek_rating(player)} t={minutes} i={seconds} r={'r' if seek['rated'] else 'u'} "
        f"tp={ics_variant(seek['variant']).kind} c={colour} rr={low}-{high} "
        f"a={'f' if seek.get('manual') else 't'} f=f"
    )


def _seek_words(seek: SeekView) -> tuple[str, str, int, int, str, str]:
    """(name, rating, minutes, seconds, kind, manual flag) of a seek, as FICS lists show them."""
    minutes, seconds = clock_words(seek["tc"])
    player = seek["player"]
    kind = kind_words(seek["variant"], seek["rated"], seek["tc"])
    manual = " m" if seek.get("manual") else ""
    return player["name"], rating_text(player), minutes, seconds, kind, manual


def seek_announcement(seek: SeekView) -> str:
    """``alice (1500) seeking 5 0 unrated spartan ("play 8" to respond)``."""
    name, rating, minutes, seconds, kind, manual = _seek_words(seek)
    return (
        f"{name} ({rating}) seeking {minutes} {seconds} {kind}{manual} "
        f'("play {seek["id"]}" to respond)'
    )


def sought_line(seek: SeekView) -> str:
    """One line of the ``sought`` list (the handle with its title, as FICS lists it)."""
    name, rating, minutes, seconds, kind, manual = _seek_words(seek)
    player = seek["player"]
    name += title_mark(bool(player.get("guest")), _is_computer(player))
    low, high = seek.get("range") or (0, 9999)
    colour = {"first": "[white]", "second": "[black]"}.get(seek.get("colour", "random"), "")
    return (
        f"{seek['id']:>3} {rating:>4} {name:<17} {minutes:>3} {seconds:>3} {kind:<24} "
        f"{colour:<7} {low}-{high}{manual}"
    )


def challenge_text(challenge: ChallengeView) -> str:
    """``alice (1500) [white] bob (1500) unrated spartan 5 0.`` (the sender first)."""
    sender, target = challenge["from"], challenge["to"]
    minutes, seconds = clock_words(challenge["tc"])
    colour = {"first": "[white] ", "second": "[black] "}.get(challenge.get("colour", ""), "")
    kind = kind_words(challenge["variant"], challenge["rated"], challenge["tc"])
    return (
        f"{sender['name']} ({rating_text(sender)}) {colour}{target['name']} "
        f"({rating_text(target)}) {kind} {minutes} {seconds}."
    )
