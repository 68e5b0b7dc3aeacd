"""The editor's JSON API over real HTTP against a real `python -m webapp` process and YAML files."""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from tests.fakes import ScriptedModel
from tests.webapp.editor_process import read_events, run_editor

pytestmark = pytest.mark.slow
JSON_WRITE = {"Content-Type": "application/json", "X-Gulfstream-CSRF": "1"}
_call_ids = itertools.count()


def call(name: str, **args: Any) -> dict[str, Any]:
    """One tool call of the scripted memory agent."""
    return {"name": name, "args": args, "id": f"call-{next(_call_ids)}", "type": "tool_call"}


def step(*calls: dict[str, Any]) -> AIMessage:
    """One turn of the scripted memory agent: these tool calls."""
    return AIMessage("", tool_calls=list(calls))


class Editor:
    """An HTTP client acting for one user (local mode: the X-Gulfstream-User header)."""

    def __init__(self, base_url: str, user: str, data_dir: Path) -> None:
        self.user = user
        self.store = YamlMemoryManager(data_dir, user)
        self.http = httpx.Client(base_url=f"{base_url}/memories/api/", timeout=10)
        self.http.headers["X-Gulfstream-User"] = user

    def get(self, path: str, **params: str) -> httpx.Response:
        return self.http.get(path, params=params)

    def send(self, method: str, path: str, body: Any = None, **headers: str) -> httpx.Response:
        content = body if isinstance(body, str | bytes) else json.dumps(body or {})
        return self.http.request(method, path, content=content, headers={**JSON_WRITE, **headers})

    def file_bytes(self) -> bytes:
        return self.store.path.read_bytes() if self.store.path.exists() else b""


@pytest.fixture
def editor(base_url: str, data_dir: Path) -> Iterator[Editor]:
    client = Editor(base_url, f"u-{uuid.uuid4().hex[:8]}", data_dir)
    yield client
    client.http.close()


def test_add_list_get_and_edit_with_reason(editor: Editor) -> None:
    created = editor.send("POST", "memories", {"description": "Lives in Chengdu", "theme": "home"})
    assert created.status_code == 201
    memory_id = created.json()["id"]
    editor.send("POST", "memories", {"description": "Likes spicy food", "theme": "food"})
    editor.send("POST", "memories", {"description": "Works from home", "theme": "home"})
    listing = editor.get("memories").json()
    assert listing["total"] == 3 and listing["themes"] == {"home": 2, "food": 1}
    home = next(g for g in listing["groups"] if g["theme"] == "home")
    assert home["count"] == 2 and home["cards"][0]["description"] == "Works from home"
    assert {"hit", "latest_update_time"} <= set(home["cards"][0])

    edited = editor.send(
        "PATCH",
        f"memories/{memory_id}",
        {"description": "Lives in Chongqing", "theme": "城市", "reason": "moved in March"},
    )
    assert edited.status_code == 200
    assert editor.store.get(memory_id).description == "Lives in Chongqing"
    history = editor.get(f"memories/{memory_id}").json()["history"]
    assert history[0]["reason"] == "moved in March"
    assert history[0]["previous_description"] == "Lives in Chengdu"
    assert history[0]["theme"] == "城市"


