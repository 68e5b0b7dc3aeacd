"""The editor in Chromium: a save that would overwrite a newer change is refused and shown; branch
memories and their copy-on-write versions are labelled, in English and Chinese."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memory.store.branch import Provenance
from memory.store.document import Change
from tests.browser.test_editor import card, open_store
from tests.webapp.editor_process import ROOT

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow
OTHER_WRITER = (
    "import sys; from memory.store.backends.yaml_files import YamlMemoryManager as M; "
    "m = M(sys.argv[1], sys.argv[2]); "
    "m.update(sys.argv[3], 'memory agent: new timetable', new_description=sys.argv[4])"
)


def test_a_change_made_while_the_edit_form_is_open_is_not_overwritten(
    page, data_dir: Path, user: str
) -> None:
    store = open_store(data_dir, user)
    memory_id = store.add("Takes the 8:10 train to work", "commute", "seed")
    page.reload()
    card(page, "8:10").locator("button.edit").click()
    form = page.locator("dialog form")
    form.locator("textarea[name=description]").fill("Takes the 8:40 train to work")
    form.locator("input[name=reason]").fill("later start")
    # Another process (the memory writer) changes the memory while the form is open.
    subprocess.run(
        [sys.executable, "-c", OTHER_WRITER, str(data_dir), user, memory_id,
         "Takes the 7:50 train to work"],
        cwd=ROOT, check=True,
    )  # fmt: skip
    form.locator("button[type=submit]").click()

    sync_api.expect(form.locator(".error")).to_contain_text("Someone else changed this memory")
    sync_api.expect(form.locator(".error")).to_contain_text("Takes the 7:50 train to work")
    assert store.get(memory_id).description == "Takes the 7:50 train to work"
    assert store.get(memory_id).history[-1]["reason"] == "memory agent: new timetable"
    sync_api.expect(card(page, "7:50")).to_have_count(1)  # the page reloaded the card

    # Having seen the newer version, saving again is a deliberate choice and goes through.
    form.locator("button[type=submit]").click()
    sync_api.expect(card(page, "8:40")).to_be_visible()
    assert store.get(memory_id).description == "Takes the 8:40 train to work"
    assert store.get(memory_id).history[-2]["reason"] == "memory agent: new timetable"


def test_branch_memories_and_their_versions_are_labelled(page, data_dir: Path, user: str) -> None:
    store = open_store(data_dir, user)
    plan = store.apply(
        [Change(op="add", description="Planning a trip to Kyoto", theme="task", scope="branch")],
        "turn-1",
        Provenance(thread_id="thread-kyoto", checkpoint_id="cp-1"),
    ).results[0]
    version = store.apply(
        [Change(op="add", description="Planning a trip to Osaka instead", theme="task",
                scope="branch", supersedes=plan)],
        "turn-2",
        Provenance(thread_id="thread-kyoto", checkpoint_id="cp-2b"),
    ).results[0]  # fmt: skip
    store.add("Is vegetarian", "food", "seed")
    page.reload()

    old, new, shared = card(page, "Kyoto"), card(page, "Osaka"), card(page, "vegetarian")
    sync_api.expect(old.locator(".badge.branch")).to_have_text("branch")
    sync_api.expect(old.locator(".badge.branch")).to_have_attribute(
        "title",
        "Branch memory: seen only by runs of thread thread-kyoto from checkpoint cp-1 on "
        "(turn turn-1)",
    )
    sync_api.expect(old).to_have_class("card superseded")
    sync_api.expect(old.locator(".badge.superseded")).to_contain_text(
        f"replaced in a later branch by {version} · other branches still see this one"
    )
    sync_api.expect(new.locator(".badge.replaces")).to_have_text(f"replaces {plan}")
    sync_api.expect(new).not_to_have_class("card superseded")
    sync_api.expect(shared.locator(".badge")).to_have_count(0)

    page.locator("#lang").click()
    sync_api.expect(card(page, "Osaka").locator(".badge.branch")).to_have_text("分支")
    sync_api.expect(card(page, "Osaka").locator(".badge.replaces")).to_have_text(f"取代 {plan}")
    sync_api.expect(card(page, "Kyoto").locator(".badge.superseded")).to_contain_text(
        "其他分支仍能看到这一条"
    )
