"""Branch scope at the manager on every backend: provenance, copy-on-write, persistence, and
retrieval restricted to a lineage (over-fetch then filter equals filtering the whole ranking)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import CopyOnWriteRefused
from memory.retrieval import MechanicalRetriever
from memory.retrieval.llm import LLMRetriever
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Lineage, Provenance, visible_ids
from memory.store.document import Change, MemoryDocument
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager
from memory.store.snapshots import import_snapshot, write_snapshot
from memory.text.tokenize import tokenize
from tests.integration.conftest import OpenManager

ROOT = Provenance("thread-1", "ckpt-root")
CHILD_A = Provenance("thread-1", "ckpt-a")
CHILD_B = Provenance("thread-1", "ckpt-b")
LINEAGE_A = Lineage("thread-1", frozenset({"ckpt-root", "ckpt-a"}))
LINEAGE_B = Lineage("thread-1", frozenset({"ckpt-root", "ckpt-b"}))


def _seed(manager: BaseMemoryManager) -> None:
    """Root: a user fact and a branch plan; child A: its own branch note."""
    manager.apply(
        [
            Change("add", id="city", description="用户住在杭州", theme="身份"),
            Change("add", id="plan", description="We draft the intro first", theme="task",
                   scope="branch"),
        ],
        "turn-root",
        ROOT,
    )  # fmt: skip
    manager.apply(
        [Change("add", id="a-note", description="Branch A uses PostgreSQL", theme="task",
                scope="branch")],
        "turn-a",
        CHILD_A,
    )  # fmt: skip


def test_items_record_scope_origin_and_history_provenance(manager: BaseMemoryManager) -> None:
    _seed(manager)
    plan = manager.get("plan")
    assert plan.scope == "branch"
    assert plan.origin == {"thread_id": "thread-1", "checkpoint_id": "ckpt-root",
                           "turn_id": "turn-root"}  # fmt: skip
    assert manager.get("city").scope == "user"
    assert manager.get("city").origin["checkpoint_id"] == "ckpt-root"
    created = manager.get("a-note").history[0]
    assert (created["thread_id"], created["checkpoint_id"], created["turn_id"]) == (
        "thread-1", "ckpt-a", "turn-a"
    )  # fmt: skip


def test_visibility_follows_the_lineage(manager: BaseMemoryManager) -> None:
    _seed(manager)
    items = manager.all_items()
    assert visible_ids(items, LINEAGE_A) == {"city", "plan", "a-note"}
    assert visible_ids(items, LINEAGE_B) == {"city", "plan"}  # not its sibling's note
    assert visible_ids(items, Lineage("thread-2", frozenset({"other"}))) == {"city"}


def test_copy_on_write_guard_refuses_changing_an_ancestors_branch_item(
    manager: BaseMemoryManager,
) -> None:
    _seed(manager)
    before = manager.get("plan").to_dict()
    for change in (
        Change("update", id="plan", description="We draft the outro", reason="x"),
        Change("delete", id="plan", reason="x"),
        Change("merge", id="city", other_id="plan", description="merged", theme="身份"),
    ):
        with pytest.raises(CopyOnWriteRefused, match="plan"):
            manager.apply([change], f"turn-{change.op}", CHILD_A)
    # All-or-nothing: a refused batch left no turn behind, and a hit is a no-op.
    assert not manager.has_applied("turn-update")
    result = manager.apply([Change("hit", id="plan")], "turn-hit", CHILD_A)
    assert result.results == [0]
    assert manager.get("plan").to_dict() == before
    # The branch that wrote it may change it; user items are shared by every branch.
    manager.apply([Change("update", id="a-note", description="Branch A uses SQLite",
                          reason="changed")], "turn-a2", CHILD_A)  # fmt: skip
    manager.apply([Change("update", id="city", description="用户住在上海", reason="moved")],
                  "turn-b", CHILD_B)  # fmt: skip
    assert manager.get("city").history[-1]["checkpoint_id"] == "ckpt-b"


def test_a_copy_on_write_version_hides_the_ancestor_only_in_its_branch(
    manager: BaseMemoryManager,
) -> None:
    _seed(manager)
    before = manager.get("plan").to_dict()
    manager.apply(
        [Change("add", id="plan-a", description="We draft the outro first", theme="task",
                scope="branch", supersedes="plan")],
        "turn-a3",
        CHILD_A,
    )  # fmt: skip
    items = manager.all_items()
    assert visible_ids(items, LINEAGE_A) == {"city", "plan-a", "a-note"}
    assert visible_ids(items, LINEAGE_B) == {"city", "plan"}
    assert manager.get("plan").to_dict() == before


def test_branch_add_without_a_checkpoint_is_refused(manager: BaseMemoryManager) -> None:
    with pytest.raises(ValueError, match="checkpoint_id"):
        manager.apply([Change("add", description="x", theme="t", scope="branch")], "t1")
    with pytest.raises(ValueError, match="scope"):
        manager.apply([Change("add", description="x", theme="t", scope="team")], "t2", ROOT)
    assert manager.list_items() == {}


def test_scopes_provenance_and_core_context_persist_across_reopen(
    open_manager: OpenManager, unique_user: str
) -> None:
    first = open_manager(unique_user)
    _seed(first)
    assert first.get_core_context() == {}
    first.set_core_context(persona="A helpful assistant", human="用户住在杭州", goal="write a book",
                           thread_id="t-book")  # fmt: skip
    first.set_core_context(goal="finish chapter 2", thread_id="t-book")
    first.seed_core_context(thread_id="t-trip", goal="plan Kyoto", human="auto facts")
    again = open_manager(unique_user)
    assert {i: it.to_dict() for i, it in again.all_items().items()} == {
        i: it.to_dict() for i, it in first.all_items().items()
    }
    context = again.get_core_context("t-book")
    assert (context["persona"], context["human"], context["goal"]) == (
        "A helpful assistant", "用户住在杭州", "finish chapter 2"
    )  # fmt: skip
    assert context["updated_at"]
    assert again.get_core_context("t-trip")["goal"] == "plan Kyoto"  # each thread its own goal
    assert again.get_core_context("t-other")["goal"] == again.get_core_context()["goal"] == ""
    # The hand edit of `human` survived the reopen: seeding still leaves it alone.
    again.seed_core_context(human="newer auto facts")
    assert again.get_core_context()["human"] == "用户住在杭州"
    with pytest.raises(ValueError, match="mood"):
        again._update_core_context({"mood": "x"})
    with pytest.raises(ValueError, match="thread_id"):
        again.set_core_context(goal="no thread")


def test_snapshot_round_trip_keeps_scopes_provenance_and_core_context(
    manager: BaseMemoryManager, tmp_path: Path
) -> None:
    _seed(manager)
    manager.apply([Change("delete", id="a-note", reason="done")], "turn-a4", CHILD_A)
    manager.set_core_context(persona="助理", human="住在杭州", goal="写书", thread_id="t-a")
    manager.seed_core_context(thread_id="t-b", goal="另一个任务")
    path = write_snapshot(manager, tmp_path / "backup.jsonl.gz")
    target = YamlMemoryManager(tmp_path / "restored", manager.user_id)
    assert import_snapshot(target, path) == 3
    assert {i: it.to_dict() for i, it in target.all_items().items()} == {
        i: it.to_dict() for i, it in manager.all_items().items()
    }
    for thread in (None, "t-a", "t-b"):
        assert target.get_core_context(thread) == manager.get_core_context(thread)
    assert target.get_core_context("t-b")["goal"] == "另一个任务"
    assert target.has_applied("turn-a4")


def test_listeners_hear_every_committed_write_and_no_refused_one(
    manager: BaseMemoryManager,
) -> None:
    heard: list[str] = []
    manager.add_change_listener(lambda: heard.append(manager.revision))
    _seed(manager)
    manager.set_core_context(goal="g", thread_id="t")
    with pytest.raises(CopyOnWriteRefused):
        manager.apply([Change("delete", id="plan")], "turn-x", CHILD_B)
    assert len(heard) == 3


def test_a_failing_listener_does_not_fail_the_write(manager: BaseMemoryManager) -> None:
    def broken() -> None:
        raise RuntimeError("listener bug")

    manager.add_change_listener(broken)
    memory_id = manager.add("The user likes tea", "taste")
    assert manager.get(memory_id).description == "The user likes tea"


# ── retrieval with a lineage ─────────────────────────────────────────────

WORDS = ["tea", "coffee", "garden", "python", "paris", "music", "chess", "bike", "rain", "book"]


@st.composite
def stores(draw: st.DrawFn) -> tuple[dict[str, MemoryItem], Lineage, str, int]:
    nodes = draw(st.integers(1, 6))
    parents = [0] + [draw(st.integers(0, i - 1)) for i in range(1, nodes)]
    current = draw(st.integers(0, nodes - 1))
    chain = [current]
    while chain[-1] != 0:
        chain.append(parents[chain[-1]])
    items: dict[str, MemoryItem] = {}
    for n in range(draw(st.integers(0, 60))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
        scope = draw(st.sampled_from(["user", "branch"]))
        supersedes = ""
        if scope == "branch" and items and draw(st.booleans()):
            supersedes = draw(st.sampled_from(sorted(items)))
        items[f"m{n}"] = MemoryItem(
            description=" ".join(words) + f" n{n}",
            theme="notes",
            latest_update_time=f"2026-11-{1 + n % 28:02d}T10:00:00.000000+00:00",
            deleted=draw(st.integers(0, 5)) == 0,
            scope=scope,
            origin={"checkpoint_id": f"c{draw(st.integers(0, nodes - 1))}"},
            supersedes=supersedes,
        )
    lineage = Lineage("t", frozenset(f"c{node}" for node in chain))
    return items, lineage, draw(st.sampled_from(WORDS)), draw(st.integers(1, 5))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stores())
def test_lineage_retrieval_equals_filtering_the_whole_ranking(
    store: tuple[dict[str, MemoryItem], Lineage, str, int],
) -> None:
    items, lineage, query, limit = store
    with tempfile.TemporaryDirectory() as directory:
        manager = YamlMemoryManager(directory, "alice")
        manager._save_all(MemoryDocument(items, [], 1))
        retriever = MechanicalRetriever(manager)
        index = retriever.index()
        scores = index.scores(tokenize(query))
        visible = visible_ids(manager.all_items(), lineage)
        # Brute force: every visible matching memory, best score first; compare scores so that
        # equal-score neighbours may come in either order.
        expected = sorted((s for i, s in scores.items() if i in visible), reverse=True)[:limit]
        found = retriever.retrieve(query, limit, lineage)
        assert all(hit["id"] in visible for hit in found)
        assert [scores[hit["id"]] for hit in found] == pytest.approx(expected)


class _PickAll:
    """A chat model that picks every numbered memory it is shown, and keeps the prompt."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def invoke(self, messages: list[object]) -> str:
        text = str(getattr(messages[-1], "content", messages[-1]))
        self.prompts.append(text)
        count = text.count("\n[") + (1 if "[0]" in text else 0)
        return str(list(range(count)))


