"""A real headless Chromium for the web pages (``server/web/``): Debian's ``chromium``
(installed by ``./dev test``), driven by Playwright for Python pointed at that executable
(no browser download). ``tests/server/conftest.py`` offers the fixtures to every server test.

The pages' Content-Security-Policy allows no eval: give ``page.wait_for_function`` a function
(``"() => window.x > 1"``), never a bare expression (Playwright would eval it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# The screenshots shown in the README (docs/screenshots/): a page test saves its page there.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Chromium as root in a sandboxed machine with no network: no sandbox, no GPU, none of the
# background connections (refused here, and slow to fail).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def chromium_path() -> str:
    path = os.environ.get("CASINO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError("Debian's chromium is not installed (apt-get install chromium; ./dev test does it)")
    return path


@pytest.fixture(scope="module")
async def browser():
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=chromium_path(), args=ARGS)
        try:
            yield b
        finally:
            await b.close()


class Pages:
    """Opens pages as a given user, each in a context of its own (its own cookie jar)."""

    def __init__(self, browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.contexts: list = []

    async def as_user(self, user: str, password: str, path: str = "/app/", *, width: int = 1280,
                      height: int = 900):
        """A page logged in through the lobby's form, then at ``path``. Console errors and
        uncaught exceptions are collected in ``page.problems`` (a test may assert none)."""
        ctx = await self.browser.new_context(viewport={"width": width, "height": height})
        self.contexts.append(ctx)
        page = await ctx.new_page()
        page.problems = []
        page.on("pageerror", lambda exc: page.problems.append(f"pageerror: {exc}"))
        # (a refused request's status is the test's business, not a script error: "Failed to load resource")
        page.on("console", lambda m: page.problems.append(f"console: {m.text}")
                if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
        page.set_default_timeout(15_000)
        await page.goto(self.base_url + "/app/")
        await page.fill("input[name=user]", user)
        await page.fill("input[name=password]", password)
        await page.click("#login")
        await page.wait_for_selector("header.top")
        if path != "/app/":
            await page.goto(self.base_url + path)
        return page

    async def close(self) -> None:
        for ctx in self.contexts:
            await ctx.close()


@pytest.fixture
async def open_page(browser, server):
    pages = Pages(browser, server.url)
    try:
        yield pages
    finally:
        await pages.close()


def screenshots_dir() -> Path:
    """Where a page test saves its screenshot: docs/screenshots/ when asked for
    (``CASINO_SCREENSHOTS=1``: what refreshes the README's pictures), else a scratch folder,
    so an ordinary test run leaves the checkout as it was."""
    folder = SCREENSHOTS if os.environ.get("CASINO_SCREENSHOTS") == "1" else \
        Path(os.environ.get("TMPDIR", "/tmp")) / "casino-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def screenshot(page, name: str) -> None:
    """Take the page whole (docs/screenshots/<name>.png with CASINO_SCREENSHOTS=1)."""
    await page.screenshot(path=str(screenshots_dir() / f"{name}.png"), full_page=True)
