"""``help`` texts: one line per command, and a few lines for the topics that need more."""

from __future__ import annotations

from server.transport.ics.args import bad_arg

__all__ = ["help_text", "usage"]

SUMMARY = {
    "seek": "seek [time inc] [rated|unrated] [white|black] [variant] [byoyomi[/N]] [min-max] [manual]  -- Nd (days per move) or unlimited instead of time inc: correspondence",
    "unseek": "unseek [index]  -- withdraw one or all of your seeks",
    "sought": "sought [all]  -- list the open seeks",
    "play": "play <index>  -- accept a seek",
    "match": "match <name> [time inc] [rated|unrated] [white|black] [variant]  -- Nd or unlimited: correspondence",
    "computer": "computer [level 1-8] [time inc] [white|black] [variant] [byoyomi[/N]]  -- play the computer now (unrated)",
    "accept": "accept [n|name]  -- accept a challenge, or the draw/takeback your opponent offers",
    "decline": "decline [n|name]  -- decline a challenge or an offer",
    "withdraw": "withdraw [n|name]  -- withdraw your challenge",
    "pending": "pending  -- challenges and offers to and from you",
    "resign": "resign [opponent]  -- resign your game",
    "draw": "draw  -- offer (or accept) a draw",
    "abort": "abort  -- abort the game before both players have moved",
    "takeback": "takeback  -- ask to take back your last move (unrated games)",
    "flag": "flag  -- the server ends games on time by itself",
    "adjourn": "adjourn  -- games are not adjourned here (see the answer)",
    "rematch": "rematch  -- offer a rematch after a game",
    "observe": "observe <game number|name>",
    "unobserve": "unobserve [game number]",
    "games": "games  -- running games",
    "mygames": "mygames  -- your running games (correspondence ones too), the primary one marked *",
    "primary": "primary [game number]  -- the game your typed moves, resign, draw ... go to",
    "moves": "moves [game number|name]  -- the move list",
    "refresh": "refresh [game number]  -- show the board again",
    "who": "who  -- players online",
    "finger": "finger [name]",
    "say": "say <text>  -- to your opponent",
    "tell": "tell <name> <text>  -- to your opponent or another ICS user",
    "kibitz": "kibitz <text>  -- to the game's room",
    "whisper": "whisper <text>  -- to the game's spectators",
    "history": "history [name]  -- recent games, with indexes for examine and smoves",
    "examine": "examine <name> <index> | examine <game id>  -- step through a stored game",
    "forward": "forward [n]  -- while examining",
    "backward": "backward [n]  -- while examining",
    "revert": "revert  -- back to the start of the examined game",
    "unexamine": "unexamine  -- stop examining",
    "smoves": "smoves <name> <index> | smoves <game id>  -- a stored game's moves",
    "analyze": "analyze <name> <index> | analyze <game id>  -- request a computer analysis of a finished game",
    "analysis": "analysis <name> <index> | analysis <game id>  -- a game's computer analysis: progress, marks, evaluations",
    "set": "set <variable> <value>  -- style 12, seek 0|1, ...",
    "iset": "iset <variable> 0|1  -- seekinfo, seekremove, ms, startpos, wide12, nowrap, lock",
    "style": "style 12  -- the only board style here",
    "quit": "quit  -- log out",
    "password": "password <old> <new>  -- change your password (your other sessions end)",
    "tourneys": "tourneys [created|started|finished]  -- the tournaments",
    "tjoin": "tjoin <id> [password]  -- enter a tournament (or resume a paused arena entry)",
    "twithdraw": "twithdraw <id>  -- leave a tournament (points kept)",
    "tpause": "tpause <id>  -- pause your arena entry (tjoin resumes)",
    "tstandings": "tstandings <id> [page]  -- a tournament and a page of its standings",
}

TOPICS = {
    "variants": [
        "Variants (the word to use in seek and match):",
        "  minishogi  Mini-Shogi, 5x5, drops (XBoard: a shogi board with holdings)",
        "  shoshogi   Sho Shogi, 9x9, no drops",
        "  wild/1     Wild Castle (also w1, wild 1)",
        "  spartan    Spartan Chess",
        "  daishogi   Dai Shogi, 15x15",
        "Shogi variants may use byoyomi: seek 5 10 minishogi byoyomi/3 means 5 minutes,",
        "then 3 periods of 10 seconds.",
        "Correspondence: seek 3d daishogi means 3 days per move (1d 2d 3d 5d 7d 10d 14d);",
        "seek unlimited has no clock. Several at once: mygames lists them, primary <n> picks",
        "the one your moves go to.",
    ],
    "moves": [
        "Moves: e2e4, e2-e4, e7e8=q, Nf3, exd5, o-o, o-o-o; shogi c4c5, c4c5+ (promote),",
        "c4c5= (do not promote), P@c3 (drop).",
    ],
}


def help_text(topic: str) -> list[str]:
    """The help for ``topic`` (empty: the command list)."""
    word = topic.strip().lower()
    if word in TOPICS:
        return TOPICS[word]
    if word in SUMMARY:
        return [SUMMARY[word]]
    if word:
        return [f'No help on {bad_arg(topic.strip())}. Type "help" for the commands.']
    return [
        "Commands (type help <command> for its syntax; help variants; help moves):",
        *(f"  {line}" for line in SUMMARY.values()),
    ]


def usage(command: str) -> str:
    """A command's syntax, without its description (``resign``, ``forward [n]``)."""
    return SUMMARY.get(command, command).split("  --")[0]
