"""The editor's hotness and topic views in Debian's Chromium: hottest first, cold badge, topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.store.backends.yaml_files import YamlMemoryManager
from tests.webapp.test_hotness_topics import seed

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow


def test_sort_by_hotness_cold_badge_and_group_by_topic(page, data_dir: Path, user: str) -> None:
    seed(data_dir, user)
    page.reload()
    cards = page.locator("#waterfall .card")
    sync_api.expect(cards).to_have_count(5)
    # Only the long-past plan carries the cold badge; every card shows hotness.  # feature: hotness
    cold = page.locator(".card", has=page.locator(".badge.cold"))  # feature: hotness
    sync_api.expect(cold).to_have_count(1)  # feature: hotness
    sync_api.expect(cold).to_contain_text("flight to Tokyo")  # feature: hotness
    sync_api.expect(page.locator(".card .hotness")).to_have_count(5)  # feature: hotness
    sync_api.expect(cards.first).to_contain_text("visit Kyoto")  # newest first by default

    page.locator("#sort").select_option("hotness")  # feature: hotness
    sync_api.expect(cards.first).to_contain_text("works at Google")  # feature: hotness
    sync_api.expect(cards.last).to_contain_text("flight to Tokyo")  # feature: hotness

    page.locator("#group").select_option("topic")
    mother = page.locator('.group[data-topic="person:mother"]')
    sync_api.expect(mother.locator(".card")).to_have_count(2)  # English and Chinese, one person
    sync_api.expect(mother.locator("h2")).to_contain_text("Mom")
    sync_api.expect(mother.locator(".count")).to_have_text("2")
    # A write while grouped by topic: the page asks again and files the new card under its topic.
    YamlMemoryManager(data_dir, user).add("妈妈下个月去成都旅游", "家人", "seed")
    sync_api.expect(mother.locator(".card")).to_have_count(3)
    sync_api.expect(mother.locator(".count")).to_have_text("3")
    page.locator("#lang").click()  # the topic's name follows the page's language
    sync_api.expect(page.locator('.group[data-topic="person:mother"] h2')).to_contain_text("妈妈")
    sync_api.expect(page.locator("#group option:checked")).to_have_text("按话题分组")
