"""The memory editor in Debian's Chromium: edit, delete and undo, live updates, inert XSS."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from memory.store.backends.yaml_files import YamlMemoryManager
from tests.webapp.editor_process import ROOT

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow
SCREENSHOTS = ROOT / "test-output"
XSS_IMG = '<img src=x onerror="window.__xss = 1; alert(1)">'
XSS_SCRIPT = "<script>window.__xss = 2; alert(2)</script>"


def open_store(data_dir: Path, user: str) -> YamlMemoryManager:
    return YamlMemoryManager(data_dir, user)


def card(page: object, text: str) -> object:
    return page.locator(".card", has_text=text)  # type: ignore[attr-defined]


def submit_edit(page: object, text: str, description: str, reason: str | None) -> object:
    """Open a card's edit form, fill it and submit; `reason=None` drops the browser's own check
    so the server's refusal shows. Returns the form."""
    card(page, text).locator("button.edit").click()
    form = page.locator("dialog form")  # type: ignore[attr-defined]
    form.locator("textarea[name=description]").fill(description)
    if reason is None:
        form.locator("input[name=reason]").evaluate("node => node.removeAttribute('required')")
    else:
        form.locator("input[name=reason]").fill(reason)
    form.locator("button[type=submit]").click()
    return form


def test_edit_a_card_and_the_reason_goes_into_history(page, data_dir: Path, user: str) -> None:
    store = open_store(data_dir, user)
    memory_id = store.add("Drinks oolong tea every morning", "habits", "seed")
    page.reload()
    submit_edit(page, "oolong", "Drinks green tea every morning", "user switched to green tea")
    sync_api.expect(card(page, "green tea")).to_be_visible()
    assert store.get(memory_id).description == "Drinks green tea every morning"
    assert store.get(memory_id).history[-1]["reason"] == "user switched to green tea"
    card(page, "green tea").locator("button.history").click()
    timeline = page.locator("dialog .timeline")
    sync_api.expect(timeline.locator("li").first).to_contain_text("user switched to green tea")
    sync_api.expect(timeline.locator("li").first).to_contain_text("oolong")  # the old text


def test_a_reason_is_required_and_nothing_is_written_without_it(
    page, data_dir: Path, user: str
) -> None:
    store = open_store(data_dir, user)
    memory_id = store.add("Prefers window seats", "travel", "seed")
    page.reload()
    form = submit_edit(page, "window seats", "Prefers aisle seats", None)
    sync_api.expect(form.locator(".error")).to_contain_text("reason")
    sync_api.expect(form.locator("input[name=reason]")).to_have_class("invalid")
    assert store.get(memory_id).description == "Prefers window seats"


def test_delete_then_undo_and_restore_from_recently_deleted(
    page, data_dir: Path, user: str
) -> None:
    store = open_store(data_dir, user)
    first = store.add("Has a cat named Miso", "family", "seed")
    second = store.add("Allergic to peanuts", "health", "seed")
    page.reload()
    card(page, "Miso").locator("button.delete").click()
    sync_api.expect(card(page, "Miso")).to_have_count(0)
    assert store.get(first, include_deleted=True).deleted
    page.locator("#toast button.undo").click()
    sync_api.expect(card(page, "Miso")).to_be_visible()
    assert not store.get(first).deleted

    card(page, "peanuts").locator("button.delete").click()
    sync_api.expect(card(page, "peanuts")).to_have_count(0)
    page.locator("#show-deleted").click()
    row = page.locator("dialog .deleted-item", has_text="peanuts")
    row.locator("button.restore").click()
    sync_api.expect(page.locator("dialog .deleted-item", has_text="peanuts")).to_have_count(0)
    page.locator("dialog button", has_text="Close").click()
    sync_api.expect(card(page, "peanuts")).to_be_visible()
    assert not store.get(second).deleted


