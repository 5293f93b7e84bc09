"""The token page works under its Content-Security-Policy (its inline script and style allowed by
hash; any violation is a console error, which fails the test), and no other site may frame it."""

from __future__ import annotations

from playwright.async_api import expect

from server.app import App


async def test_the_token_page_runs_under_its_policy_and_refuses_frames(hub: App, open_page) -> None:  # type: ignore[no-untyped-def]
    await hub.accounts.register("carol", "correct horse")
    page = await open_page("carol", "/api/token/page")
    await page.fill("input[name=name]", "carol")
    await page.fill("input[name=password]", "correct horse")
    await page.click("button[type=submit]")  # the inline script runs: the token is shown
    await expect(page.locator("#token")).to_contain_text("vhb_")
    await page.click("#list")
    await expect(page.locator("#tokens li")).to_have_count(1)
    font = await page.evaluate("getComputedStyle(document.getElementById('token')).fontFamily")
    assert "monospace" in font  # the inline style applies too
    headers = (await page.request.get(page.url)).headers
    assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
