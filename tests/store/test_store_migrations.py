"""Migrations: up and down on empty databases, and agreement with the models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from server.store import create_engine
from server.store.metadata import metadata
from server.store.migrate import (
    current_revision,
    downgrade_to,
    downgrade_to_base,
    main,
    upgrade_to_head,
)

STORE_TABLES = {
    "players",
    "sessions",
    "api_tokens",
    "ratings",
    "games",
    "game_moves",
    "engine_jobs",
    "analyses",
    "analysis_plies",
    "tournaments",
    "tournament_events",
    "tournament_chat",
    "mail_settings",
    "mail_sent",
    "premoves",
    "offers",
}
MAIL_TABLES = {"mail_settings", "mail_sent"}


async def _on_database(url: str, schema: str | None, action: Any) -> Any:
    engine = create_engine(url, schema=schema, pool_size=1)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(action)
    finally:
        await engine.dispose()


def _table_names(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def _model_diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "compare_server_default": True}
    )
    return list(compare_metadata(context, metadata))


async def test_upgrade_then_downgrade(empty_db: tuple[str, str, str | None]) -> None:
    _, url, schema = empty_db
    assert await current_revision(url, schema=schema) is None
    await upgrade_to_head(url, schema=schema)
    assert await current_revision(url, schema=schema) == "0016"
    assert await _on_database(url, schema, _table_names) == STORE_TABLES | {"alembic_version"}
    await upgrade_to_head(url, schema=schema)  # already at head: nothing to do
    await downgrade_to_base(url, schema=schema)
    assert await current_revision(url, schema=schema) is None
    assert await _on_database(url, schema, _table_names) == {"alembic_version"}
    await upgrade_to_head(url, schema=schema)  # and up again from base
    assert await _on_database(url, schema, _table_names) >= STORE_TABLES


async def test_models_and_migrations_agree(empty_db: tuple[str, str, str | None]) -> None:
    _, url, schema = empty_db
    # On an empty database the comparison sees every table missing: it does detect differences.
    missing = await _on_database(url, schema, _model_diff)
    assert {diff[1].name for diff in missing if diff[0] == "add_table"} == STORE_TABLES
    await upgrade_to_head(url, schema=schema)
    assert await _on_database(url, schema, _model_diff) == []


async def test_drift_is_detected(empty_db: tuple[str, str, str | None]) -> None:
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)

    def drop_index(connection: Connection) -> None:
        connection.execute(text("DROP INDEX ix_games_status"))
        connection.commit()

    await _on_database(url, schema, drop_index)
    diff = await _on_database(url, schema, _model_diff)
    assert [(d[0], d[1].name) for d in diff] == [("add_index", "ix_games_status")]


async def test_migrations_keep_data(empty_db: tuple[str, str, str | None]) -> None:
    """Re-running the upgrade on a populated database changes nothing."""
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)

    def insert_player(connection: Connection) -> None:
        connection.execute(
            text("INSERT INTO players (name, name_key, password_hash) VALUES ('x', 'x', 'h')")
        )
        connection.commit()

    def count_players(connection: Connection) -> int:
        return int(connection.execute(text("SELECT count(*) FROM players")).scalar_one())

    await _on_database(url, schema, insert_player)
    await upgrade_to_head(url, schema=schema)
    assert await _on_database(url, schema, count_players) == 1


async def test_tournament_tables_come_and_go_alone(empty_db: tuple[str, str, str | None]) -> None:
    """0007 down drops the two tournament tables and nothing else; up again restores them."""
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)
    await downgrade_to("0006", url, schema=schema)
    assert await current_revision(url, schema=schema) == "0006"
    tables = (
        STORE_TABLES
        - {"tournaments", "tournament_events", "tournament_chat", "premoves", "offers"}
        - MAIL_TABLES
    )
    assert await _on_database(url, schema, _table_names) == tables | {"alembic_version"}
    await upgrade_to_head(url, schema=schema)
    assert await _on_database(url, schema, _table_names) == STORE_TABLES | {"alembic_version"}
    assert await _on_database(url, schema, _model_diff) == []


def _game_columns(connection: Connection) -> set[str]:
    return {column["name"] for column in inspect(connection).get_columns("games")}


async def test_tournament_game_columns_come_and_go_alone(
    empty_db: tuple[str, str, str | None],
) -> None:
    """0008 down drops the games' tournament columns and nothing else; up again restores them."""
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)
    added = {"tournament_id", "tournament_round", "berserk"}
    assert added <= await _on_database(url, schema, _game_columns)
    await downgrade_to("0008", url, schema=schema)
    tables = await _on_database(url, schema, _table_names)
    await downgrade_to("0007", url, schema=schema)
    assert await _on_database(url, schema, _game_columns) & added == set()
    assert await _on_database(url, schema, _table_names) == tables
    await upgrade_to_head(url, schema=schema)


