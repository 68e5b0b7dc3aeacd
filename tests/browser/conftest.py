"""Browser-test fixtures: one editor process per module, Debian's Chromium, a page per user."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.browser.chromium import CHROMIUM, launch
from tests.webapp.editor_process import base_url, data_dir

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

__all__ = ["base_url", "data_dir"]  # the shared editor fixtures, re-exported for pytest


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"Debian's Chromium is not at {CHROMIUM}; run scripts/install_chromium.sh"
    if sync_api is None:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    reason = missing_browser()
    if reason is not None:
        if os.environ.get("CI", "").lower() in {"true", "1"}:
            # A green CI run must not hide that the browser tests never ran.
            pytest.fail(f"{reason} (CI is set: the browser tests must run)", pytrace=False)
        pytest.skip(reason)
    assert sync_api is not None
    with sync_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def user() -> str:
    return f"user-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def page(browser: object, base_url: str, user: str) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})  # type: ignore[attr-defined]
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{base_url}/memories/?user={user}&lang=en")
    yield page
    context.close()
