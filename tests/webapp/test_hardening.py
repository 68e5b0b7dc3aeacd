"""The standalone editor (`python -m webapp`) against what a hostile web page or client sends:
cross-site reads, reads that would create users, oversized bodies, bad text, and a search that
must match what it says. Each runs on the YAML and the SQLite backend."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory.integration.settings import use_settings
from memory.registry import registry
from memory.store.document import Change
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager
from tests.webapp.editor_process import read_events, run_editor_process
from tests.webapp.probes import (
    BAD_DESCRIPTIONS,
    BAD_REASONS,
    BAD_THEMES,
    JSON_WRITE,
    MB,
    peak_rss_bytes,
    post_chunked,
    post_declared,
    raw_json,
    rss_bytes,
)
from webapp.access import read_memory
from webapp.guard import Caller

pytestmark = pytest.mark.slow
READ_PATHS = ["memories", "memories/{id}", "deleted", "status", "export", "whoami", "events"]


@dataclass
class Editor:
    base: str
    process: subprocess.Popen[bytes]
    folder: Path
    spec: str

    @property
    def api(self) -> str:
        return f"{self.base}/memories/api"

    def store(self, user: str) -> BaseMemoryManager:
        return open_memory_manager(self.spec, user)

    def state(self) -> dict[str, Any]:
        """Every file under the store's folder and, for SQLite, its row counts per table."""
        files = sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*"))
        found: dict[str, Any] = {"files": [f for f in files if not f.endswith(("-wal", "-shm"))]}
        database = Path(self.spec.removeprefix("sqlite:"))
        if self.spec.startswith("sqlite:") and database.exists():
            conn = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
            try:
                for table in ("memory_meta", "memory_items", "memory_history"):
                    found[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            finally:
                conn.close()
        return found


@pytest.fixture(scope="module", params=["yaml", "sqlite"])
def editor(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Editor]:
    folder = tmp_path_factory.mktemp(f"hardening-{request.param}") / "memory"
    folder.mkdir()
    spec = f"yaml:{folder}" if request.param == "yaml" else f"sqlite:{folder / 'memories.db'}"
    with run_editor_process(folder, GULFSTREAM_MEMORY_BACKEND=spec) as (base, process):
        yield Editor(base, process, folder, spec)


@pytest.fixture
def user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def write(
    editor: Editor, method: str, path: str, user: str, body: Any, **headers: str
) -> httpx.Response:
    content = body if isinstance(body, bytes) else raw_json(body)
    return httpx.request(
        method,
        f"{editor.api}/{path}",
        content=content,
        headers={**JSON_WRITE, "X-Gulfstream-User": user, **headers},
        timeout=30,
    )


def get(editor: Editor, path: str, user: str, **headers: str) -> httpx.Response:
    """A GET; the event stream is opened and closed at once (its status is what counts)."""
    url = f"{editor.api}/{path}"
    request_headers = {"X-Gulfstream-User": user, **headers}
    if path == "events":
        with httpx.stream("GET", url, headers=request_headers, timeout=10) as stream:
            return stream
    return httpx.get(url, headers=request_headers, timeout=10)


# ── 7: another site's page cannot read ───────────────────────────────────


def test_a_page_on_another_site_cannot_read_anything(editor: Editor, user: str) -> None:
    memory_id = editor.store(user).add("Keeps a diary in Lisbon", "habits", "seed")
    cross_site = [
        ({"Origin": "https://evil.example"}, "origin"),
        ({"Origin": "null"}, "origin"),
        ({"Sec-Fetch-Site": "cross-site"}, "sec-fetch-site"),  # <img src=...>: no Origin at all
        ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors"}, "sec-fetch-site"),
    ]
    for path in READ_PATHS:
        path = path.format(id=memory_id)
        for headers, field in cross_site:
            refused = get(editor, path, user, **headers)
            assert refused.status_code == 403, (path, headers)
            if path != "events":
                assert refused.json()["field"] == field, (path, headers)
            assert not any(h.lower().startswith("access-control-") for h in refused.headers)
        # The editor's own page (same origin) and a typed URL still read.
        own = get(editor, path, user, Origin=editor.base, **{"Sec-Fetch-Site": "same-origin"})
        assert own.status_code == 200, (path, own)
        assert get(editor, path, user, **{"Sec-Fetch-Site": "none"}).status_code == 200
    assert "Lisbon" in get(editor, "export", user).text  # a client that is no browser


# ── 8: reads of users that have nothing create nothing ───────────────────


def test_reads_for_unknown_users_create_no_state_and_no_memory(editor: Editor, user: str) -> None:
    editor.store(user).add("Plays chess on Sundays", "hobbies", "seed")  # the files exist
    with httpx.Client(base_url=editor.api, timeout=10) as client:
        for i in range(50):  # warm up: the first requests allocate the server's own caches
            client.get("memories", headers={"X-Gulfstream-User": f"warm-{i}"})
        before_state, before_rss = editor.state(), rss_bytes(editor.process.pid)
        started = time.monotonic()
        for i in range(2000):
            stranger = {"X-Gulfstream-User": f"stranger-{i}"}
            path = ["memories", "status", "export", "deleted", "memories/abc123", "whoami"][i % 6]
            answer = client.get(path, headers=stranger)
            assert answer.status_code == (404 if path == "memories/abc123" else 200), answer.text
            if path == "memories":
                assert answer.json()["total"] == 0 and answer.json()["groups"] == []
            if path == "status":
                assert (answer.json()["status"], answer.json()["item_count"]) == ("OK", 0)
        seconds = time.monotonic() - started
        after_rss = rss_bytes(editor.process.pid)
    print(
        f"\n[{editor.spec.split(':')[0]}] 2,000 unknown-user GETs in {seconds:.1f} s: RSS "
        f"{before_rss / MB:.0f} MB -> {after_rss / MB:.0f} MB"
    )
    assert editor.state() == before_state  # no file, lock file or row
    assert after_rss - before_rss < 20 * MB


def test_the_first_write_of_a_new_user_reaches_a_stream_opened_before_it(
    editor: Editor, user: str
) -> None:
    before = editor.state()
    with httpx.stream(
        "GET", f"{editor.api}/events", headers={"X-Gulfstream-User": user}, timeout=30
    ) as stream:
        lines = stream.iter_lines()
        hello = next(read_events(lines, "hello"))
        assert hello["revision"] == "0" and editor.state() == before
        added = write(
            editor, "POST", "memories", user, {"description": "Moved to Oslo", "theme": "home"}
        )
        assert added.status_code == 201
        change = next(read_events(lines, "change"))
    assert [c["description"] for c in change["changes"]] == ["Moved to Oslo"]
    assert change["cards"][added.json()["id"]]["description"] == "Moved to Oslo"
    assert change["total"] == 1 and change["themes"] == {"home": 1}


def test_the_editor_keeps_a_bounded_number_of_memories_open(tmp_path: Path) -> None:
    """In process: reading 300 users who have memories opens at most `registry.max_open`."""
    registry.clear()
    loop = asyncio.new_event_loop()
    try:
        with use_settings(memory_backend=f"yaml:{tmp_path}"):
            for i in range(registry.max_open + 44):
                open_memory_manager(f"yaml:{tmp_path}", f"known-{i}").add("fact", "t", "seed")
            for i in range(registry.max_open + 44):
                memory = read_memory(Caller(f"known-{i}", "local"), loop)
                assert memory.manager.list_items()
            assert len(registry) == registry.max_open
            read_memory(Caller("nobody", "local"), loop)
            assert registry.peek(f"yaml:{tmp_path}", "nobody") is None
    finally:
        loop.close()
        registry.clear()


# ── 9: the body limit holds while the body streams ───────────────────────


def test_an_oversized_body_is_refused_before_it_is_buffered(editor: Editor, user: str) -> None:
    url = f"{editor.api}/import"
    headers = {**JSON_WRITE, "X-Gulfstream-User": user}
    before = editor.state()
    declared = post_declared(url, headers, 1024 * MB)
    assert declared.status == 413 and json.loads(declared.body)["field"] == "body"
    assert declared.seconds < 5
    peak_before = peak_rss_bytes(editor.process.pid)
    answer = post_chunked(url, headers, total=1024 * MB)
    peak_after = peak_rss_bytes(editor.process.pid)
    print(
        f"\n[{editor.spec.split(':')[0]}] chunked 1 GB POST: {answer.status} after "
        f"{answer.sent / MB:.0f} MB sent in {answer.seconds:.1f} s; peak RSS "
        f"{peak_before / MB:.0f} MB -> {peak_after / MB:.0f} MB"
    )
    assert answer.status == 413 and json.loads(answer.body)["field"] == "body"
    assert peak_after - peak_before < 30 * MB
    assert answer.sent < 256 * MB  # the server answered long before the end
    assert editor.state() == before  # nothing was written, not even a new user's lock file
    # A body under the limit still goes through.
    ok = write(editor, "POST", "memories", user, {"description": "x" * 1999, "theme": "long"})
    assert ok.status_code == 201


# ── 10: text the editor refuses, and text it normalises ──────────────────


def test_bad_text_is_refused_with_a_400_naming_the_field(editor: Editor, user: str) -> None:
    store = editor.store(user)
    keep, other = (
        store.add("Likes green tea", "food", "seed"),
        store.add("Likes tea", "food", "seed"),
    )
    revision = store.revision
    attempts: list[tuple[str, str, dict[str, Any], str]] = []
    for bad in BAD_DESCRIPTIONS.values():
        attempts += [
            ("POST", "memories", {"description": bad, "theme": "food"}, "description"),
            ("PATCH", f"memories/{keep}", {"description": bad, "reason": "fix"}, "description"),
            ("POST", "merge", {"id": keep, "other_id": other, "description": bad,
                               "theme": "food", "reason": "same"}, "description"),
            ("POST", "import", {"items": {"ab12": {"description": bad, "theme": "food"}}},
             "items.ab12.description"),
        ]  # fmt: skip
    for bad in BAD_THEMES.values():
        attempts += [
            ("POST", "memories", {"description": "Likes rice", "theme": bad}, "theme"),
            ("PATCH", f"memories/{keep}", {"theme": bad, "reason": "fix"}, "theme"),
            ("POST", "merge", {"id": keep, "other_id": other, "description": "tea",
                               "theme": bad, "reason": "same"}, "theme"),
            ("POST", "import", {"items": {"ab12": {"description": "rice", "theme": bad}}},
             "items.ab12.theme"),
        ]  # fmt: skip
    for bad in BAD_REASONS.values():
        attempts += [
            ("POST", "memories", {"description": "Likes rice", "theme": "food", "reason": bad},
             "reason"),
            ("PATCH", f"memories/{keep}", {"description": "Likes rice", "reason": bad}, "reason"),
            ("DELETE", f"memories/{keep}", {"reason": bad}, "reason"),
            ("POST", "import", {"items": {"ab12": {"description": "rice", "theme": "food",
                                                   "history": [{"reason": bad}]}}},
             "items.ab12.history"),
        ]  # fmt: skip
    for method, path, body, field in attempts:
        answer = write(editor, method, path, user, body)
        assert answer.status_code == 400, (method, path, body, answer.text)
        assert answer.json()["field"] == field, (method, path, body, answer.json())
    nested = b'{"description": ' + b"[" * 100_000 + b"]" * 100_000 + b', "theme": "t"}'
    for body in (nested, b'{"items": ' + b'{"a": ' * 40 + b"1" + b"}" * 41, b'{"description": ',
                 b'{"description": "\xff\xfe"}', b"[" * 1_000_000):  # fmt: skip
        answer = write(editor, "POST", "import", user, body)
        assert answer.status_code == 400 and answer.json()["field"] == "body", answer.text
    bad_id = write(editor, "PATCH", "memories/ab%00cd", user, {"description": "x", "reason": "r"})
    assert bad_id.status_code == 404
    assert store.revision == revision  # nothing was written


def test_text_is_stored_in_nfc_and_line_breaks_are_kept(editor: Editor, user: str) -> None:
    added = write(editor, "POST", "memories", user, {
        "description": "Cafe\u0301 owner\r\nin Porto 👩\u200d🍳", "theme": "cafe\u0301 ❤\ufe0f",
    })  # fmt: skip
    assert added.status_code == 201, added.text
    stored = editor.store(user).get(added.json()["id"])
    assert stored.description == "Caf\u00e9 owner\nin Porto 👩\u200d🍳"
    assert stored.theme == "caf\u00e9 ❤\ufe0f"
    # The same theme typed decomposed is the same theme, not a look-alike.
    again = write(
        editor, "POST", "memories", user, {"description": "Bakes", "theme": "cafe\u0301 ❤\ufe0f"}
    )
    assert again.status_code == 201
    assert get(editor, "memories", user).json()["themes"] == {"caf\u00e9 ❤\ufe0f": 2}


def test_the_memory_writer_refuses_the_same_text_and_can_correct_itself(tmp_path: Path) -> None:
    """The rule lives in memory/store/item.py: the writer's tools answer the model with the
    reason."""
    from memory.writer.tools import MemoryToolkit
    from memory.writer.turn import Turn

    manager = open_memory_manager(f"yaml:{tmp_path}", "writer-user")
    turn = Turn.of("writer-user", [{"role": "user", "content": "I love rice"}])
    toolkit = MemoryToolkit.for_turn(manager, turn)
    answer = toolkit.create_memory(content="Loves rice", section="food\u200b")
    assert answer.startswith("Error") and "U+200B" in answer and toolkit.changes == []
    answer = toolkit.create_memory(content="Loves\x00 rice", section="food")
    assert answer.startswith("Error") and "U+0000" in answer and toolkit.changes == []
    assert "Created" in toolkit.create_memory(content="Loves rice", section="food")


# ── 11: the search box shows what matches ─────────────────────────────────


def test_search_returns_only_what_matches(editor: Editor, user: str) -> None:
    store = editor.store(user)
    facts = {
        "Plays the 🎹 every evening": "music",
        "Moved to Lisbon recently": "home",
        "Drinks jasmine tea": "food",
        "Works at a bakery": "work",
        "Has a cat named Miso": "family",
        "Learning Portuguese": "study",
    }
    store.apply([Change("add", description=d, theme=t) for d, t in facts.items()], "seed")

    def found(query: str) -> list[str]:
        headers = {"X-Gulfstream-User": user}
        page = httpx.get(f"{editor.api}/memories", params={"q": query}, headers=headers).json()
        return [card["description"] for group in page["groups"] for card in group["cards"]]

    assert found("🎹") == ["Plays the 🎹 every evening"]
    assert found("recently") == ["Moved to Lisbon recently"]
    assert found("jasmine") == ["Drinks jasmine tea"]
    for broad in ("what's new", "everything", "memories", "who am I", "lately"):
        assert found(broad) == [], broad


# ── 12 (server side): pages and the cards a change carries ────────────────


def test_the_list_comes_in_pages_that_neither_repeat_nor_skip(editor: Editor, user: str) -> None:
    store = editor.store(user)
    store.apply(
        [Change("add", description=f"fact {i}", theme=f"t{i % 7}") for i in range(450)], "seed"
    )
    seen: list[str] = []
    cursor, pages = "", 0
    while True:
        query = {"limit": "200", **({"after": cursor} if cursor else {})}
        page = httpx.get(f"{editor.api}/memories", params=query,
                         headers={"X-Gulfstream-User": user}).json()  # fmt: skip
        pages += 1
        seen += [c["id"] for g in page["groups"] for c in g["cards"]]
        assert page["total"] == 450 and page["shown"] <= 200
        if pages == 1:  # a memory changes between two pages: it moves to the top, seen once
            store.update(seen[-1], "edited meanwhile", new_description="fact edited")
        if not page["next_cursor"]:
            break
        cursor = page["next_cursor"]
    assert pages == 3 and len(seen) == len(set(seen)) == 450
    too_big = get(editor, "memories?limit=5000", user)
    assert too_big.status_code == 400 and too_big.json()["field"] == "limit"
    bad_cursor = get(editor, "memories?after=nonsense", user)
    assert bad_cursor.status_code == 400 and bad_cursor.json()["field"] == "after"