async def test_correspondence_kinds_down_and_up(empty_db: tuple[str, str, str | None]) -> None:
    """0009 down restores the two-kind check (a correspondence row is then refused); up again
    accepts it and matches the models."""
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)
    await downgrade_to("0008", url, schema=schema)
    game = (
        "INSERT INTO games (id, variant, start_fen, speed, first_name, second_name, clock_kind,"
        " base_ms, increment_ms, byoyomi_ms, periods, rated)"
        " VALUES ('{id}', 'chess', 'x', 'correspondence', 'a', 'b', 'correspondence',"
        " 86400000, 0, 0, 0, false)"
    )

    def insert_old(connection: Connection) -> None:
        connection.execute(text(game.format(id="old")))

    def insert_new(connection: Connection) -> None:
        connection.execute(text(game.format(id="new")))
        connection.commit()

    with pytest.raises(Exception, match=r"(?i)check|constraint|too long"):
        await _on_database(url, schema, insert_old)
    await upgrade_to_head(url, schema=schema)
    await _on_database(url, schema, insert_new)
    assert await _on_database(url, schema, _model_diff) == []


async def test_mail_tables_come_and_go_alone(empty_db: tuple[str, str, str | None]) -> None:
    """0010 down drops the two mail tables and nothing else; up again restores them."""
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)
    await downgrade_to("0010", url, schema=schema)
    later = await _on_database(url, schema, _table_names)
    await downgrade_to("0009", url, schema=schema)
    tables = later - MAIL_TABLES - {"alembic_version"}
    assert await _on_database(url, schema, _table_names) == tables | {"alembic_version"}


async def test_correspondence_deadlines_filled_in(empty_db: tuple[str, str, str | None]) -> None:
    """0012 gives each running correspondence game its deadline (the last move's instant, else
    the start, + the allowance) and no other game one; down and up again match the models."""
    _, url, schema = empty_db
    await upgrade_to_head(url, schema=schema)
    await downgrade_to("0009", url, schema=schema)
    game = (
        "INSERT INTO games (id, variant, start_fen, speed, first_name, second_name, clock_kind,"
        " base_ms, increment_ms, byoyomi_ms, periods, rated, status, created_at, started_at)"
        " VALUES ('{id}', 'chess', 'x', '{speed}', 'a', 'b', '{kind}', {base}, 0, 0, 0, false,"
        " '{status}', '2026-12-01 00:00:00+00:00', '2026-12-01 00:00:00+00:00')"
    )
    move = (
        "INSERT INTO game_moves (game_id, ply, uci, display, clock_ms, spent_ms, created_at)"
        " VALUES ('moved', 1, 'e2e4', 'e4', 0, 0, '2026-12-01 06:00:00+00:00')"
    )

    def insert(connection: Connection) -> None:
        for game_id, speed, kind, base, status in (
            ("moved", "correspondence", "correspondence", 86_400_000, "started"),
            ("fresh", "correspondence", "correspondence", 86_400_000, "started"),
            ("over", "correspondence", "correspondence", 86_400_000, "finished"),
            ("open", "correspondence", "unlimited", 0, "started"),
            ("blitz", "blitz", "fischer", 180_000, "started"),
        ):
            connection.execute(
                text(game.format(id=game_id, speed=speed, kind=kind, base=base, status=status))
            )
        connection.execute(text(move))
        connection.commit()

    def deadlines(connection: Connection) -> dict[str, int | None]:
        rows = connection.execute(text("SELECT id, deadline_ms FROM games"))
        return {row[0]: row[1] for row in rows}

    await _on_database(url, schema, insert)
    await upgrade_to_head(url, schema=schema)
    start = 1_796_083_200_000  # 2026-12-01 00:00 UTC
    assert await _on_database(url, schema, deadlines) == {
        "moved": start + 6 * 3_600_000 + 86_400_000,
        "fresh": start + 86_400_000,
        "over": None,
        "open": None,
        "blitz": None,
    }
    await downgrade_to("0009", url, schema=schema)
    await upgrade_to_head(url, schema=schema)
    assert await _on_database(url, schema, _model_diff) == []


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'nested' / 'dir' / 'hub.sqlite3'}"
    assert main(["upgrade", "--url", url]) == 0
    assert capsys.readouterr().out.strip() == "0016"
    assert main(["current", "--url", url]) == 0
    assert capsys.readouterr().out.strip() == "0016"
    assert main(["downgrade", "--url", url]) == 0
    assert capsys.readouterr().out.strip() == "base (empty)"


def test_command_line_reports_unreachable_database(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upgrade", "--url", "postgresql+asyncpg://postgres@127.0.0.1:1/test"]) == 1
    assert "database unavailable" in capsys.readouterr().err


def test_in_memory_sqlite_is_refused() -> None:
    with pytest.raises(ValueError, match="in-memory"):
        create_engine("sqlite+aiosqlite:///:memory:")


def test_other_drivers_are_refused() -> None:
    with pytest.raises(ValueError, match="asyncpg"):
        create_engine("postgresql+psycopg://postgres@127.0.0.1/test")
    with pytest.raises(ValueError, match="unsupported"):
        create_engine("mysql+aiomysql://root@127.0.0.1/test")
    with pytest.raises(ValueError, match="schema"):
        create_engine("postgresql+asyncpg://postgres@127.0.0.1/test", schema="Robert'); DROP")