def test_llm_retrieval_shows_the_model_only_the_lineage(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path, "alice")
    _seed(manager)
    model = _PickAll()
    found = LLMRetriever(manager, model).retrieve("what are we doing?", 10, LINEAGE_B)
    assert {hit["id"] for hit in found} == {"city", "plan"}
    assert "PostgreSQL" not in model.prompts[-1]
    found = LLMRetriever(manager, model).retrieve("what are we doing?", 10, LINEAGE_A)
    assert {hit["id"] for hit in found} == {"city", "plan", "a-note"}


def test_a_version_1_sqlite_file_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    import sqlite3

    from memory.store.backends.sqlite_db import SqliteMemoryManager
    from memory.store.backends.sqlite_rows import MIGRATIONS

    path = tmp_path / "memory.db"
    with sqlite3.connect(path) as old:
        for statement in MIGRATIONS[1]:
            old.execute(statement)
        old.execute(
            "INSERT INTO memory_items (user_id, id, description, theme, latest_update_time, hit,"
            " deleted) VALUES ('alice', 'm1', '用户喜欢喝茶', 'taste', '2026-01-01T00:00:00+00:00',"
            " 2, 0)"
        )
        old.execute("PRAGMA user_version = 1")
    old.close()
    manager = SqliteMemoryManager(path, "alice")
    assert manager.self_check().status == "OK"
    item = manager.get("m1")
    assert (item.description, item.hit, item.scope, item.origin, item.supersedes) == (
        "用户喜欢喝茶", 2, "user", {}, ""
    )  # fmt: skip
    manager.apply([Change("add", id="b", description="We test", theme="t", scope="branch")],
                  "t1", ROOT)  # fmt: skip
    manager.set_core_context(goal="g", thread_id="t")
    manager.close()
    again = SqliteMemoryManager(path, "alice")
    assert again.get("b").origin["checkpoint_id"] == "ckpt-root"
    assert again.get_core_context("t")["goal"] == "g"
    again.close()


