"""The editor in Debian's Chromium with the archive off, hotness at half-life 0 and topics off:
no Conversations link, no "Hottest first" or hotness on a card, no "Group by topic"; with them on,
all of them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.store.backends.yaml_files import YamlMemoryManager
from tests.webapp.editor_process import run_editor

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An editor whose deployment keeps no archive, lets nothing decay and has no topics, and
    its folder."""
    data_dir = tmp_path_factory.mktemp("features_off") / "memory"
    data_dir.mkdir()
    env = {
        "GULFSTREAM_CONVERSATION_ARCHIVE": "off",
        "GULFSTREAM_HOTNESS_HALF_LIFE_DAYS": "0",
        "GULFSTREAM_TOPICS": "off",
    }
    with run_editor(data_dir, **env) as base:
        yield base, data_dir


def opened(browser: object, base: str, data_dir: Path) -> object:
    """The editor's page for a new user with one memory, once its card is shown."""
    user = f"user-{uuid.uuid4().hex[:8]}"
    YamlMemoryManager(data_dir, user).add("User keeps bees in the garden.", "hobbies", "seed")
    context = browser.new_context(viewport={"width": 1280, "height": 860})  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(f"{base}/memories/?user={user}&lang=en")
    page.locator(".card", has_text="bees").wait_for()
    return page


@pytest.mark.uses("archive")
def test_no_conversations_link_while_the_archive_is_off(
    browser: object, off: tuple[str, Path], base_url: str, data_dir: Path
) -> None:
    page = opened(browser, *off)
    assert page.locator("#to-conversations").count() == 0  # type: ignore[attr-defined]
    assert opened(browser, base_url, data_dir).locator("#to-conversations").is_visible()  # type: ignore[attr-defined]


@pytest.mark.uses("hotness")
def test_no_hotness_anywhere_on_the_page_at_half_life_zero(
    browser: object, off: tuple[str, Path], base_url: str, data_dir: Path
) -> None:
    page = opened(browser, *off)
    assert page.locator('#sort option[value="hotness"]').count() == 0  # type: ignore[attr-defined]
    assert page.locator(".card .hotness").count() == 0  # type: ignore[attr-defined]
    assert page.locator(".card .hits").count() == 1  # type: ignore[attr-defined]  # the rest stays
    shown = opened(browser, base_url, data_dir)  # the default deployment shows both
    assert shown.locator('#sort option[value="hotness"]').count() == 1  # type: ignore[attr-defined]
    assert shown.locator(".card .hotness").count() == 1  # type: ignore[attr-defined]


@pytest.mark.uses("topics")
def test_no_grouping_by_topic_while_topics_are_off(
    browser: object, off: tuple[str, Path], base_url: str, data_dir: Path
) -> None:
    page = opened(browser, *off)
    assert page.locator('#group option[value="topic"]').count() == 0  # type: ignore[attr-defined]
    shown = opened(browser, base_url, data_dir)
    assert shown.locator('#group option[value="topic"]').count() == 1  # type: ignore[attr-defined]
