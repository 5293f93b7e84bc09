"""Browser tests of the web client: the real server on port 0 and Debian's Chromium, driven by
Playwright for Python (its bundled driver; no browser download).

``hub`` starts an App (SQLite in the test's ``tmp_path``, seeded randomness) and stops it;
``browser`` is Chromium headless, launched once per session (the tests and their fixtures run
on the session's event loop, where it lives: launching it and Playwright's driver for each
test cost about 0.7 s); ``open_page(name)`` gives a page in a fresh context (its own storage,
cookies and cache, as a separate browser would have), closed after the test. Every page fails the test on a
``pageerror`` or a ``console.error``. Screenshots go to ``test-output/web/`` (ignored by git),
and also to ``docs/screenshots/`` (the ones docs/web.md shows) when ``WEB_SCREENSHOTS_TO_DOCS=1``.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, ConsoleMessage, Error, Page, async_playwright, expect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "transport"))
from seats import TEST_OUTPUT
from support import copy_sqlite_database
from ws_support import settings_for

from server.app import App

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
DOC_SCREENSHOTS = ROOT / "docs" / "screenshots"
OpenPage = Callable[..., Awaitable[Page]]

# The machine running the suite may be busy: assertions on the page wait up to 30 s.
expect.set_options(timeout=30_000)


@pytest.fixture
def hub_settings() -> dict[str, Any]:
    """Settings overrides of the test's hub (a test module may override this fixture)."""
    return {}


WEB_TESTS = Path(__file__).resolve().parent

#: The event loop of the browser tests and of their async fixtures (the session's Chromium lives
#: on it).
ON_THE_BROWSERS_LOOP = pytest.mark.asyncio(loop_scope="session")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(WEB_TESTS):
            item.add_marker(ON_THE_BROWSERS_LOOP, append=False)


@pytest_asyncio.fixture(loop_scope="session")
async def hub(tmp_path: Path, hub_settings: dict[str, Any], migrated_sqlite: Path) -> AsyncIterator[App]:
    copy_sqlite_database(migrated_sqlite, tmp_path / "hub.sqlite3")  # at head: nothing to migrate
    database = f"sqlite+aiosqlite:///{tmp_path / 'hub.sqlite3'}"
    app = App(settings_for(database, **hub_settings), rng=random.Random(13))
    await app.start()
    yield app
    await app.stop()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/system-deps.sh")
    async with async_playwright() as p:
        instance = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield instance
        await instance.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember each phase's report on the item, so fixtures can tell a failed test."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest_asyncio.fixture(loop_scope="session")
async def open_page(request: pytest.FixtureRequest, hub: App, browser: Browser) -> AsyncIterator[OpenPage]:
    errors: list[str] = []
    pages: list[Page] = []

    async def open_(who: str, path: str = "/", *, port: int | None = None, clock: bool = False, **context: Any) -> Page:
        """A page of ``path`` on the hub (or through a proxy listening on ``port``).
        ``clock=True`` installs Playwright's clock before the page loads: time flows as usual
        until the test moves it on (``page.clock.run_for``), firing the page's timers on the way."""
        options: dict[str, Any] = {"viewport": {"width": 1280, "height": 900}, "accept_downloads": True}
        ctx = await browser.new_context(**{**options, **context})
        ctx.set_default_timeout(30_000)
        if clock:
            await ctx.clock.install()
        page = await ctx.new_page()

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(f"{who}: console.error: {message.text}")

        page.on("console", on_console)
        page.on("pageerror", lambda error: errors.append(f"{who}: pageerror: {error}"))
        await page.goto(f"http://127.0.0.1:{port or hub.port}{path}")
        pages.append(page)
        return page

    yield open_
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:  # what each page showed when the test failed
        TEST_OUTPUT.mkdir(parents=True, exist_ok=True)
        for i, page in enumerate(pages):
            with contextlib.suppress(Error):
                await page.screenshot(path=str(TEST_OUTPUT / f"failed-{request.node.name}-{i}.png"))
    for page in pages:
        with contextlib.suppress(Error):
            await page.context.close()
    assert errors == [], "\n".join(errors)


@pytest.fixture
def shots() -> Callable[..., Awaitable[None]]:
    """``await shots(page, "minishogi")`` writes a screenshot of the page (see the module doc)."""

    async def take(page: Page, name: str, full_page: bool = True) -> None:
        """``full_page=False``: what the viewport shows (a person's first screen)."""
        TEST_OUTPUT.mkdir(parents=True, exist_ok=True)
        out = TEST_OUTPUT / f"{name}.png"
        await page.screenshot(path=str(out), full_page=full_page)
        if os.environ.get("WEB_SCREENSHOTS_TO_DOCS") == "1":
            DOC_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out, DOC_SCREENSHOTS / f"{name}.png")

    return take
