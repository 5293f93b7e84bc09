"""Server settings.

Settings are read in layers, each overriding the one before:

1. the field defaults of :class:`Settings` (kept equal to ``config/default.toml``),
2. a TOML file: the ``path`` argument of :func:`load_settings`, else ``config/default.toml``,
3. the TOML file named by the environment variable ``HUB_CONFIG``, if set,
4. environment variables ``HUB_<FIELD>``, e.g. ``HUB_PORT=9000``.

TOML files group keys in sections (``[server]``, ``[bus]`` ...); a key's name is the name of
its :class:`Settings` field. Unknown keys, wrong types and out-of-range values raise
:class:`ConfigError` naming the setting and where the bad value came from.

>>> settings = load_settings(env={"HUB_PORT": "9000"})
>>> settings.port
9000
>>> settings.uses_redis
False
"""

import dataclasses
import ipaddress
import math
import os
import re
import secrets
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from server.jsontypes import JsonObject

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "ENV_PREFIX",
    "PLACEHOLDER_WORKER_KEYS",
    "ConfigError",
    "Settings",
    "load_settings",
    "new_node_id",
    "worker_key_problem",
]

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "config" / "default.toml"
"""The TOML file read when :func:`load_settings` is given no path."""

ENV_PREFIX = "HUB_"
"""Prefix of the environment variables that override single settings."""

CONFIG_FILE_ENV = "HUB_CONFIG"
"""Environment variable naming an extra TOML file read after the base file."""

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

_NODE_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_URL_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_WORKER_KEY_RE = re.compile(r"[A-Za-z0-9_-]{16,128}")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class ConfigError(ValueError):
    """A setting is unknown, malformed or out of range; the message names it and its source."""


def new_node_id() -> str:
    """Return a fresh random node id such as ``"node-3fa2c19b07e1"``."""
    return f"node-{secrets.token_hex(6)}"


# A check returns None when the value is acceptable, else a phrase saying what is expected.
Check = Callable[[Any], str | None]


def _at_least(minimum: float) -> Check:
    return lambda value: None if value >= minimum else f"must be at least {minimum}"


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be greater than 0"


def _port(value: int) -> str | None:
    return None if 0 <= value <= 65535 else "must be a port number from 0 to 65535"


def _no_whitespace(value: str) -> str | None:
    if any(ch.isspace() for ch in value):
        return "must not contain whitespace"
    return None


def _host(value: str) -> str | None:
    return "must not be empty" if not value else _no_whitespace(value)


def _ws_path(value: str) -> str | None:
    return "must start with '/'" if not value.startswith("/") else _no_whitespace(value)


def _node_id(value: str) -> str | None:
    if _NODE_ID_RE.fullmatch(value):
        return None
    return "must be 1-64 characters from A-Z a-z 0-9 _ . -"


def _log_level(value: str) -> str | None:
    return None if value.upper() in LOG_LEVELS else f"must be one of {', '.join(LOG_LEVELS)}"


def _database_url(value: str) -> str | None:
    if _URL_SCHEME_RE.match(value):
        return None
    return "must be a database URL such as sqlite+aiosqlite:///data/hub.sqlite3"


def _journal_dir(value: str) -> str | None:
    return "must not be empty" if not value.strip() else None


def _redis_url(value: str) -> str | None:
    if value == "" or value.startswith(_REDIS_SCHEMES):
        return None
    return "must be empty (in-process bus) or a redis://, rediss:// or unix:// URL"


def _bus_prefix(value: str) -> str | None:
    return "must be at most 64 characters" if len(value) > 64 else _no_whitespace(value)


PLACEHOLDER_WORKER_KEYS = frozenset({"change-this-worker-key-0000"})
"""Worker keys that were published (docker-compose.yml's old default): anyone could submit the
computer's moves and analyses with them."""