def rejected_cases(memory_id: str) -> list[tuple[str, str, Any, int, str]]:
    """(method, path, body, status, field) for requests that must change nothing."""
    return [
        ("POST", "memories", {"description": "", "theme": "t"}, 400, "description"),
        ("POST", "memories", {"description": "x" * 2001, "theme": "t"}, 400, "description"),
        ("POST", "memories", {"description": "d", "theme": "two\nlines"}, 400, "theme"),
        ("POST", "memories", {"description": "d", "theme": "t", "colour": "red"}, 400, "colour"),
        ("POST", "memories", {"description": 5, "theme": "t"}, 400, "description"),
        ("POST", "memories", "[1, 2]", 400, "body"),
        ("POST", "memories", "{not json", 400, "body"),
        ("PATCH", f"memories/{memory_id}", {"description": "new text"}, 400, "reason"),
        ("PATCH", f"memories/{memory_id}", {"reason": "why"}, 400, "description"),
        ("PATCH", f"memories/{memory_id}", {"theme": "t" * 40, "reason": "r"}, 400, "theme"),
        ("PATCH", f"memories/{memory_id}", {"description": "x", "reason": 7}, 400, "reason"),
        ("PATCH", "memories/nope", {"description": "x", "reason": "r"}, 404, "id"),
        ("DELETE", "memories/nope", {}, 404, "id"),
        ("POST", f"memories/{memory_id}/restore", {}, 400, "id"),
        (
            "POST",
            "merge",
            {
                "id": memory_id,
                "other_id": memory_id,
                "description": "d",
                "theme": "t",
                "reason": "r",
            },
            400,
            "other_id",
        ),
        (
            "POST",
            "merge",
            {"id": memory_id, "other_id": "nope", "description": "d", "theme": "t", "reason": "r"},
            404,
            "id",
        ),
        (
            "POST",
            "merge",
            {"id": memory_id, "other_id": "x", "description": "d", "theme": "t"},
            400,
            "reason",
        ),
        (
            "POST",
            "import",
            {"items": {"a1": {"description": "", "theme": "t"}}},
            400,
            "items.a1.description",
        ),
        (
            "POST",
            "import",
            {
                "items": {
                    "ok1": {"description": "fine", "theme": "t"},
                    "bad id!": {"description": "d", "theme": "t"},
                }
            },
            400,
            "items.bad id!",
        ),
        (
            "POST",
            "import",
            {"items": {"h1": {"description": "d", "theme": "t", "hit": -1}}},
            400,
            "items.h1.hit",
        ),
        ("POST", "import", {"items": []}, 400, "items"),
        ("POST", "self-check", {"force": True}, 400, "force"),
    ]


def test_rejected_requests_name_the_field_and_write_nothing(editor: Editor) -> None:
    memory_id = editor.store.add("Keeps bees", "hobbies", "seed")
    before = editor.file_bytes()
    for method, path, body, status, field in rejected_cases(memory_id):
        response = editor.send(method, path, body)
        assert response.status_code == status, (method, path, body, response.text)
        assert response.json()["field"] == field, (method, path, response.json())
        assert response.json()["error"]
        assert editor.file_bytes() == before, f"{method} {path} wrote to the store"


def test_hostile_user_ids_are_refused(base_url: str) -> None:
    for hostile in ["../etc/passwd", "a/b", "", "x y", "-rf", "x" * 200, "a..b"]:
        response = httpx.get(
            f"{base_url}/memories/api/memories", headers={"X-Gulfstream-User": hostile}
        )
        expected_default = hostile == ""  # an empty header falls back to the default user
        assert response.status_code == (200 if expected_default else 400), hostile
        if not expected_default:
            assert response.json()["field"] == "user"
    response = httpx.get(f"{base_url}/memories/api/memories", params={"user": "../../x"})
    assert response.status_code == 400 and response.json()["field"] == "user"


def test_cross_site_form_posts_are_rejected(editor: Editor) -> None:
    url = "memories"
    form_posts = [
        {
            "content": "description=x&theme=t",
            "headers": {"Content-Type": "application/x-www-form-urlencoded"},
        },
        {"content": "description=x", "headers": {"Content-Type": "text/plain"}},
        {"files": {"description": ("d.txt", b"x")}},
    ]
    for request in form_posts:
        response = editor.http.post(url, **request)  # type: ignore[arg-type]
        assert response.status_code == 415 and response.json()["field"] == "content-type"
    body = json.dumps({"description": "x", "theme": "t"})
    no_header = editor.http.post(url, content=body, headers={"Content-Type": "application/json"})
    assert no_header.status_code == 403 and no_header.json()["field"] == "x-gulfstream-csrf"
    foreign = editor.send(
        "POST", url, {"description": "x", "theme": "t"}, Origin="https://evil.example"
    )
    assert foreign.status_code == 403 and foreign.json()["field"] == "origin"
    delete = editor.http.request("DELETE", "memories/anything")
    assert delete.status_code == 415
    assert editor.file_bytes() == b""
    host = editor.http.base_url.netloc.decode()
    same_site = editor.send(
        "POST", url, {"description": "x", "theme": "t"}, Origin=f"http://{host}"
    )
    assert same_site.status_code == 201


