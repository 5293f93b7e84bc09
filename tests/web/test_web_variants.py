"""Sho Shogi, Wild Castle, Spartan Chess and Dai Shogi played to their end in the browser:
a player reloads mid-game, a Wild Castle castling, draw offer and takeback, chat, a Lion
double move and a Lion pass, and the piece tooltip."""

from __future__ import annotations

from playwright.async_api import expect
from seats import WAIT_MS, api_json, start_game, two_players

from server.app import App
from server.rules import Game, get_variant


async def test_shoshogi_premove_and_a_player_reloads_mid_game(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    game_id = await start_game(alice, bob, "shoshogi", kind="byoyomi", main_min=10, period=30, periods=2)
    await alice.click_move("c3", "c4")          # 7f
    await bob.wait_ply(1)
    # While bob thinks, alice premoves Bx2b: two clicks, kept until the move is legal.
    await alice.square("b2").click()
    await alice.square("h8").click()
    await expect(alice.page.locator("svg.board rect.premove")).to_have_count(2)
    await bob.drag_move("g7", "g6")             # 3d (bob sees the board turned round)
    await expect(alice.page.locator(".promo-dialog")).to_be_visible()   # the premove reaches the zone
    await alice.promote("=")                    # stay unpromoted
    await bob.wait_ply(3)
    await expect(bob.page.locator('svg.board g.pc[data-square="h8"]')).to_have_attribute("data-piece", "B")
    await alice.page.reload()                   # a player reloads: same game, same side, same clocks
    await alice.page.wait_for_selector(f'section.game[data-game="{game_id}"] .board-wrap[data-ply="3"]', timeout=WAIT_MS)
    await expect(alice.page.locator(".clock.bottom .name")).to_contain_text("alice")
    await expect(alice.page.locator(".clock.bottom .time small")).to_contain_text("2×30s")
    await bob.click_move("a7", "a6")
    await alice.wait_ply(4)
    await shots(bob.page, "shoshogi")
    await alice.action("resign")
    await bob.wait_end("bob wins by resignation")
    # Settings: Western abbreviations instead of kanji.
    await bob.page.click(".settings summary")
    await bob.page.select_option("#set-labels", "western")
    await expect(bob.page.locator('svg.board g.pc[data-square="h8"] text')).to_have_text("B")
    await shots(bob.page, "shoshogi-western")
    assert (await api_json(hub, f"/api/games/{game_id}"))["plies"] == 4


def castling_plan(start_fen: str) -> list[str]:
    """First-player moves (against passive replies) that clear the way to castle, then castle."""
    game = Game(get_variant("wildcastle"), start_fen)
    plan: list[str] = []
    replies = iter(["a7a6", "a6a5", "h7h6", "h6h5", "b7b6", "g7g6"])
    for _ in range(6):
        legal = game.legal_moves()
        king = _king_square(game)
        castle = [m for m in legal if m[:2] == king and abs(ord(m[2]) - ord(m[0])) == 2 and m[3] == "1"]
        if castle:
            return [*plan, castle[0]]
        move = _clearing_move(game, king)
        game.play(move)
        plan.append(move)
        game.play(next(replies))
    raise AssertionError(f"no castling found from {start_fen}")


def _back_rank(game: Game) -> str:
    """The first player's back rank, one character a square (" " empty)."""
    row = game.fen().split()[0].split("/")[7]
    return "".join(" " * int(c) if c.isdigit() else c for c in row)


def _king_square(game: Game) -> str:
    return "abcdefgh"[_back_rank(game).index("K")] + "1"


def _clearing_move(game: Game, king: str) -> str:
    """A move that takes a piece off the back rank between the king and a rook, or a pawn move
    that lets one out."""
    squares = [f"{f}1" for f, p in zip("abcdefgh", _back_rank(game), strict=True) if p in "NBQ"]
    legal = game.legal_moves()
    for m in legal:
        if m[:2] in squares and m[3] != "1":
            return m
    for m in legal:  # free a bishop or queen: a pawn move next to it
        if m[1] == "2" and m[3] == "4" and any(abs(ord(m[0]) - ord(s[0])) <= 1 for s in squares):
            return m
    raise AssertionError(f"nothing clears the back rank of {king}: {legal}")


async def test_wildcastle_castling_and_a_draw_by_agreement(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    game_id = await start_game(alice, bob, "wildcastle", base_min=5, inc=3)
    start = (await api_json(hub, f"/api/games/{game_id}"))["start_fen"]
    plan = castling_plan(start)
    replies = ["a7a6", "a6a5", "h7h6", "h6h5", "b7b6", "g7g6"]
    for i, move in enumerate(plan):
        if i % 2 == 0:
            await alice.drag_move(move[:2], move[2:4])
        else:
            await alice.click_move(move[:2], move[2:4])
        await bob.wait_ply(2 * i + 1)
        if i < len(plan) - 1:
            await bob.click_move(replies[i][:2], replies[i][2:4])
    castled = (await api_json(hub, f"/api/games/{game_id}"))["moves"][-1]["display"]
    assert castled in ("O-O", "O-O-O"), castled
    await expect(bob.page.locator("ol.moves .mv").last).to_have_text(castled)
    await shots(alice.page, "wildcastle")
    await bob.action("draw_offer")
    await alice.page.click('button[data-action="draw_decline"]', timeout=WAIT_MS)
    await expect(bob.page.locator(".game .error")).to_contain_text("alice declines the draw")
    await bob.action("draw_offer")
    await alice.page.click('button[data-action="draw_accept"]', timeout=WAIT_MS)
    for seat in (alice, bob):
        await seat.wait_end("Draw by agreement")
    # A rematch: same terms, colours swapped.
    await alice.action("rematch_offer")
    await bob.page.click('button[data-action="rematch_accept"]', timeout=WAIT_MS)
    for seat in (alice, bob):
        await seat.page.wait_for_selector(f'section.game:not([data-game="{game_id}"]) .board-wrap[data-ply="0"]', timeout=WAIT_MS)
    await expect(bob.page.locator(".game-info")).to_contain_text("you play White")
    await expect(alice.page.locator(".game-info")).to_contain_text("you play Black")
    await bob.wait_my_turn()


async def test_spartan_takeback_chat_and_resignation(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    game_id = await start_game(alice, bob, "spartan", base_min=3, inc=2)
    await alice.click_move("e2", "e4")
    await bob.drag_move("d7", "e6")             # a Hoplite steps diagonally forward
    await alice.click_move("g1", "f3")
    await bob.wait_ply(3)
    await alice.action("takeback_offer")
    await bob.page.click('button[data-action="takeback_accept"]', timeout=WAIT_MS)
    await alice.wait_ply(2)
    await bob.wait_ply(2)
    await alice.click_move("d2", "d4")
    await bob.wait_ply(3)
    # The list numbers full moves, as chess sites do: "1. e4 Hxe6 2. d4".
    rows = bob.page.locator("ol.moves li")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0).locator(".mv")).to_have_count(2)
    await expect(rows.locator(".num")).to_have_text(["1.", "2."])
    await expect(rows.nth(0)).to_contain_text("e4")
    await expect(rows.nth(1).locator(".mv")).to_have_text(["d4"])
    await bob.page.fill(".chat-form input", "well played")
    await bob.page.press(".chat-form input", "Enter")
    await expect(alice.page.locator(".chat-lines")).to_contain_text("bob: well played")
    # A Hoplite marches to the Persians' back rank and captures there: Spartan promotion.
    march = ["a7b6", "a2a3", "b6a5", "a3a4", "a5a4", "h2h3", "a4b3", "h3h4", "b3a2", "b2b3"]
    for i, move in enumerate(march):
        seat = bob if i % 2 == 0 else alice
        await seat.click_move(move[:2], move[2:])
        await (alice if i % 2 == 0 else bob).wait_ply(4 + i)
    await bob.click_move("a2", "a1")
    dialog = bob.page.locator(".promo-dialog")
    for choice in ("c", "g", "l", "w"):          # no third King: the Spartans have two
        await expect(dialog.locator(f'button[data-promo="{choice}"] svg g.spartan')).to_have_count(1)
    assert await dialog.locator('button[data-promo="k"]').count() == 0
    await shots(bob.page, "spartan-promotion")
    await bob.promote("w")
    await alice.wait_ply(14)
    await expect(alice.page.locator('svg.board g.pc.side-1[data-square="a1"]')).to_have_attribute("data-piece", "W")
    await shots(bob.page, "spartan")
    await bob.action("resign")
    await alice.wait_end("alice wins by resignation")
    moves = [m["uci"] for m in (await api_json(hub, f"/api/games/{game_id}"))["moves"]]
    assert moves[:3] == ["e2e4", "d7e6", "d2d4"] and moves[-1] == "a2a1w"


async def test_daishogi_lion_double_move_and_tooltip(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    game_id = await start_game(alice, bob, "daishogi", kind="byoyomi", main_min=30, period=30, periods=3)
    script = [("h5", "h6"), ("h11", "h10"), ("h3", "h5"), ("h10", "h9"), ("h5", "g6"), ("a11", "a10"), ("g6", "g8"), ("a10", "a9")]
    for ply, (origin, target) in enumerate(script, 1):
        seat = alice if ply % 2 else bob
        await seat.click_move(origin, target)
        await (bob if ply % 2 else alice).wait_ply(ply)
    # Hover the Lion: its name and move diagram.
    await alice.square("g8").hover()
    tip = alice.page.locator(".piece-tip")
    await expect(tip).to_contain_text("Lion")
    await expect(tip).to_contain_text("獅子")
    await expect(tip.locator("svg.diagram rect.d-lion")).to_have_count(24)
    await shots(alice.page, "daishogi-tooltip")
    # The Lion takes the pawn on h9 and steps on to h10: two clicks, the first square shown.
    await alice.click_move("g8", "h9")
    await expect(alice.page.locator('svg.board rect.via[data-square="h9"]')).to_have_count(1)
    await alice.square("h10").click()
    await bob.wait_ply(9)
    await expect(bob.page.locator("ol.moves .mv").last).to_contain_text("Ln")
    moves = (await api_json(hub, f"/api/games/{game_id}"))["moves"]
    assert moves[-1]["uci"] == "g8h9,h9h10"
    # The Lion passes (out to the empty h9 and back): a button, written as the rules spec writes
    # a pass (§5.9), a move to the Lion's own square: h10 is 8f.
    await bob.click_move("b11", "b10")
    await alice.wait_ply(10)
    await alice.page.click('button[data-action="pass"]', timeout=WAIT_MS)
    await bob.wait_ply(11)
    passed = bob.page.locator('ol.moves .mv[data-ply="11"]')
    await expect(passed).to_have_text("Ln-8f")
    await expect(passed).to_have_attribute("title", "Lion pass: out and back to its own square")
    assert (await api_json(hub, f"/api/games/{game_id}"))["moves"][-1]["uci"] == "@@@@"
    await alice.page.mouse.move(0, 0)
    await shots(bob.page, "daishogi")
    await bob.action("resign")
    await alice.wait_end("alice wins by resignation")
    # A visitor without an account opens the shared link on a phone: the stored game at ply 9.
    phone = await open_page("visitor", f"/game/{game_id}#9", viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    await phone.wait_for_selector('.board-wrap[data-ply="9"]', timeout=WAIT_MS)
    await expect(phone.locator(".banner")).to_contain_text("alice wins by resignation")
    width = await phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    await shots(phone, "daishogi-phone")
