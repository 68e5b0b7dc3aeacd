"""The editor's Tidy up button in Debian's Chromium: a pass runs and its report shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.store.backends.yaml_files import YamlMemoryManager

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow


def test_tidy_up_merges_duplicates_and_shows_the_report(page, data_dir: Path, user: str) -> None:
    store = YamlMemoryManager(data_dir, user)
    kept = [
        store.add(text, "notes", "seed")
        for text in (
            "User likes jazz",
            "User enjoys jazz music",
            "User lives in Oslo",
            "User has a cat",
            "User reads books",
        )
    ]
    page.reload()
    page.locator("#consolidate").click()
    report = page.locator("dialog .consolidation-report")
    sync_api.expect(report).to_contain_text("Merged 1 duplicates into 1 memories")
    sync_api.expect(report).to_contain_text("4 memories kept")
    sync_api.expect(report).to_contain_text("Recently deleted")
    page.locator("dialog button", has_text="Close").click()
    sync_api.expect(page.locator(".card", has_text="User likes jazz")).to_have_count(0)
    assert store.get(kept[0], include_deleted=True).deleted


def test_a_refused_pass_says_why(page, data_dir: Path, user: str) -> None:
    store = YamlMemoryManager(data_dir, user)
    for text in ("User likes tea", "User enjoys tea", "User loves tea", "User has a dog"):
        store.add(text, "notes", "seed")  # two of four would go: over the 25% guard
    page.reload()
    page.locator("#consolidate").click()
    report = page.locator("dialog .consolidation-report")
    sync_api.expect(report).to_contain_text("Nothing was changed:")
    sync_api.expect(report).to_contain_text("would remove 2 of 4 live memories")
    assert len(store.list_items()) == 4
