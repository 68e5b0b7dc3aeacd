"""The memory agent in a branch: scopes, copy-on-write versions through the tools, the journal's
branch fields, and the core context seeded after the first applied turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Lineage, Provenance, visible_ids
from memory.store.document import Change
from memory.writer.consumer import MemoryConsumer
from memory.writer.journal import TurnJournal
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel
from tests.unit.test_writer_tools import (
    MONDAY_MORNING,
    a_turn,
    call,
    step,
    tool_replies,
    turn,
)

ROOT = Provenance("thread-1", "ckpt-root", "turn-root")
FORK = Provenance("thread-1", "ckpt-fork", "turn-fork")
ROOT_LINEAGE = Lineage("thread-1", frozenset({"ckpt-root"}))
FORK_LINEAGE = Lineage("thread-1", frozenset({"ckpt-root", "ckpt-fork"}))
SIBLING_LINEAGE = Lineage("thread-1", frozenset({"ckpt-root", "ckpt-sibling"}))


@pytest.fixture
def manager(tmp_path: Path) -> YamlMemoryManager:
    return YamlMemoryManager(tmp_path / "memory", "alice")


async def consume(
    manager: YamlMemoryManager,
    script: list[Any],
    text: str = "Let's plan the trip.",
    turn_id: str = "turn-1",
    at: Provenance | None = None,
    lineage: Lineage | None = None,
    scope_policy: str = "auto",
) -> tuple[Any, ScriptedModel]:
    """One turn of thread-1, said at checkpoint `at` (none: no branch information)."""
    model = ScriptedModel(messages=iter(script))
    consumer = MemoryConsumer(model, clock=lambda: MONDAY_MORNING)
    checkpoint = at.checkpoint_id if at is not None else ""
    said = a_turn(manager.user_id, turn_id, text, thread_id="thread-1", checkpoint_id=checkpoint,
                  lineage=lineage, scope_policy=scope_policy)  # fmt: skip
    result = await consumer.consume(said, LongTermMemory(manager))
    return result, model


def seed_root(manager: YamlMemoryManager) -> None:
    manager.apply(
        [
            Change("add", id="name", description="The user is Ana.", theme="identity"),
            Change("add", id="plan", description="We plan a trip to Porto.", theme="task",
                   scope="branch"),
        ],
        "turn-root",
        ROOT,
    )  # fmt: skip


async def test_the_model_chooses_the_scope_and_the_prompt_states_the_rule(manager) -> None:
    script = [
        step(call("read_memories")),
        step(
            call("create_memory", content="The user is Ana.", section="identity", scope="user"),
            call("create_memory", content="We plan a trip.", section="task", scope="branch"),
        ),
        AIMessage("done"),
    ]
    result, model = await consume(manager, script, "I'm Ana. Let's plan the trip.", at=ROOT,
                                  lineage=ROOT_LINEAGE)  # fmt: skip
    assert result.applied
    system = " ".join(str(model.seen[0][0].content).split())
    assert 'scope "branch"' in system and 'scope "user"' in system
    scopes = {item.description: item.scope for item in manager.list_items().values()}
    assert scopes == {"The user is Ana.": "user", "We plan a trip.": "branch"}
    plan = next(i for i in manager.list_items().values() if i.scope == "branch")
    assert plan.origin["checkpoint_id"] == "ckpt-root"
    assert "this conversation only" in tool_replies(model)[2]


@pytest.mark.parametrize("policy", ["user", "branch"])
async def test_the_scope_policy_overrides_the_model(manager, policy: str) -> None:
    script = [
        step(call("create_memory", content="We plan a trip.", section="task", scope="branch")),
        step(call("create_memory", content="The user is Ana.", section="identity")),
        AIMessage("done"),
    ]
    await consume(manager, script, at=ROOT, lineage=ROOT_LINEAGE, scope_policy=policy)
    assert {item.scope for item in manager.list_items().values()} == {policy}


async def test_without_a_checkpoint_branch_memories_are_stored_as_user_memories(manager) -> None:
    script = [
        step(call("create_memory", content="We plan a trip.", section="task", scope="branch")),
        AIMessage("done"),
    ]
    result, _ = await consume(manager, script)
    assert result.applied
    assert [item.scope for item in manager.list_items().values()] == ["user"]


async def test_a_bad_scope_is_an_error_the_model_can_fix(manager) -> None:
    script = [
        step(call("create_memory", content="We plan a trip.", section="task", scope="team")),
        AIMessage("done"),
    ]
    _, model = await consume(manager, script, at=ROOT, lineage=ROOT_LINEAGE)
    assert "scope must be 'user'" in tool_replies(model)[0]
    assert manager.list_items() == {}


async def test_read_memories_shows_only_the_lineage(manager) -> None:
    seed_root(manager)
    manager.apply(
        [Change("add", id="sib", description="Sibling picks Lisbon.", theme="task",
                scope="branch")],
        "turn-sib",
        Provenance("thread-1", "ckpt-sibling"),
    )  # fmt: skip
    script = [step(call("read_memories")), AIMessage("no changes")]
    _, model = await consume(manager, script, at=FORK, lineage=FORK_LINEAGE)
    listing = tool_replies(model)[0]
    assert "The user is Ana." in listing and "(this conversation) We plan a trip" in listing
    assert "Lisbon" not in listing


async def test_updating_an_ancestors_branch_memory_writes_a_copy(manager) -> None:
    seed_root(manager)
    before = manager.get("plan").to_dict()
    script = [
        step(call("read_memories")),
        step(call("update_memory", id=2, content="We plan a trip to Braga.", reason="changed")),
        AIMessage("done"),
    ]
    result, model = await consume(manager, script, "Let's go to Braga instead.", at=FORK,
                                  lineage=FORK_LINEAGE)  # fmt: skip
    assert tool_replies(model)[1] == "Updated memory 2."  # the model sees plain success
    assert [c.op for c in result.changes] == ["add", "update"]
    assert manager.get("plan").to_dict() == before  # the ancestor is byte-stable
    copy_id = result.changes[0].id
    copy = manager.get(copy_id)
    assert (copy.description, copy.scope, copy.supersedes) == (
        "We plan a trip to Braga.", "branch", "plan"
    )  # fmt: skip
    assert copy.origin["checkpoint_id"] == "ckpt-fork"
    items = manager.all_items()
    assert visible_ids(items, FORK_LINEAGE) == {"name", copy_id}
    assert visible_ids(items, SIBLING_LINEAGE) == {"name", "plan"}
    assert visible_ids(items, ROOT_LINEAGE) == {"name", "plan"}


async def test_deleting_an_ancestors_branch_memory_leaves_a_branch_tombstone(manager) -> None:
    seed_root(manager)
    before = manager.get("plan").to_dict()
    script = [
        step(call("delete_memory", id=2, reason="trip cancelled")),
        step(call("hit_memory", id=1)),
        AIMessage("done"),
    ]
    result, model = await consume(manager, script, at=FORK, lineage=FORK_LINEAGE)
    assert tool_replies(model)[0] == "Deleted memory 2."
    assert [c.op for c in result.changes] == ["add", "delete", "hit"]
    assert manager.get("plan").to_dict() == before
    assert visible_ids(manager.all_items(), FORK_LINEAGE) == {"name"}
    assert visible_ids(manager.all_items(), SIBLING_LINEAGE) == {"name", "plan"}


async def test_merging_into_an_ancestors_branch_memory_copies_it_first(manager) -> None:
    seed_root(manager)
    before = manager.get("plan").to_dict()
    script = [
        step(call("create_memory", content="We go by train.", section="task", scope="branch")),
        step(call("merge_memories", id1=2, id2=3, content="We go to Porto by train.",
                  section="task", reason="same trip")),
        step(call("hit_memory", id=2)),
        AIMessage("done"),
    ]  # fmt: skip
    result, model = await consume(manager, script, at=FORK, lineage=FORK_LINEAGE)
    assert result.applied, tool_replies(model)
    assert manager.get("plan").to_dict() == before
    visible = visible_ids(manager.all_items(), FORK_LINEAGE)
    texts = {manager.get(i).description for i in visible}
    assert texts == {"The user is Ana.", "We go to Porto by train."}


async def test_hitting_an_ancestors_branch_memory_changes_nothing(manager) -> None:
    seed_root(manager)
    before = manager.get("plan").to_dict()
    script = [step(call("hit_memory", id=2)), AIMessage("done")]
    result, _ = await consume(manager, script, at=FORK, lineage=FORK_LINEAGE)
    assert result.applied and result.changes == []
    assert manager.get("plan").to_dict() == before


async def test_the_core_context_is_seeded_after_the_first_applied_turn(manager) -> None:
    assert manager.get_core_context() == {}
    script = [
        step(
            call("create_memory", content="The user is Ana.", section="identity"),
            call("create_memory", content="We plan a trip.", section="task", scope="branch"),
        ),
        AIMessage("done"),
    ]
    await consume(manager, script, text="I'm Ana; let's plan a trip to Porto.",
                  at=ROOT, lineage=ROOT_LINEAGE)  # fmt: skip
    context = manager.get_core_context("thread-1")
    assert context["persona"] == ""  # the app's persona stays in its prompt, not in each store
    assert context["human"] == "The user is Ana."  # user facts only, not the branch plan
    assert context["goal"] == "We plan a trip."  # the branch's task, not its first message
    assert manager.get_core_context()["goal"] == ""  # no thread: no goal
    seeded = dict(context)
    await consume(manager, [AIMessage("no changes")], text="Also I like tea.", turn_id="turn-2")
    assert manager.get_core_context("thread-1") == seeded  # nothing changed: nothing rewritten


async def test_the_core_context_is_seeded_in_chinese_with_a_given_persona(manager) -> None:
    book = "用户在写一本关于杭州的书" + "，" * 300
    create = call("create_memory", content=book, section="任务", scope="branch")
    await consume(manager, [step(create), AIMessage("已记录")], text="帮我写一本关于杭州的书",
                  at=ROOT, lineage=ROOT_LINEAGE)  # fmt: skip
    context = manager.get_core_context("thread-1")
    assert context["persona"] == ""
    assert context["goal"].startswith("用户在写一本关于杭州的书") and len(context["goal"]) <= 200
    other = YamlMemoryManager(manager.directory, "bob")
    model = ScriptedModel(messages=iter([AIMessage("done")]))
    said = a_turn("bob", "t", "hi", thread_id="s")
    await MemoryConsumer(model, persona="A tutor").consume(said, LongTermMemory(other))
    assert other.get_core_context()["persona"] == "A tutor"


def test_the_journal_keeps_branch_fields_and_reads_old_journals(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "journal.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        """CREATE TABLE turns (seq INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL,
        turn_id TEXT NOT NULL, session_id TEXT, messages TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        UNIQUE (user_id, turn_id));
        INSERT INTO turns (user_id, turn_id, messages, created_at, updated_at)
        VALUES ('alice', 'old', '[{"role": "user", "content": "hi"}]', 'x', 'x');"""
    )
    old.close()
    journal = TurnJournal(path)
    old_entry = journal.get("alice", "old")
    assert old_entry is not None and old_entry == journal.get("alice", "old")
    assert old_entry.turn.messages == ({"role": "user", "content": "hi"},)
    assert old_entry.state == "pending" and old_entry.turn.provenance is None
    assert [e.turn_id for e in journal.pending("alice")] == ["old"]  # replayed by the next start
    journal.append(
        a_turn("alice", "new", "x", thread_id="thread-1", checkpoint_id="ckpt-fork",
               lineage=FORK_LINEAGE, scope_policy="branch")
    )  # fmt: skip
    journal.close()
    reopened = TurnJournal(path)
    again = reopened.get("alice", "new")
    reopened.close()
    assert again is not None
    assert (again.turn.provenance, again.turn.lineage, again.turn.scope_policy) == (
        Provenance("thread-1", "ckpt-fork", "new"), FORK_LINEAGE, "branch"
    )  # fmt: skip


def test_a_journal_with_branch_columns_keeps_them_as_one_turn(tmp_path: Path) -> None:
    import json
    import sqlite3

    path = tmp_path / "journal.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        """CREATE TABLE turns (seq INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL,
        turn_id TEXT NOT NULL, session_id TEXT, messages TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, branch TEXT,
        UNIQUE (user_id, turn_id));"""
    )
    branch = {"provenance": FORK.as_dict(), "lineage": FORK_LINEAGE.as_dict(),
              "scope_policy": "branch"}  # fmt: skip
    old.execute(
        "INSERT INTO turns (user_id, turn_id, session_id, messages, state, attempts, last_error, "
        "created_at, updated_at, branch) VALUES (?, ?, ?, ?, 'dead', 3, 'boom', 'x', 'y', ?)",
        ("alice", "turn-fork", "thread-1", json.dumps(turn("x")), json.dumps(branch)),
    )
    old.commit()
    old.close()
    journal = TurnJournal(path)
    [dead] = journal.dead_letters("alice")
    journal.close()
    assert (dead.attempts, dead.last_error, dead.created_at) == (3, "boom", "x")
    assert dead.turn == Turn(
        "alice", "turn-fork", tuple(turn("x")), thread_id="thread-1", checkpoint_id="ckpt-fork",
        lineage=FORK_LINEAGE, scope_policy="branch", enqueued_at="x",
    )  # fmt: skip


def test_the_facade_reads_the_core_context_without_a_search(manager) -> None:
    from memory.long_term import LongTermMemory

    facade = LongTermMemory(manager)
    assert facade.get_core_context() == {}
    manager.set_core_context(persona="p", human="h", goal="g", thread_id="t1")
    assert {k: v for k, v in facade.get_core_context("t1").items() if k != "updated_at"} == {
        "persona": "p",
        "human": "h",
        "goal": "g",
    }
