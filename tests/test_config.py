"""Tests of server.config: layering of defaults, TOML files and HUB_* variables, and validation."""

import dataclasses
import tomllib
from pathlib import Path

import pytest

from server.config import (
    DEFAULT_CONFIG_PATH,
    SECTIONS,
    ConfigError,
    Settings,
    load_settings,
)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_default_toml_matches_field_defaults() -> None:
    """config/default.toml and the dataclass defaults must not drift apart."""
    with DEFAULT_CONFIG_PATH.open("rb") as file:
        document = tomllib.load(file)
    from_file = {key: value for table in document.values() for key, value in table.items()}
    defaults = Settings()
    for spec in dataclasses.fields(Settings):
        assert spec.name in from_file, f"{spec.name} missing from default.toml"
        if spec.name == "node_id":
            assert from_file[spec.name] == ""
            continue
        assert getattr(defaults, spec.name) == from_file[spec.name], spec.name
        assert spec.name in SECTIONS[spec.metadata["section"]]
    assert set(from_file) == {spec.name for spec in dataclasses.fields(Settings)}


def test_defaults_without_environment() -> None:
    settings = load_settings(env={})
    assert settings.host == "127.0.0.1"
    assert settings.port == 8080
    assert settings.ws_path == "/ws"
    assert settings.database_url == "sqlite+aiosqlite:///data/hub.sqlite3"
    assert settings.redis_url == ""
    assert not settings.uses_redis
    assert settings.max_frame_bytes == 64 * 1024
    assert settings.log_level == "INFO"


def test_random_node_id_differs_per_load() -> None:
    first = load_settings(env={}).node_id
    second = load_settings(env={}).node_id
    assert first != second
    assert first.startswith("node-")


def test_environment_overrides_each_kind() -> None:
    settings = load_settings(
        env={
            "HUB_HOST": "0.0.0.0",
            "HUB_PORT": " 9000 ",
            "HUB_DATABASE_URL": "postgresql+asyncpg://postgres@127.0.0.1/test",
            "HUB_REDIS_URL": "redis://127.0.0.1:6379/0",
            "HUB_NODE_ID": "node-a",
            "HUB_PING_INTERVAL_S": "2.5",
            "HUB_LOG_LEVEL": "debug",
            "UNRELATED": "ignored",
        }
    )
    assert settings.host == "0.0.0.0"
    assert settings.port == 9000
    assert settings.database_url == "postgresql+asyncpg://postgres@127.0.0.1/test"
    assert settings.redis_url == "redis://127.0.0.1:6379/0"
    assert settings.uses_redis
    assert settings.node_id == "node-a"
    assert settings.ping_interval_s == 2.5
    assert settings.log_level == "DEBUG"


def test_layers_apply_in_order(tmp_path: Path) -> None:
    base = write(tmp_path, "base.toml", '[server]\nport = 1000\nhost = "10.0.0.1"\n')
    extra = write(tmp_path, "extra.toml", "[server]\nport = 2000\n[bus]\nlease_ttl_ms = 500\n")
    settings = load_settings(base, env={"HUB_CONFIG": extra})
    assert (settings.host, settings.port, settings.lease_ttl_ms) == ("10.0.0.1", 2000, 500)
    settings = load_settings(base, env={"HUB_CONFIG": extra, "HUB_PORT": "3000"})
    assert settings.port == 3000
    # Keys absent from a partial base file keep the built-in defaults.
    assert settings.ws_path == "/ws"


def test_empty_node_id_in_a_later_layer_means_random(tmp_path: Path) -> None:
    base = write(tmp_path, "base.toml", '[server]\nnode_id = "fixed"\n')
    assert load_settings(base, env={}).node_id == "fixed"
    assert load_settings(base, env={"HUB_NODE_ID": ""}).node_id.startswith("node-")


def test_int_accepted_for_float_setting(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", "[websocket]\nping_interval_s = 3\n")
    settings = load_settings(path, env={})
    assert settings.ping_interval_s == 3.0
    assert isinstance(settings.ping_interval_s, float)


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [
        ("HUB_PORT", "eighty", "port='eighty' (from environment variable HUB_PORT)"),
        ("HUB_PORT", "70000", "port=70000"),
        ("HUB_PORT", "-1", "port=-1"),
        ("HUB_WS_PATH", "ws", "ws_path='ws'"),
        ("HUB_HOST", "", "host=''"),
        ("HUB_NODE_ID", "a:b", "node_id='a:b'"),
        ("HUB_LOG_LEVEL", "LOUD", "log_level='LOUD'"),
        ("HUB_DATABASE_URL", "hub.sqlite3", "database_url='hub.sqlite3'"),
        ("HUB_REDIS_URL", "http://localhost", "redis_url='http://localhost'"),
        ("HUB_PING_TIMEOUT_S", "0", "ping_timeout_s=0.0"),
        ("HUB_PING_INTERVAL_S", "nan", "ping_interval_s=nan"),
        ("HUB_RATE_LIMIT_BURST", "1.5", "rate_limit_burst='1.5'"),
        ("HUB_MAX_FRAME_BYTES", "10", "max_frame_bytes=10"),
        ("HUB_ARGON2_TIME_COST", "0", "argon2_time_cost=0"),
    ],
)
def test_invalid_environment_value_names_the_setting(
    variable: str, value: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={variable: value})
    assert fragment in str(info.value)
    assert variable in str(info.value)


def test_unknown_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", "[server]\nprot = 1\n")
    with pytest.raises(ConfigError, match=r"unknown setting \[server\] prot"):
        load_settings(path, env={})


def test_key_in_wrong_section_gets_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", '[server]\nredis_url = "redis://x"\n')
    with pytest.raises(ConfigError, match=r"it belongs in \[bus\]"):
        load_settings(path, env={})


def test_unknown_section_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", "[sever]\nport = 1\n")
    with pytest.raises(ConfigError, match=r"unknown section \[sever\]"):
        load_settings(path, env={})


def test_wrong_type_in_file_names_setting_and_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", '[server]\nport = "8080"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert "port='8080'" in str(info.value)
    assert "expected an integer" in str(info.value)
    assert path in str(info.value)


def test_bool_is_not_an_integer(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", "[server]\nport = true\n")
    with pytest.raises(ConfigError, match="expected an integer"):
        load_settings(path, env={})


def test_malformed_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", "[server\nport = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(path, env={})


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(str(tmp_path / "nope.toml"), env={})
    with pytest.raises(ConfigError, match="HUB_CONFIG"):
        load_settings(env={"HUB_CONFIG": str(tmp_path / "nope.toml")})


def test_argon2_memory_must_cover_parallelism() -> None:
    with pytest.raises(ConfigError, match="argon2_memory_kib"):
        load_settings(env={"HUB_ARGON2_MEMORY_KIB": "16", "HUB_ARGON2_PARALLELISM": "4"})
    settings = load_settings(env={"HUB_ARGON2_MEMORY_KIB": "32", "HUB_ARGON2_PARALLELISM": "4"})
    assert settings.argon2_memory_kib == 32


def test_settings_are_frozen_and_validated_directly() -> None:
    settings = Settings(node_id="n1", port=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.port = 1  # type: ignore[misc]
    with pytest.raises(ConfigError, match="port=-5"):
        Settings(port=-5)
    with pytest.raises(ConfigError, match="expected a string"):
        Settings(host=1)  # type: ignore[arg-type]
