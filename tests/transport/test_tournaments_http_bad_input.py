"""Bad input at the tournament API (docs/tournaments-api.md), against the live HTTP door:
hypothesis-drawn create forms each with at least one bad field, junk tournament ids, wrong
passwords — every one a 4xx in lichess's error shape (``{"error": "…"}``), and nothing stored
changed. The per-account limit of the tournament requests holds an attacker while an honest
bot is served."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import aiohttp
from bot_support import make_bot
from fuzz_values import draw_examples
from hypothesis import strategies as st
from ws_support import UNLIMITED_READS, OpenClient, StartApp

from server.app import App

FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000, **UNLIMITED_READS}

ARENA = {
    "name": "Fuzz cup",
    "clockTime": "1",
    "clockIncrement": "0",
    "minutes": "20",
    "variant": "spartan",
    "rated": "false",
}
SWISS = {
    "name": "Fuzz swiss",
    "clock.limit": "60",
    "clock.increment": "0",
    "nbRounds": "3",
    "variant": "minishogi",
}
ROUND_ROBIN = {
    "name": "Fuzz table",
    "clock.limit": "60",
    "clock.increment": "1",
    "variant": "shoshogi",
}

printable = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
not_a_flag = st.sampled_from(["maybe", "1", "0", "yes", "True!", "t", "nul"])
not_whole = st.sampled_from(["x", "-1", "1.5", "1e3", "²", "١٢", " 3", "0x10", "NaN", "9" * 20])
BAD: dict[str, st.SearchStrategy[str]] = {
    "variant": st.one_of(
        st.sampled_from(["chess", "standard", "Spartan", "wild/1", "shogi"]),
        st.text(printable, max_size=12).filter(
            lambda v: v not in ("", "spartan", "minishogi", "shoshogi", "wildcastle", "daishogi")
        ),
    ),
    "clockTime": st.one_of(not_whole, st.sampled_from(["0.1", "9999", "0.3333", "-0.5", ""])),
    "clockIncrement": st.one_of(not_whole, st.sampled_from(["181", "10001", ""])),
    "minutes": st.one_of(not_whole, st.sampled_from(["0", "10081", ""])),
    "waitMinutes": st.one_of(not_whole, st.just("10081")),
    "startDate": st.one_of(not_whole.filter(lambda v: v != "9" * 20), st.just(str(2**53 + 1))),
    "rated": not_a_flag,
    "berserkable": not_a_flag,
    "conditions.bots": not_a_flag,
    "conditions.minRating.rating": st.one_of(not_whole, st.just("100000")),
    "name": st.sampled_from(["a", "x" * 81, "ab\x1b[2J", "tab\there", "  b "]),
    "password": st.just("p" * 129),
    "maxPlayers": st.one_of(not_whole, st.sampled_from(["1", "100001"])),
    "startWhenJoined": st.one_of(not_whole, st.just("1")),
}
BAD_SWISS: dict[str, st.SearchStrategy[str]] = {
    "variant": BAD["variant"],
    "clock.limit": st.one_of(not_whole, st.sampled_from(["", "100001", "5"])),
    "clock.increment": st.one_of(not_whole, st.sampled_from(["", "181"])),
    "nbRounds": st.one_of(not_whole, st.sampled_from(["0", "51", ""])),
    "startsAt": BAD["startDate"],
    "rated": not_a_flag,
    "conditions.minRating.rating": BAD["conditions.minRating.rating"],
    "name": BAD["name"],
    "password": BAD["password"],
    "startWhenJoined": BAD["startWhenJoined"],
}


def broken(base: dict[str, str], bad: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[Any]:
    """A valid form with one to three fields replaced by a bad value (or the byoyomi field of
    a chess variant): refused by construction."""
    pick = st.lists(st.sampled_from(sorted(bad)), min_size=1, max_size=3, unique=True)
    return pick.flatmap(
        lambda names: st.fixed_dictionaries({name: bad[name] for name in names}).map(
            lambda fields: {**base, **fields}
        )
    )


byoyomi_for_chess = st.just({**ARENA, "clockByoyomi": "10"})
requests_drawn = st.one_of(
    st.tuples(st.just("/api/tournament"), st.one_of(broken(ARENA, BAD), byoyomi_for_chess)),
    st.tuples(st.just("/api/swiss/new/club"), broken(SWISS, BAD_SWISS)),
    st.tuples(
        st.just("/api/roundrobin"),
        st.one_of(
            broken({k: v for k, v in SWISS.items() if k != "nbRounds"}, BAD_SWISS).filter(
                lambda form: "nbRounds" not in form
            ),
            st.just({**ROUND_ROBIN, "double": "maybe"}),
        ),
    ),
    st.tuples(
        st.sampled_from(["/api/swiss/new/bad%20team", "/api/swiss/new/" + "t" * 65]),
        st.just(SWISS),
    ),
)
junk_ids = st.one_of(
    st.text(st.characters(whitelist_categories=("Lu", "Ll", "Nd")), min_size=1, max_size=10),
    st.sampled_from(["NoSuchOne1", "a" * 32, "_-_-"]),
)
paths_for_ids = st.sampled_from(
    [
        "/api/tournament/{}/join",
        "/api/tournament/{}/withdraw",
        "/api/swiss/{}/join",
        "/api/swiss/{}/withdraw",
        "/api/roundrobin/{}/join",
    ]
)


async def _stored(app: App) -> list[Any]:
    infos = await app.store.list_tournaments(None, limit=500)
    return sorted((info.id, info.status) for info in infos)


async def test_bad_requests_are_refused_in_lichess_shape_and_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(**FAST)
    bot = await make_bot(app, open_client, "fuzzbot")
    headers = {"Authorization": f"Bearer {bot.token}"}
    base = f"http://127.0.0.1:{app.port}"
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.post(
            f"{base}/api/roundrobin", data={**ROUND_ROBIN, "password": "sesame"}
        ) as made:
            assert made.status == 200
            tid = (await made.json())["id"]
        before = (await _stored(app), await app.tournaments.view(tid))
        forms = draw_examples(requests_drawn, 250)
        ids = draw_examples(st.tuples(paths_for_ids, junk_ids), 60)
        statuses: set[int] = set()
        for path, form in forms:
            async with http.post(base + path, data=form) as answer:
                body = await answer.json()
                assert answer.status == 400, (path, form, body)
                assert list(body) == ["error"] and isinstance(body["error"], str)
        for template, junk in ids:
            async with http.post(base + template.format(quote(junk, safe=""))) as answer:
                body = await answer.json()
                statuses.add(answer.status)
                assert answer.status in (400, 404), (template, junk, body)
                assert list(body) == ["error"]
        for password in ["", "Sesame", "sesame ", "x" * 129]:
            async with http.post(
                f"{base}/api/roundrobin/{tid}/join", data={"password": password}
            ) as answer:
                assert answer.status == 400, password
                assert (await answer.json())["error"] in (
                    "Wrong tournament password.",
                    "password: at most 128 characters",
                )
        after = (await _stored(app), await app.tournaments.view(tid))
    assert after == before
    assert 404 in statuses


async def test_a_flood_of_tournament_requests_stops_the_attacker_not_an_honest_bot(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=0.5, rate_limit_burst=3)
    mallory = await make_bot(app, open_client, "mallory")
    honest = await make_bot(app, open_client, "honest")
    base = f"http://127.0.0.1:{app.port}"
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{base}/api/roundrobin",
            data=ROUND_ROBIN,
            headers={"Authorization": f"Bearer {honest.token}"},
        ) as made:
            tid = (await made.json())["id"]
        seen = []
        for _ in range(8):
            async with http.post(
                f"{base}/api/roundrobin/NoSuchOne1/join",
                headers={"Authorization": f"Bearer {mallory.token}"},
            ) as answer:
                seen.append(answer.status)
                last = await answer.json()
        assert seen[:2] == [404, 404] and seen[-1] == 429
        assert last == {"error": "Too many requests; slow down."}
        async with http.post(
            f"{base}/api/roundrobin/{tid}/join",
            headers={"Authorization": f"Bearer {honest.token}"},
        ) as joined:
            assert joined.status == 200, await joined.text()
    view = await app.tournaments.view(tid)
    assert [row["name"] for row in view["standings"]] == ["honest"]