def worker_key_problem(key: str) -> str | None:
    """Why ``key`` may not be an engine worker's key (too short, odd characters, a published
    placeholder), or ``None``."""
    if len(key) < 16 or not _WORKER_KEY_RE.fullmatch(key):
        return "a worker key has 16-128 characters A-Z a-z 0-9 _ -"
    squashed = key.lower().replace("-", "").replace("_", "")
    if key in PLACEHOLDER_WORKER_KEYS or "changeme" in squashed or "changethis" in squashed:
        return (
            f"{key!r} is a placeholder, published for anyone to use; generate a key: "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return None


def _worker_keys(value: str) -> str | None:
    keys = [key.strip() for key in value.split(",")] if value.strip() else []
    problems = [problem for key in keys if (problem := worker_key_problem(key)) is not None]
    if problems:
        return f"must be empty or comma-separated keys: {problems[0]}"
    return None


def _networks(value: str) -> str | None:
    try:
        for item in value.split(","):
            if item.strip():
                ipaddress.ip_network(item.strip(), strict=False)
    except ValueError:
        return "must be empty or comma-separated IP addresses or networks (10.0.0.5, 10.0.0.0/8)"
    return None


def _schedule(value: str) -> str | None:
    from server.hub.tournament.schedule import parse_schedule  # the one reader of the text

    try:
        parse_schedule(value)
    except ValueError as error:
        return f"must be a calendar of recurring tournaments (docs/tournaments.md): {error}"
    return None


def _public_url(value: str) -> str | None:
    if not re.fullmatch(r"https?://[^\s/]+(/[^\s]*)?", value):
        return "must be an http:// or https:// address (the site's, for links in mails)"
    return None


def _mail_security(value: str) -> str | None:
    return None if value in ("none", "starttls", "tls") else "must be none, starttls or tls"


def _setting(section: str, default: Any, check: Check) -> Any:
    """A field in TOML section ``section``; ``check`` validates every value it receives."""
    metadata = {"section": section, "check": check}
    if callable(default):
        return field(default_factory=default, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Settings:
    """All settings of one server process; invalid values raise :class:`ConfigError`."""

    # [server]
    host: str = _setting("server", "127.0.0.1", _host)
    port: int = _setting("server", 8080, _port)
    ws_path: str = _setting("server", "/ws", _ws_path)
    node_id: str = _setting("server", new_node_id, _node_id)  # default: random
    log_level: str = _setting("server", "INFO", _log_level)
    public_url: str = _setting("server", "http://127.0.0.1:8080", _public_url)
    full_gc_interval_s: float = _setting("server", 1.0, _at_least(0))
    gc_unfreeze_interval_s: float = _setting("server", 0.0, _at_least(0))
    # [websocket]
    max_frame_bytes: int = _setting("websocket", 65536, _at_least(256))
    ping_interval_s: float = _setting("websocket", 20.0, _positive)
    ping_timeout_s: float = _setting("websocket", 20.0, _positive)
    send_queue_limit: int = _setting("websocket", 256, _at_least(1))
    rate_limit_per_s: float = _setting("websocket", 10.0, _positive)
    rate_limit_burst: int = _setting("websocket", 30, _at_least(1))
    # [ics]
    ics_port: int = _setting("ics", 5000, _port)
    # [games]
    reconnect_grace_s: float = _setting("games", 60.0, _at_least(0))
    computer_first_move_window_s: float = _setting("games", 300.0, _positive)
    max_correspondence_games: int = _setting("games", 200, _at_least(1))
    max_correspondence_seeks: int = _setting("games", 10, _at_least(1))
    max_correspondence_challenges: int = _setting("games", 10, _at_least(1))
    correspondence_idle_s: float = _setting("games", 600.0, _at_least(0))
    correspondence_poll_s: float = _setting("games", 1.0, _positive)
    # [database]
    database_url: str = _setting("database", "sqlite+aiosqlite:///data/hub.sqlite3", _database_url)
    sqlite_busy_timeout_s: float = _setting("database", 30.0, _positive)
    journal_dir: str = _setting("database", "data/journal", _journal_dir)
    # [bus]
    redis_url: str = _setting("bus", "", _redis_url)
    bus_prefix: str = _setting("bus", "hub:", _bus_prefix)
    bus_ping_interval_s: float = _setting("bus", 5.0, _positive)
    bus_backoff_max_s: float = _setting("bus", 2.0, _positive)
    lease_ttl_ms: int = _setting("bus", 15000, _at_least(100))
    presence_ttl_ms: int = _setting("bus", 30000, _at_least(100))
    # [engines]
    worker_keys: str = _setting("engines", "", _worker_keys)
    worker_key_file: str = _setting("engines", "data/worker.key", _no_whitespace)
    move_lease_s: float = _setting("engines", 20.0, _positive)
    analysis_lease_s: float = _setting("engines", 60.0, _positive)
    fishnet_poll_s: float = _setting("engines", 5.0, _at_least(0))
    max_guest_computer_games: int = _setting("engines", 10, _at_least(0))
    # [analysis]
    analysis_daily_quota: int = _setting("analysis", 20, _at_least(0))
    analysis_max_engine_s: float = _setting("analysis", 600.0, _positive)
    analysis_requests_per_min: float = _setting("analysis", 6.0, _positive)
    analysis_request_burst: int = _setting("analysis", 10, _at_least(1))
    # [tournaments]
    tournament_max_players: int = _setting("tournaments", 1000, _at_least(2))
    tournaments_per_day: int = _setting("tournaments", 5, _at_least(0))
    tournament_entries_per_minute: int = _setting("tournaments", 10, _at_least(1))
    tournament_chat_per_minute: int = _setting("tournaments", 20, _at_least(1))
    tournament_chat_lines_per_s: int = _setting("tournaments", 5, _at_least(1))
    tournament_inline_wave: int = _setting("tournaments", 50, _at_least(2))
    tournament_schedule: str = _setting("tournaments", "", _schedule)
    tournament_schedule_check_s: float = _setting("tournaments", 60.0, _at_least(1))
    # [connections]
    trusted_proxies: str = _setting("connections", "", _networks)
    max_connections: int = _setting("connections", 16000, _at_least(16))
    max_connections_per_address: int = _setting("connections", 64, _at_least(1))
    ics_max_connections_per_address: int = _setting("connections", 8, _at_least(1))
    header_timeout_s: float = _setting("connections", 10.0, _positive)
    body_timeout_s: float = _setting("connections", 20.0, _positive)
    http_keepalive_s: float = _setting("connections", 30.0, _positive)
    login_timeout_s: float = _setting("connections", 30.0, _positive)
    max_opening: int = _setting("connections", 32, _at_least(1))
    silent_hold_s: float = _setting("connections", 0.25, _positive)
    max_queued: int = _setting("connections", 1024, _at_least(1))
    max_queued_per_address: int = _setting("connections", 16, _at_least(1))
    # [auth]
    argon2_time_cost: int = _setting("auth", 3, _at_least(1))
    argon2_memory_kib: int = _setting("auth", 65536, _at_least(8))
    argon2_parallelism: int = _setting("auth", 4, _at_least(1))
    login_free_failures_per_address: int = _setting("auth", 10, _at_least(1))
    login_free_failures_per_account: int = _setting("auth", 5, _at_least(1))
    login_backoff_base_s: float = _setting("auth", 1.0, _positive)
    login_backoff_max_s: float = _setting("auth", 300.0, _positive)
    login_failure_memory_s: float = _setting("auth", 3600.0, _positive)
    registrations_per_address_per_hour: int = _setting("auth", 10, _at_least(1))
    session_max_idle_days: float = _setting("auth", 30.0, _positive)
    # [mail]
    mail_enabled: bool = _setting("mail", False, lambda value: None)
    mail_host: str = _setting("mail", "localhost", _host)
    mail_port: int = _setting("mail", 25, _port)
    mail_from: str = _setting("mail", "variant-hub@localhost", _no_whitespace)
    mail_security: str = _setting("mail", "none", _mail_security)
    mail_user: str = _setting("mail", "", _no_whitespace)
    mail_password: str = _setting("mail", "", lambda value: None)
    mail_timeout_s: float = _setting("mail", 30.0, _positive)
    mail_window_s: float = _setting("mail", 3600.0, _at_least(0))
    mail_daily_cap: int = _setting("mail", 50, _at_least(0))
    mail_queue_limit: int = _setting("mail", 10000, _at_least(1))
    mail_attempts: int = _setting("mail", 8, _at_least(1))
    mail_retry_base_s: float = _setting("mail", 5.0, _positive)
    mail_retry_max_s: float = _setting("mail", 600.0, _positive)
    mail_sweep_s: float = _setting("mail", 60.0, _positive)
    # [reads]
    review_cache_games: int = _setting("reads", 32, _at_least(0))
    review_cache_bytes: int = _setting("reads", 16 * 1024 * 1024, _at_least(0))
    review_replays_at_once: int = _setting("reads", 1, _at_least(1))
    review_replay_queue: int = _setting("reads", 32, _at_least(0))
    review_reads_per_s: float = _setting("reads", 10.0, _positive)
    review_reads_burst: int = _setting("reads", 60, _at_least(1))
    review_replays_per_s: float = _setting("reads", 2.0, _positive)
    review_replays_burst: int = _setting("reads", 20, _at_least(1))

    def __post_init__(self) -> None:
        for spec in dataclasses.fields(self):
            value = _checked_type(spec, getattr(self, spec.name))
            problem = spec.metadata["check"](value)
            if problem:
                raise ConfigError(f"invalid setting {spec.name}={value!r}: {problem}")
            object.__setattr__(self, spec.name, value)
        object.__setattr__(self, "log_level", self.log_level.upper())
        if self.argon2_memory_kib < 8 * self.argon2_parallelism:
            raise ConfigError(
                f"invalid setting argon2_memory_kib={self.argon2_memory_kib}: must be at least "
                f"8 * argon2_parallelism = {8 * self.argon2_parallelism}"
            )

    @property
    def worker_key_list(self) -> tuple[str, ...]:
        """The engine workers' keys of ``worker_keys`` (empty: the embedded run's key file)."""
        return tuple(key.strip() for key in self.worker_keys.split(",") if key.strip())

    @property
    def uses_redis(self) -> bool:
        """True when a Redis URL is set: bus and cluster state go through Redis."""
        return bool(self.redis_url)


def _checked_type(spec: dataclasses.Field[Any], value: Any) -> Any:
    """Return ``value`` as the field's type (an int is accepted for a float field)."""
    kind = cast(type, spec.type)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is float and isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"invalid setting {spec.name}={value!r}: must be a finite number")
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    raise ConfigError(
        f"invalid setting {spec.name}={value!r}: expected {_type_word(kind)}, "
        f"got {type(value).__name__}"
    )


def _type_word(kind: Any) -> str:
    words = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    return words.get(kind, str(kind))


_FIELDS: dict[str, dataclasses.Field[Any]] = {f.name: f for f in dataclasses.fields(Settings)}
SECTIONS: dict[str, tuple[str, ...]] = {}
for _spec in dataclasses.fields(Settings):
    SECTIONS.setdefault(_spec.metadata["section"], ())
    SECTIONS[_spec.metadata["section"]] += (_spec.name,)


def load_settings(path: str | None = None, env: Mapping[str, str] = os.environ) -> Settings:
    """Read the settings in layers: defaults, TOML file, ``HUB_CONFIG`` file, ``HUB_*`` variables.

    :param path: the base TOML file; ``None`` reads ``config/default.toml`` (skipped if absent).
    :param env: the environment to read ``HUB_CONFIG`` and ``HUB_<FIELD>`` overrides from.
    :raises ConfigError: for a missing or malformed file, an unknown key, or a bad value.
    """
    values: JsonObject = {}  # field name -> value, checked by Settings
    if path is not None:
        values.update(_read_toml(Path(path), f"config file {path}"))
    elif DEFAULT_CONFIG_PATH.is_file():
        values.update(_read_toml(DEFAULT_CONFIG_PATH, f"config file {DEFAULT_CONFIG_PATH}"))
    extra = env.get(CONFIG_FILE_ENV)
    if extra:
        values.update(_read_toml(Path(extra), f"config file {extra} (from {CONFIG_FILE_ENV})"))
    for name, spec in _FIELDS.items():
        variable = ENV_PREFIX + name.upper()
        if variable in env:
            values[name] = _parse_env(spec, variable, env[variable])
    if values.get("node_id") == "":
        del values["node_id"]  # empty means "random", which the field's default factory makes
    return Settings(**values)


def _read_toml(path: Path, source: str) -> JsonObject:
    """Return the settings of one TOML file as a flat field name -> value mapping."""
    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except FileNotFoundError:
        raise ConfigError(f"{source} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}") from None
    values: JsonObject = {}
    for section, table in document.items():
        if section not in SECTIONS:
            known = ", ".join(f"[{name}]" for name in SECTIONS)
            raise ConfigError(f"{source}: unknown section [{section}] (known: {known})")
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: {section} must be a [{section}] table of settings")
        for key, value in table.items():
            if key not in SECTIONS[section]:
                raise ConfigError(f"{source}: unknown setting [{section}] {key}{_hint(key)}")
            values[key] = _convert(_FIELDS[key], value, source)
    return values


def _hint(key: str) -> str:
    spec = _FIELDS.get(key)
    return f" (it belongs in [{spec.metadata['section']}])" if spec else ""


def _convert(spec: dataclasses.Field[Any], value: Any, source: str) -> Any:
    """Type-check one value so that errors name the source, not just the setting."""
    if spec.name == "node_id" and value == "":
        return value  # "" asks for a random node id; load_settings leaves it to the default
    try:
        value = _checked_type(spec, value)
        problem = spec.metadata["check"](value)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (from {source})") from None
    if problem:
        raise ConfigError(f"invalid setting {spec.name}={value!r} (from {source}): {problem}")
    return value


def _parse_env(spec: dataclasses.Field[Any], variable: str, text: str) -> Any:
    """Parse the text of environment variable ``variable`` as the field's type."""
    source = f"environment variable {variable}"
    value: Any = text.strip() if spec.type is not str else text
    try:
        if spec.type is bool:
            value = {"true": True, "1": True, "false": False, "0": False}[value.lower()]
        elif spec.type is int:
            value = int(value)
        elif spec.type is float:
            value = float(value)
    except (ValueError, KeyError):
        raise ConfigError(
            f"invalid setting {spec.name}={text!r} (from {source}): "
            f"expected {_type_word(spec.type)}"
        ) from None
    return _convert(spec, value, source)
