"""The bot flag of a player's identity (the Bot API): shown in the views only when set, kept by
``with_rating``, carried between hubs."""

from __future__ import annotations

from server.cluster.wire import player_from_json, player_to_json
from server.hub.glicko2 import Rating
from server.hub.identity import PlayerInfo


def test_the_bot_flag_is_in_the_view_only_for_bots() -> None:
    human = PlayerInfo("u1", "alice")
    bot = PlayerInfo("u2", "robo", bot=True)
    assert "bot" not in human.view() and "bot" not in human.view("minishogi")
    assert bot.view()["bot"] is True and bot.view("minishogi", "blitz")["bot"] is True
    assert bot.with_rating(("minishogi", "blitz"), Rating(1600.0)).bot


def test_the_bot_flag_crosses_the_cluster_wire() -> None:
    bot = PlayerInfo("u2", "robo", False, {("minishogi", "blitz"): Rating(1600.0)}, bot=True)
    assert player_from_json(player_to_json(bot)) == bot
    human = PlayerInfo("u1", "alice")
    assert "bot" not in player_to_json(human)
    assert player_from_json(player_to_json(human)) == human