def test_a_write_from_another_process_shows_up_live(page, data_dir: Path, user: str) -> None:
    open_store(data_dir, user).add("Works as a nurse", "work", "seed")
    page.reload()
    sync_api.expect(page.locator("#live.on")).to_be_visible()
    writer = (
        "import sys; from memory.store.backends.yaml_files import YamlMemoryManager as M; "
        "M(sys.argv[1], sys.argv[2]).add('Moved to Hangzhou in May', 'home', 'memory agent: add')"
    )
    subprocess.run([sys.executable, "-c", writer, str(data_dir), user], cwd=ROOT, check=True)
    sync_api.expect(card(page, "Hangzhou")).to_be_visible(timeout=10_000)
    sync_api.expect(page.locator("#activity li", has_text="Hangzhou")).to_contain_text("created")
    sync_api.expect(page.locator("#activity li", has_text="Hangzhou")).to_contain_text(
        "memory agent"
    )


RECORD_TURNS = """
import sys
from memory.admission import score_turn
from memory.long_term import TRACE_FILE
from memory.writer.turn import Turn
from memory.usage.counts import Usage
from memory.writer.trace import UsageLedger, WriteTrace

folder, user = sys.argv[1], sys.argv[2]
trace = WriteTrace(f"{folder}/{TRACE_FILE}")
for text in ("ok thanks", "I moved to Hangzhou in May"):
    said = [{"role": "user", "content": text}]
    trace.record_admission(Turn.of(user, said, thread_id="t", admission=score_turn(text)))
UsageLedger(f"{folder}/{TRACE_FILE}").record(user, "writer:t", {"writer": Usage(2, 900, 40)})
"""


def test_admission_decisions_show_live_and_the_status_counts_model_calls(
    page, data_dir: Path, user: str
) -> None:
    """What ltm_write records for each turn (another process: the chat) appears in the live
    panel, and the model calls in the status panel."""
    sync_api.expect(page.locator("#live.on")).to_be_visible()
    subprocess.run([sys.executable, "-c", RECORD_TURNS, str(data_dir), user], cwd=ROOT, check=True)
    skipped = page.locator("#activity li.admission.skip")
    sync_api.expect(skipped).to_contain_text("Admission: skipped", timeout=10_000)
    sync_api.expect(skipped).to_contain_text("small_talk")
    sync_api.expect(page.locator("#activity li.admission.batch")).to_contain_text("Hangzhou")
    page.locator("#status").click()
    sync_api.expect(page.locator("dialog .panel")).to_contain_text("memory writer: 2 calls")


def test_xss_payloads_show_literally_and_run_nothing(page, data_dir: Path, user: str) -> None:
    store = open_store(data_dir, user)
    store.add(f"Bio: {XSS_IMG}", XSS_SCRIPT[:32], "seed")
    store.add(f"Note {XSS_SCRIPT}", "notes", "seed")
    page.reload()
    sync_api.expect(card(page, "Bio:")).to_be_visible()
    assert card(page, "Bio:").locator(".description").text_content() == f"Bio: {XSS_IMG}"
    assert card(page, "Note").locator(".description").text_content() == f"Note {XSS_SCRIPT}"
    assert page.locator("#waterfall img, #waterfall script").count() == 0
    card(page, "Bio:").locator("button.history").click()
    sync_api.expect(page.locator("dialog .timeline")).to_contain_text(XSS_IMG)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss === undefined")
    assert page.dialogs == []


def test_screenshots_for_review(browser, base_url: str, data_dir: Path) -> None:
    user = f"demo-{uuid.uuid4().hex[:6]}"
    store = open_store(data_dir, user)
    for description, theme in [
        ("Likes hiking on weekends, usually in the Western Hills", "hobbies"),
        ("喜欢周末去西山徒步", "hobbies"),
        ("Daughter Lily starts primary school in September", "family"),
        ("Allergic to peanuts; carries an epinephrine pen", "health"),
        ("Prefers answers in Chinese with English technical terms", "preferences"),
        (f"A pasted snippet: {XSS_IMG}", "notes"),
    ]:
        store.add(description, theme, "seed")
    store.hit(next(iter(store.list_items())))
    SCREENSHOTS.mkdir(exist_ok=True)
    for name, viewport, lang in [
        ("editor-en", (1280, 800), "en"),
        ("editor-zh-narrow", (390, 844), "zh"),
    ]:
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        shot = context.new_page()
        shot.goto(f"{base_url}/memories/?user={user}&lang={lang}")
        sync_api.expect(shot.locator(".card").first).to_be_visible()
        sync_api.expect(shot.locator("#live.on")).to_be_visible()
        if lang == "en":  # a write from elsewhere, so the live panel and the history have content
            hiking = next(
                i for i, it in store.list_items().items() if "Western Hills" in it.description
            )
            store.update(
                hiking,
                "memory agent: the user now hikes on Saturdays only",
                new_description="Likes hiking on Saturdays in the Western Hills",
            )
            sync_api.expect(shot.locator("#activity li")).to_have_count(1)
        shot.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        if lang == "en":
            card(shot, "Saturdays").locator("button.history").click()
            sync_api.expect(shot.locator("dialog .timeline li")).to_have_count(2)
            shot.screenshot(path=str(SCREENSHOTS / "editor-history.png"))
        if lang == "zh":
            sync_api.expect(shot.locator("#add")).to_have_text("新增")
            width = shot.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport[0], f"the page scrolls sideways on a phone ({width}px)"
        context.close()
    assert (SCREENSHOTS / "editor-en.png").stat().st_size > 10_000