def test_two_users_are_isolated(base_url: str, data_dir: Path) -> None:
    alice = Editor(base_url, f"alice-{uuid.uuid4().hex[:6]}", data_dir)
    bob = Editor(base_url, f"bob-{uuid.uuid4().hex[:6]}", data_dir)
    secret = alice.send("POST", "memories", {"description": "Alice's secret", "theme": "private"})
    secret_id = secret.json()["id"]
    assert bob.get("memories").json()["total"] == 0
    assert bob.get(f"memories/{secret_id}").status_code == 404
    assert (
        bob.send("PATCH", f"memories/{secret_id}", {"description": "x", "reason": "r"}).status_code
        == 404
    )
    assert bob.send("DELETE", f"memories/{secret_id}").status_code == 404
    assert "Alice's secret" not in bob.get("export").text
    assert bob.get("memories", q="secret").json()["shown"] == 0
    assert alice.store.get(secret_id).description == "Alice's secret"
    assert alice.get("whoami").json()["user_id"] == alice.user


def test_delete_recently_deleted_and_restore(editor: Editor) -> None:
    memory_id = editor.store.add("Plays the cello", "music", "seed")
    deleted = editor.send("DELETE", f"memories/{memory_id}", {"reason": "user asked to forget"})
    assert deleted.status_code == 200
    assert editor.get("memories").json()["total"] == 0
    tombstones = editor.get("deleted").json()["items"]
    assert [(t["id"], t["deleted_reason"]) for t in tombstones] == [
        (memory_id, "user asked to forget")
    ]
    assert editor.send("POST", f"memories/{memory_id}/restore", {}).status_code == 200
    assert (
        editor.get("memories").json()["total"] == 1 and editor.get("deleted").json()["items"] == []
    )
    actions = [e["action"] for e in editor.get(f"memories/{memory_id}").json()["history"]]
    assert actions == ["restore", "delete", "create"]


def test_merge_keeps_both_histories(editor: Editor) -> None:
    keep = editor.store.add("Has a dog", "pets", "seed")
    other = editor.store.add("The dog is called Bao", "pets", "seed")
    merged = editor.send(
        "POST",
        "merge",
        {
            "id": keep,
            "other_id": other,
            "description": "Has a dog called Bao",
            "theme": "pets",
            "reason": "same dog",
        },
    )
    assert merged.status_code == 200
    history = merged.json()["history"]
    assert history[0]["action"] == "merge" and history[0]["reason"] == "same dog"
    assert {e.get("description") for e in history} >= {"Has a dog", "The dog is called Bao"}
    assert [t["into"] for t in editor.get("deleted").json()["items"]] == [keep]


def test_search_and_theme_filter(editor: Editor) -> None:
    editor.store.add("Drinks oolong tea", "food", "seed")
    editor.store.add("喜欢喝普洱茶", "food", "seed")
    editor.store.add("Runs marathons", "sport", "seed")
    found = editor.get("memories", q="oolong").json()
    first = next(c["description"] for g in found["groups"] for c in g["cards"])
    assert first == "Drinks oolong tea"
    chinese = editor.get("memories", q="普洱").json()
    assert "喜欢喝普洱茶" in [c["description"] for g in chinese["groups"] for c in g["cards"]]
    sport = editor.get("memories", theme="sport").json()
    assert [g["theme"] for g in sport["groups"]] == ["sport"] and sport["shown"] == 1
    assert sport["themes"] == {"food": 2, "sport": 1}  # the filter menu still lists every theme


def test_export_then_import_keeps_history_and_never_overwrites(
    base_url: str, data_dir: Path
) -> None:
    source = Editor(base_url, f"src-{uuid.uuid4().hex[:6]}", data_dir)
    target = Editor(base_url, f"dst-{uuid.uuid4().hex[:6]}", data_dir)
    memory_id = source.store.add("Born in Xi'an", "origin", "seed")
    source.store.update(memory_id, "typo", new_description="Born in Xi'an, Shaanxi")
    exported = source.get("export")
    assert "attachment" in exported.headers["content-disposition"]
    document = exported.json()
    assert document["items"][memory_id]["history"][-1]["reason"] == "typo"

    first = target.send("POST", "import", document).json()
    assert first["added"] == [memory_id]
    imported = target.store.get(memory_id)
    assert [e["action"] for e in imported.history] == ["create", "update", "import"]
    again = target.send("POST", "import", document).json()
    assert again["skipped"] == [memory_id] and again["added"] == []

    target.store.update(memory_id, "local edit", new_description="Born in Xi'an (local)")
    stale = target.send("POST", "import", document).json()  # the older export, brought back
    tombstone_id = stale["superseded"][memory_id]
    assert stale["added"] == [] and stale["skipped"] == []
    listing = target.get("memories").json()
    assert listing["total"] == 1  # no second live memory
    assert [c["description"] for g in listing["groups"] for c in g["cards"]] == [
        "Born in Xi'an (local)"
    ]
    kept = target.get("deleted").json()["items"]
    assert [(t["id"], t["description"]) for t in kept] == [(tombstone_id, "Born in Xi'an, Shaanxi")]
    assert memory_id in kept[0]["deleted_reason"]
    history = target.get(f"memories/{tombstone_id}").json()["history"]
    assert [e["action"] for e in history] == ["delete", "import", "update", "create"]
    assert target.send("POST", "import", document).json()["skipped"] == [memory_id]
    assert len(target.get("deleted").json()["items"]) == 1  # that version is kept once


