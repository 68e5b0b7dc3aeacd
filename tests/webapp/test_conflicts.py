"""Editor writes over HTTP are checked against the version the page showed; branch lineage shows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory.store.branch import Provenance
from memory.store.document import Change
from tests.webapp.test_api import Editor

pytestmark = pytest.mark.slow


@pytest.fixture
def two_tabs(base_url: str, data_dir: Path) -> Iterator[tuple[Editor, Editor]]:
    """Two editor tabs of one user: two HTTP clients, each with its own view of the store."""
    user = f"u-{uuid.uuid4().hex[:8]}"
    first, second = Editor(base_url, user, data_dir), Editor(base_url, user, data_dir)
    yield first, second
    first.http.close()
    second.http.close()


def shown_time(editor: Editor, memory_id: str) -> str:
    """The latest_update_time a page listing shows for the card."""
    cards = [c for g in editor.get("memories").json()["groups"] for c in g["cards"]]
    return str(next(c["latest_update_time"] for c in cards if c["id"] == memory_id))


def assert_conflict(response: httpx.Response, field: str) -> None:
    assert response.status_code == 409, response.text
    assert response.json()["field"] == field
    assert "changed since the page showed it" in response.json()["error"]


def test_the_second_of_two_editors_saving_one_memory_gets_409_and_overwrites_nothing(
    two_tabs: tuple[Editor, Editor],
) -> None:
    first, second = two_tabs
    memory_id = first.store.add("Lives in Chengdu", "home", "seed")
    seen_by_first, seen_by_second = shown_time(first, memory_id), shown_time(second, memory_id)

    saved = second.send(
        "PATCH",
        f"memories/{memory_id}",
        {
            "description": "Lives in Chongqing",
            "reason": "moved",
            "expected_update_time": seen_by_second,
        },
    )
    assert saved.status_code == 200 and saved.json()["description"] == "Lives in Chongqing"
    before = first.file_bytes()
    stale = first.send(
        "PATCH",
        f"memories/{memory_id}",
        {
            "description": "Lives in Beijing",
            "reason": "typo",
            "expected_update_time": seen_by_first,
        },
    )
    assert_conflict(stale, "expected_update_time")
    assert first.file_bytes() == before
    assert first.store.get(memory_id).description == "Lives in Chongqing"

    # Reloaded, the first tab's save goes through.
    retried = first.send(
        "PATCH",
        f"memories/{memory_id}",
        {"description": "Lives in Beijing", "reason": "moved again",
         "expected_update_time": shown_time(first, memory_id)},
    )  # fmt: skip
    assert retried.status_code == 200 and retried.json()["description"] == "Lives in Beijing"


def test_delete_and_merge_refuse_a_memory_another_process_changed(
    two_tabs: tuple[Editor, Editor],
) -> None:
    editor, _ = two_tabs
    keep = editor.store.add("Has a dog", "pets", "seed")
    other = editor.store.add("The dog is called Bao", "pets", "seed")
    keep_seen, other_seen = shown_time(editor, keep), shown_time(editor, other)
    # The memory writer (another process: this one, on the same YAML file) changes both meanwhile.
    editor.store.update(keep, "user said so", new_description="Has two dogs")
    editor.store.update(other, "user said so", new_description="The dogs are Bao and Mi")
    before = editor.file_bytes()

    deleted = editor.send("DELETE", f"memories/{keep}", {"expected_update_time": keep_seen})
    assert_conflict(deleted, "expected_update_time")
    merge = {"id": keep, "other_id": other, "description": "Has a dog called Bao", "theme": "pets",
             "reason": "same dog", "expected_update_time": shown_time(editor, keep),
             "expected_other_update_time": other_seen}  # fmt: skip
    assert_conflict(editor.send("POST", "merge", merge), "expected_other_update_time")
    assert editor.file_bytes() == before
    assert (
        editor.get("memories").json()["total"] == 2 and editor.get("deleted").json()["items"] == []
    )

    merge["expected_other_update_time"] = shown_time(editor, other)
    assert editor.send("POST", "merge", merge).status_code == 200
    current = shown_time(editor, keep)
    assert editor.send("DELETE", f"memories/{keep}", {"expected_update_time": current}).is_success


def test_an_expectation_that_is_not_a_string_is_refused_by_name(
    two_tabs: tuple[Editor, Editor],
) -> None:
    editor, _ = two_tabs
    memory_id = editor.store.add("Plays the cello", "music", "seed")
    response = editor.send(
        "PATCH",
        f"memories/{memory_id}",
        {"theme": "hobby", "reason": "r", "expected_update_time": 5},
    )
    assert response.status_code == 400 and response.json()["field"] == "expected_update_time"
    assert editor.store.get(memory_id).theme == "music"


def test_cards_show_scope_origin_and_what_a_branch_version_replaces(
    two_tabs: tuple[Editor, Editor],
) -> None:
    editor, _ = two_tabs
    trunk = Provenance(thread_id="thread-kyoto", checkpoint_id="cp-1")
    plan = editor.store.apply(
        [Change(op="add", description="Planning a trip to Kyoto", theme="task", scope="branch")],
        "turn-1",
        trunk,
    ).results[0]
    fork = Provenance(thread_id="thread-kyoto", checkpoint_id="cp-2b")
    version = editor.store.apply(
        [Change(op="add", description="Planning a trip to Osaka instead", theme="task",
                scope="branch", supersedes=plan)],
        "turn-2",
        fork,
    ).results[0]  # fmt: skip
    shared = editor.store.add("Is vegetarian", "food", "seed")

    cards = {c["id"]: c for g in editor.get("memories").json()["groups"] for c in g["cards"]}
    assert cards[plan]["scope"] == "branch" and cards[plan]["superseded_by"] == [version]
    assert cards[plan]["origin"] == {
        "thread_id": "thread-kyoto", "checkpoint_id": "cp-1", "turn_id": "turn-1"
    }  # fmt: skip
    assert cards[version]["supersedes"] == plan and cards[version]["superseded_by"] == []
    assert cards[version]["origin"]["checkpoint_id"] == "cp-2b"
    assert cards[shared]["scope"] == "user" and cards[shared]["supersedes"] == ""
    assert editor.get(f"memories/{plan}").json()["superseded_by"] == [version]
