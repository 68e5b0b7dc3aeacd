"""The editor's two irreversible actions in Debian's Chromium: "Erase for good" on a memory and
"Delete this user's data", each behind a confirmation, each answered with its report."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from memory.archive import ArchivedMessage  # feature: archive
from memory.archive.sqlite_archive import SqliteArchive  # feature: archive
from memory.errors import MemoryNotFound
from memory.store.backends.yaml_files import YamlMemoryManager

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow


def card(page: object, text: str) -> object:
    return page.locator(".card", has_text=text)  # type: ignore[attr-defined]


def seed(data_dir: Path, user: str, facts: list[str]) -> dict[str, str]:
    """Memories of `user` and the messages that said them in the archive the editor reads
    (`<backend folder>/conversations`); the ids by fact."""
    store = YamlMemoryManager(data_dir, user)
    ids = {fact: store.add(f"User says: {fact}", "life", "seed") for fact in facts}
    archive = SqliteArchive(data_dir / "conversations", user)  # feature: archive
    now = time.time()  # feature: archive
    archive.add([  # feature: archive
        ArchivedMessage(user, "t1", "", uuid.uuid4().hex, "user", fact, now + n)  # feature: archive
        for n, fact in enumerate(facts)  # feature: archive
    ])  # fmt: skip  # feature: archive
    archive.close()  # feature: archive
    return ids


def files_holding(folder: Path, needle: str) -> list[str]:
    wanted = needle.lower().encode()
    return [
        str(p.relative_to(folder)) for p in folder.rglob("*")
        if p.is_file() and wanted in p.read_bytes().lower()
    ]  # fmt: skip


def test_erase_for_good_asks_first_then_shows_what_went(page, data_dir: Path, user: str) -> None:
    ids = seed(data_dir, user, ["I live at 18 Wenyi Road", "I have a cat named Miso"])
    page.reload()
    card(page, "Wenyi").locator("button.erase").click()
    dialog = page.locator("dialog form.confirm")
    sync_api.expect(dialog).to_contain_text("Erase this memory for good?")
    sync_api.expect(dialog).to_contain_text("18 Wenyi Road")
    dialog.locator("button.cancel").click()  # changing one's mind erases nothing
    sync_api.expect(card(page, "Wenyi")).to_be_visible()
    assert YamlMemoryManager(data_dir, user).get(ids["I live at 18 Wenyi Road"])

    card(page, "Wenyi").locator("button.erase").click()
    page.locator("dialog button.confirm-erase").click()
    report = page.locator("dialog .erase-report")
    sync_api.expect(report).to_contain_text("yaml store: memories: 1")
    sync_api.expect(report).to_contain_text("archive: messages: 1")  # feature: archive
    sync_api.expect(report).to_contain_text("checkpoints")
    page.locator("dialog button", has_text="Close").click()
    sync_api.expect(card(page, "Wenyi")).to_have_count(0)
    sync_api.expect(card(page, "Miso")).to_be_visible()
    with pytest.raises(MemoryNotFound):
        YamlMemoryManager(data_dir, user).get(ids["I live at 18 Wenyi Road"], include_deleted=True)
    assert files_holding(data_dir, "Wenyi") == []
    page.reload()  # gone for good, not only from the page
    sync_api.expect(card(page, "Miso")).to_be_visible()
    sync_api.expect(card(page, "Wenyi")).to_have_count(0)


def test_a_forgotten_memory_can_be_erased_from_recently_deleted(
    page, data_dir: Path, user: str
) -> None:
    ids = seed(data_dir, user, ["I work at the Lantern Clinic"])
    YamlMemoryManager(data_dir, user).delete(ids["I work at the Lantern Clinic"], "forget it")
    page.reload()
    page.locator("#show-deleted").click()
    page.locator("dialog .deleted-item", has_text="Lantern").locator("button.erase").click()
    page.locator("dialog button.confirm-erase").click()
    sync_api.expect(page.locator("dialog .erase-report")).to_contain_text("memories: 1")
    assert files_holding(data_dir, "Lantern") == []


def test_delete_this_users_data_needs_their_id_typed_and_spares_the_others(
    page, data_dir: Path, user: str
) -> None:
    seed(data_dir, user, ["I was born in Tromso", "My brother is called Arvid"])
    other = f"other-{uuid.uuid4().hex[:6]}"
    seed(data_dir, other, ["I was born in Valparaiso"])
    page.reload()
    sync_api.expect(card(page, "Tromso")).to_be_visible()
    page.locator("#erase-user").click()
    dialog = page.locator("dialog form.confirm")
    sync_api.expect(dialog).to_contain_text(user)
    dialog.locator("input[name=confirm]").fill("someone-else")
    dialog.locator("button.confirm-erase").click()
    sync_api.expect(dialog.locator(".error")).to_contain_text(f"Type {user} to confirm")
    assert files_holding(data_dir, "Tromso")  # a wrong answer erases nothing

    dialog.locator("input[name=confirm]").fill(user)
    dialog.locator("button.confirm-erase").click()
    report = page.locator("dialog .erase-report")
    sync_api.expect(report).to_contain_text("yaml store: memories: 2")
    sync_api.expect(report).to_contain_text("archive: messages: 2")  # feature: archive
    page.locator("dialog button", has_text="Close").click()
    sync_api.expect(page.locator(".card")).to_have_count(0)
    assert files_holding(data_dir, "Tromso") == [] and files_holding(data_dir, "Arvid") == []
    assert [i.description for i in YamlMemoryManager(data_dir, other).list_items().values()] == [
        "User says: I was born in Valparaiso"
    ]
    assert SqliteArchive(data_dir / "conversations", other).count() == 1  # feature: archive