def test_status_reports_self_check_and_a_corrupt_store_stops_writes(
    base_url: str, data_dir: Path
) -> None:
    healthy = Editor(base_url, f"ok-{uuid.uuid4().hex[:6]}", data_dir)
    status = healthy.get("status").json()
    assert (
        status["status"] == "OK" and status["backend"] == "yaml" and status["auth_mode"] == "local"
    )
    assert healthy.send("POST", "self-check", {}).json()["status"] == "OK"

    broken = Editor(base_url, f"bad-{uuid.uuid4().hex[:6]}", data_dir)
    broken.store.path.write_text("items: [unclosed\n", encoding="utf-8")
    report = broken.get("status").json()
    assert report["status"] == "FAIL" and "not valid YAML" in report["issues"][0]
    refused = broken.send("POST", "memories", {"description": "x", "theme": "t"})
    assert refused.status_code == 409
    assert broken.store.path.read_text(encoding="utf-8") == "items: [unclosed\n"


async def write_through_the_memory_agent(manager: YamlMemoryManager, fact: str) -> None:
    """One chat turn through the local memory writer (LongTermMemory's queue and the memory
    agent), with a scripted model in place of the LLM; the trace goes wherever the writer puts it.
    """
    script = [
        step(call("read_memories")),
        step(call("create_memory", content=fact, section="music")),
        AIMessage("Saved one memory."),
    ]
    memory = LongTermMemory(manager, writer_llm=ScriptedModel(messages=iter(script)))
    memory.start()
    turn = [
        {"role": "user", "content": "I started the guzheng."},
        {"role": "assistant", "content": "Nice!"},
    ]
    await memory.send_history(turn)
    await memory.stop()
    assert memory.write_status().dead == 0, "the memory writer failed; see the captured log"


def test_event_stream_shows_what_the_memory_agent_changed_and_with_which_tool(
    editor: Editor,
) -> None:
    # Longer than the 15 s heartbeat, so a missing event fails in read_events with a message.
    with editor.http.stream("GET", "events", timeout=40) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines) == "retry: 2000"  # the stream has taken its starting snapshot
        asyncio.run(write_through_the_memory_agent(editor.store, "The user learns the guzheng."))
        changes: list[dict[str, Any]] = []
        trace: list[dict[str, Any]] = []
        for event in read_events(lines, "change"):
            changes += event["changes"]
            trace += event["trace"]
            if changes and trace:
                break
    (memory_id,) = editor.store.list_items()
    assert [(c["id"], c["action"], c["description"]) for c in changes] == [
        (memory_id, "create", "The user learns the guzheng.")
    ]
    assert [(t["tool"], t["action"], t["id"], t["description"]) for t in trace] == [
        ("create_memory", "add", memory_id, "The user learns the guzheng.")
    ]


async def admit_two_turns(manager: YamlMemoryManager) -> None:
    """What ltm_write does with two turns: "ok thanks" is scored skip (recorded, never sent);
    a fact is scored batch and written by the memory agent (a scripted model)."""
    from memory.admission import score_turn
    from memory.writer.turn import Turn

    script = [step(call("create_memory", content="The user plays the guzheng.", section="music"))]
    memory = LongTermMemory(
        manager, writer_llm=ScriptedModel(messages=iter([*script, AIMessage("Saved.")]))
    )
    memory.start()
    for text in ("ok thanks", "I play the guzheng every evening."):
        said = [{"role": "user", "content": text}]
        turn = Turn.of(manager.user_id, said, thread_id="t1", admission=score_turn(text))
        await asyncio.to_thread(memory.trace.record_admission, turn)
        if turn.decision != "skip":
            await memory.send(turn)
    await memory.stop()


