"""The editor's read-only conversation search over real HTTP (a real `python -m webapp`)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest

from memory.archive import ArchivedMessage
from memory.archive.sqlite_archive import SqliteArchive

pytestmark = pytest.mark.slow


def archived(user: str, data_dir: Path, *texts: str) -> None:
    archive = SqliteArchive(data_dir / "conversations", user)
    now = time.time()
    archive.add([
        ArchivedMessage(user, "t1", f"c{i}", f"m{i}", "user" if i % 2 == 0 else "assistant", text,
                        now + i)
        for i, text in enumerate(texts)
    ])  # fmt: skip
    archive.close()


def search(base_url: str, user: str, **params: str) -> httpx.Response:
    return httpx.get(f"{base_url}/memories/api/conversations", params=params,
                     headers={"X-Gulfstream-User": user}, timeout=10)  # fmt: skip


def test_a_user_finds_their_conversations_and_nobody_elses(base_url: str, data_dir: Path) -> None:
    alice, mallory = f"alice-{uuid.uuid4().hex[:6]}", f"mallory-{uuid.uuid4().hex[:6]}"
    archived(alice, data_dir, "我下周要去上海出差", "祝你一路顺风", "<script>alert(1)</script> hi")
    found = search(base_url, alice, q="上海")
    assert found.status_code == 200
    (hit,) = found.json()["hits"]
    assert hit["thread_id"] == "t1"
    assert [m["match"] for m in hit["messages"]] == [True, False, False]
    assert hit["messages"][2]["content"] == "<script>alert(1)</script> hi"  # text, shown as text
    nothing = search(base_url, mallory, q="上海")
    assert nothing.status_code == 200 and nothing.json()["hits"] == []
    assert not (data_dir / "conversations" / f"{mallory}.sqlite").exists()  # a read made nothing


def test_bad_input_and_other_sites_are_refused(base_url: str, data_dir: Path) -> None:
    bad = search(base_url, "alice", q="x", since="last Tuesday")
    assert bad.status_code == 400 and bad.json()["field"] == "since"
    assert search(base_url, "alice", q="x" * 500).status_code == 400
    foreign = httpx.get(f"{base_url}/memories/api/conversations", params={"q": "x"},
                        headers={"Sec-Fetch-Site": "cross-site"}, timeout=10)  # fmt: skip
    assert foreign.status_code == 403


def test_the_page_is_served_with_the_editors_policy(base_url: str) -> None:
    page = httpx.get(f"{base_url}/memories/conversations/", timeout=10)
    assert page.status_code == 200 and "conversations.js" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    script = httpx.get(f"{base_url}/memories/static/conversations.js", timeout=10)
    assert script.status_code == 200 and "innerHTML" not in script.text


def test_a_memory_deleted_in_the_editor_leaves_the_search_until_restored(
    base_url: str, data_dir: Path
) -> None:
    user = f"ada-{uuid.uuid4().hex[:6]}"
    headers = {"X-Gulfstream-User": user, "X-Gulfstream-CSRF": "1"}
    api = f"{base_url}/memories/api"
    archived(user, data_dir, "I live in Hangzhou, near the lake", "Noted", "I like green tea")
    added = httpx.post(
        f"{api}/memories",
        headers=headers,
        timeout=10,
        json={"description": "User lives in Hangzhou", "theme": "identity"},
    )
    assert added.status_code == 201
    memory_id = added.json()["id"]
    assert len(search(base_url, user, q="Hangzhou").json()["hits"]) == 1
    deleted = httpx.request("DELETE", f"{api}/memories/{memory_id}", headers=headers, json={},
                            timeout=10)  # fmt: skip
    assert deleted.status_code == 200
    hidden = search(base_url, user, q="Hangzhou").json()
    assert hidden["hits"] == [] and any("1 matching message(s) hidden" in n
                                        for n in hidden["notes"])  # fmt: skip
    assert len(search(base_url, user, q="green tea").json()["hits"]) == 1
    restored = httpx.post(f"{api}/memories/{memory_id}/restore", headers=headers, json={},
                          timeout=10)  # fmt: skip
    assert restored.status_code == 200
    back = search(base_url, user, q="Hangzhou").json()
    assert [m["content"] for m in back["hits"][0]["messages"] if m["match"]] == [
        "I live in Hangzhou, near the lake"
    ]
    assert back["notes"] == []
