"""The account menu: a new password logs the player's other devices out; "Log out everywhere"
logs this one out too."""

from __future__ import annotations

from playwright.async_api import expect
from seats import WAIT_MS, Seat

from server.app import App


async def test_change_password_and_log_out_everywhere(hub: App, open_page) -> None:  # type: ignore[no-untyped-def]
    laptop = Seat(await open_page("laptop"), "carol")
    phone = await open_page("phone")
    await laptop.register()
    await phone.fill("#auth-form input[name=name]", "carol")
    await phone.fill("#auth-form input[name=password]", "correct horse battery")
    await phone.click("#login")
    await expect(phone.locator("#user")).to_have_text("carol", timeout=WAIT_MS)

    page = laptop.page
    await page.click("#account summary")
    await page.fill("#password-form input[name=old]", "correct horse battery")
    await page.fill("#password-form input[name=new]", "a brand new password")
    await page.click("#password-form button[type=submit]")
    await expect(page.locator("#password-note")).to_have_text(
        "Password changed; your other devices are logged out.", timeout=WAIT_MS
    )
    # The phone's session ended: it reconnects, its token is refused, it shows the login form.
    await expect(phone.locator("#auth")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator("#user")).to_have_text("carol")  # the laptop goes on

    await page.click("#logout-everywhere")
    await expect(page.locator("#auth")).to_be_visible(timeout=WAIT_MS)
    await page.fill("#auth-form input[name=name]", "carol")
    await page.fill("#auth-form input[name=password]", "a brand new password")
    await page.click("#login")
    await expect(page.locator("#user")).to_have_text("carol", timeout=WAIT_MS)