def test_the_live_view_shows_admission_decisions_and_the_status_counts_model_calls(
    editor: Editor,
) -> None:
    with editor.http.stream("GET", "events", timeout=40) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "retry: 2000"
        asyncio.run(admit_two_turns(editor.store))
        trace: list[dict[str, Any]] = []
        for event in read_events(lines, "change"):
            trace += event["trace"]
            if len(trace) >= 3:
                break
    admissions = [(t["action"], t["description"]) for t in trace if t["tool"] == "admission"]
    assert admissions == [("skip", "ok thanks"), ("batch", "I play the guzheng every evening.")]
    skip = next(t for t in trace if t["action"] == "skip")
    assert skip["reason"].startswith("score -") and "small_talk" in skip["reason"]
    assert any(t["tool"] == "create_memory" for t in trace)
    usage = editor.get("status").json()["usage"]
    assert usage["writer"]["calls"] == 2 and usage["writer"]["input_tokens"] > 0
    assert "chat" not in usage  # the editor's user chatted nowhere here


def test_the_standalone_editor_answers_only_to_loopback_names(base_url: str) -> None:
    rebound = httpx.get(f"{base_url}/memories/api/memories", headers={"Host": "evil.example"})
    assert rebound.status_code == 400
    port = base_url.rsplit(":", 1)[1]
    assert httpx.get(f"http://localhost:{port}/memories/api/whoami").status_code == 200


def test_page_and_assets_are_served_under_the_prefix(base_url: str) -> None:
    page = httpx.get(f"{base_url}/memories/")
    assert page.status_code == 200 and "static/editor.js" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    redirect = httpx.get(f"{base_url}/memories")
    assert redirect.status_code == 307 and redirect.headers["location"] == "/memories/"
    assert httpx.get(f"{base_url}/memories/static/editor.js").status_code == 200
    assert httpx.get(f"{base_url}/memories/static/editor.css").status_code == 200


def test_the_sqlite_backend_serves_the_same_api(tmp_path: Path) -> None:
    database = tmp_path / "memories.db"
    with run_editor(tmp_path / "unused", GULFSTREAM_MEMORY_BACKEND=f"sqlite:{database}") as base:
        http = httpx.Client(
            base_url=f"{base}/memories/api/",
            headers={**JSON_WRITE, "X-Gulfstream-User": "carol"},
            timeout=10,
        )
        memory_id = http.post(
            "memories", json={"description": "Grows tomatoes", "theme": "garden"}
        ).json()["id"]
        with http.stream("GET", "events") as stream:
            lines = stream.iter_lines()
            assert next(lines) == "retry: 2000"
            edited = http.patch(
                f"memories/{memory_id}", json={"theme": "hobbies", "reason": "broader"}
            )
            assert edited.status_code == 200
            change = next(read_events(lines, "change"))
        assert change["changes"][0]["action"] == "update"
        document = http.get("export").json()
        assert http.request("DELETE", f"memories/{memory_id}", json={}).status_code == 200
        dave = {"X-Gulfstream-User": "dave"}
        imported = http.post("import", json=document, headers=dave).json()
        assert imported["added"] == [memory_id]
        history = http.get(f"memories/{memory_id}", headers=dave).json()["history"]
        assert [e["action"] for e in history] == ["import", "update", "create"]
        assert (
            http.get("memories").json()["total"] == 0
            and http.get("status").json()["backend"] == "sqlite"
        )
        http.close()


def test_the_standalone_editor_explains_that_the_store_lives_in_the_server(tmp_path: Path) -> None:
    with run_editor(tmp_path / "unused", GULFSTREAM_MEMORY_BACKEND="store") as base:
        response = httpx.get(f"{base}/memories/api/memories")
    assert response.status_code == 501
    assert response.json()["field"] == "GULFSTREAM_MEMORY_BACKEND"
    assert "langgraph dev" in response.json()["error"]


def test_a_small_import_is_searchable_by_meaning_when_it_answers(editor: Editor) -> None:
    facts = {"m1": ("User plays jazz piano every evening.", "hobby"),
             "m2": ("用户喜欢喝绿茶。", "品味")}  # fmt: skip
    document = {
        "items": {
            memory_id: {"description": text, "theme": theme, "history": []}
            for memory_id, (text, theme) in facts.items()
        }
    }
    answer = editor.send("POST", "import", document).json()
    assert sorted(answer["added"]) == ["m1", "m2"] and answer["vectors_ready"] is True
    recall = editor.get("status").json()["recall"]
    assert recall["embedded"] == recall["live"] == 2 and recall["pending"] == 0
    assert recall["note"] == ""