def test_search_theme_filter_merge_and_language(page, data_dir: Path, user: str) -> None:
    store = open_store(data_dir, user)
    keep = store.add("Has a dog", "pets", "seed")
    other = store.add("The dog is called Bao", "pets", "seed")
    store.add("喜欢喝普洱茶", "food", "seed")
    page.reload()
    page.locator("#search").fill("普洱")
    sync_api.expect(page.locator(".card").first).to_contain_text("喜欢喝普洱茶")
    page.locator("#search").fill("")
    sync_api.expect(page.locator(".card")).to_have_count(3)
    page.locator("#theme-filter").select_option("pets")
    sync_api.expect(page.locator(".group")).to_have_count(1)
    sync_api.expect(page.locator(".group h2")).to_contain_text("pets")

    card(page, "Has a dog").locator("button.merge").click()
    form = page.locator("dialog form")
    form.locator("select[name=other_id]").select_option(other)
    form.locator("textarea[name=description]").fill("Has a dog called Bao")
    form.locator("input[name=reason]").fill("same dog")
    form.locator("button[type=submit]").click()
    sync_api.expect(card(page, "Has a dog called Bao")).to_be_visible()
    sync_api.expect(page.locator(".card")).to_have_count(1)
    assert store.get(keep).history[-1]["reason"] == "same dog"
    assert store.get(other, include_deleted=True).deleted

    page.locator("#lang").click()
    sync_api.expect(page.locator("#add")).to_have_text("新增")
    sync_api.expect(card(page, "Bao").locator("button.edit")).to_have_text("编辑")
    page.locator("#lang").click()
    sync_api.expect(page.locator("#add")).to_have_text("Add")


def test_self_check_status_and_import_from_a_file(
    page, base_url: str, data_dir: Path, user: str, tmp_path: Path
) -> None:
    sync_api.expect(page.locator("#status")).to_have_text("OK")
    export = {
        "format": "gulfstream.memories",
        "version": 1,
        "items": {
            "imp1": {
                "description": "Imported: speaks Cantonese",
                "theme": "language",
                "history": [
                    {"time": "2025-01-01T00:00:00+00:00", "action": "create", "reason": "old app"}
                ],
            }
        },
    }
    upload = tmp_path / "memories.json"
    upload.write_text(json.dumps(export), encoding="utf-8")
    page.locator("#import-file").set_input_files(str(upload))
    sync_api.expect(card(page, "speaks Cantonese")).to_be_visible()
    sync_api.expect(page.locator("#toast")).to_contain_text("1 added")
    assert [e["action"] for e in open_store(data_dir, user).get("imp1").history] == [
        "create",
        "import",
    ]

    broken = f"broken-{uuid.uuid4().hex[:6]}"
    (data_dir / f"{broken}.yaml").write_text("items: [unclosed\n", encoding="utf-8")
    page.goto(f"{base_url}/memories/?user={broken}&lang=en")
    sync_api.expect(page.locator("#status")).to_have_text("FAIL")
    page.locator("#status").click()
    sync_api.expect(page.locator("dialog .panel")).to_contain_text("not valid YAML")