def test_a_hand_edited_scope_is_repaired_and_reported(tmp_path: Path) -> None:
    (tmp_path / "alice.yaml").write_text(
        "items:\n"
        "  a: {description: x, theme: t, scope: team}\n"
        "  b: {description: y, theme: t, scope: branch}\n"
        "  c: {description: z, theme: t, origin: {checkpoint_id: 7}}\n",
        encoding="utf-8",
    )
    manager = YamlMemoryManager(tmp_path, "alice")
    report = manager.self_check()
    assert report.status == "WARN"
    assert any("scope was 'team'" in line for line in report.repaired)
    assert any("without an origin checkpoint" in line for line in report.repaired)
    assert {item.scope for item in manager.list_items().values()} == {"user"}
    assert manager.get("c").origin == {"checkpoint_id": "7"}


def test_hybrid_and_the_facade_keep_to_the_lineage(tmp_path: Path) -> None:
    from memory.long_term import LongTermMemory
    from memory.retrieval.hybrid import HybridRetriever

    manager = YamlMemoryManager(tmp_path, "alice")
    _seed(manager)
    model = _PickAll()
    for max_items in (200, 1):  # the whole store, then BM25's over-fetched shortlist
        hybrid = HybridRetriever(manager, model, max_items=max_items)
        found = hybrid.retrieve("PostgreSQL draft intro 杭州", 10, LINEAGE_B)
        assert {hit["id"] for hit in found} <= {"city", "plan"}
        assert "Branch A uses" not in model.prompts[-1]
    facade = LongTermMemory(manager)
    assert {m["id"] for m in facade.get_related_memory_from("PostgreSQL", "mechanical")} == {
        "a-note"
    }
    assert facade.get_related_memory_from("PostgreSQL", "mechanical", lineage=LINEAGE_B) == []
    hits = facade.get_related_memory_from("PostgreSQL", "mechanical", 10, LINEAGE_A)
    assert [m["id"] for m in hits] == ["a-note"]


def test_without_a_checkpoint_there_is_no_branch_to_guard(manager: BaseMemoryManager) -> None:
    _seed(manager)
    local = Provenance("thread-9", "", "turn-9")
    manager.apply([Change("update", id="plan", description="We draft the outro", reason="x")],
                  "turn-9", local)  # fmt: skip
    assert manager.get("plan").history[-1]["thread_id"] == "thread-9"
