"""The read-only conversation search page in Debian's Chromium: find, see the context, stay text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memory.archive import ArchivedMessage
from memory.archive.sqlite_archive import SqliteArchive

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow
XSS = '<img src=x onerror="window.__xss = 1">'


def test_search_past_conversations_from_the_editor(page, data_dir: Path, user: str) -> None:
    archive = SqliteArchive(data_dir / "conversations", user)
    now = time.time()
    texts = ["我下周要去上海出差", f"祝你一路顺风 {XSS}", "The flat viewing is on Tuesday"]
    archive.add([
        ArchivedMessage(user, "t1", f"c{i}", f"m{i}", "user" if i != 1 else "assistant", text,
                        now + i)
        for i, text in enumerate(texts)
    ])  # fmt: skip
    archive.close()
    page.locator("#to-conversations").click()
    page.wait_for_url("**/memories/conversations/**")
    page.locator("#q").fill("上海")
    page.locator("#search-form button[type=submit]").click()
    hit = page.locator(".conversation-results .hit")
    sync_api.expect(hit).to_have_count(1)
    sync_api.expect(hit.locator(".message.match")).to_contain_text("我下周要去上海出差")
    sync_api.expect(hit).to_contain_text("祝你一路顺风")  # the message after it
    sync_api.expect(hit).to_contain_text(XSS)  # shown as text
    assert page.evaluate("window.__xss") is None
    page.locator("#q").fill("violin")
    page.locator("#search-form button[type=submit]").click()
    sync_api.expect(page.locator(".conversation-results")).to_contain_text(
        "No archived message matches."
    )
