"""Merges and copy-on-write in a fork: scopes never mix, an ancestor's item is never touched, and a
version is never written over a memory the user deleted or edited since the agent read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from memory.errors import MemoryNotFound, StaleWrite
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Lineage, Provenance, visible_ids
from memory.store.document import Change
from memory.writer.consumer import MemoryConsumer
from memory.writer.tools import MemoryToolkit
from memory.writer.turn import Turn
from tests.branch_trees import ancestors, brute_force_visible
from tests.fakes import ScriptedModel
from tests.unit.test_writer_tools import MONDAY_MORNING, a_turn, call, step

# A small checkpoint tree: 0 is the root, 1 its child, 2 below 1, 3 a sibling of 1.
PARENTS = [0, 0, 1, 0]


def at(node: int, turn_id: str) -> Provenance:
    return Provenance("t1", f"ckpt-{node}", turn_id)


def lineage(node: int) -> Lineage:
    return Lineage("t1", frozenset(f"ckpt-{n}" for n in ancestors(PARENTS, node)))


@pytest.fixture
def manager(tmp_path: Path) -> YamlMemoryManager:
    store = YamlMemoryManager(tmp_path / "memory", "ada")
    store.apply([Change("add", id="name", description="The user is Ada.", theme="identity")], "t0")
    store.apply(
        [Change("add", id="kyoto", description="Plan a trip to Kyoto.", theme="task",
                scope="branch")],
        "turn-0", at(0, "turn-0"),
    )  # fmt: skip
    return store


def said_at(node: int, turn_id: str, text: str = "Go on.") -> Turn:
    """A turn of thread t1 said at checkpoint `node`, reading what that branch may read."""
    return a_turn("ada", turn_id, text, thread_id="t1", checkpoint_id=f"ckpt-{node}",
                  lineage=lineage(node))  # fmt: skip


def toolkit(manager: YamlMemoryManager, node: int, turn_id: str) -> MemoryToolkit:
    said = said_at(node, turn_id)
    assert said.provenance == at(node, turn_id)
    kit = MemoryToolkit.for_turn(manager, said)
    kit.view.load()
    return kit


def short_id(kit: Any, real_id: str) -> int:
    return next(short for short, memory in kit.view.live.items() if memory.real_id == real_id)


def snapshot(manager: YamlMemoryManager) -> dict[str, Any]:
    return {i: item.to_dict() for i, item in manager.all_items().items()}


def assert_visibility_matches_the_definition(manager: YamlMemoryManager) -> None:
    items = manager.all_items()
    for node in range(len(PARENTS)):
        expected = {i for i in items if brute_force_visible(PARENTS, node, items, i)}
        assert visible_ids(items, lineage(node)) == expected, f"at node {node}"


@pytest.mark.parametrize("keep_user", [True, False])
def test_the_agent_cannot_merge_a_user_memory_with_a_branch_memory(
    manager: YamlMemoryManager, keep_user: bool
) -> None:
    before = snapshot(manager)
    kit = toolkit(manager, 1, "turn-1")
    user, branch = short_id(kit, "name"), short_id(kit, "kyoto")
    id1, id2 = (user, branch) if keep_user else (branch, user)
    tools = {tool.name: tool for tool in kit.tools}
    reply = tools["merge_memories"].invoke(
        {"id1": id1, "id2": id2, "content": "Ada plans Kyoto", "section": "task", "reason": "x"}
    )
    assert reply.startswith("Error:") and "update_memory" in reply
    assert kit.changes == []
    manager.apply(kit.changes, "turn-1", at(1, "turn-1"))
    assert snapshot(manager) == before  # the user's fact stays for every thread
    assert "name" in visible_ids(manager.all_items(), Lineage("t2", frozenset({"elsewhere"})))


@pytest.mark.parametrize("ids", [("kyoto", "name"), ("name", "kyoto")])
def test_apply_refuses_a_mixed_scope_merge_in_a_branch(
    manager: YamlMemoryManager, ids: tuple[str, str]
) -> None:
    before = snapshot(manager)
    merge = Change("merge", id=ids[0], other_id=ids[1], description="Ada plans Kyoto",
                   theme="task", reason="same")  # fmt: skip
    with pytest.raises(ValueError, match="different scopes"):
        manager.apply([merge], "turn-x", at(0, "turn-x"))  # kyoto is this checkpoint's own
    assert snapshot(manager) == before and not manager.has_applied("turn-x")


def test_absorbing_an_inherited_memory_is_a_branch_tombstone(manager: YamlMemoryManager) -> None:
    manager.apply(
        [Change("add", id="dates", description="Kyoto in April.", theme="task", scope="branch")],
        "turn-1", at(1, "turn-1"),
    )  # fmt: skip
    ancestors_before = {i: manager.get(i).to_dict() for i in ("kyoto", "dates", "name")}
    kit = toolkit(manager, 2, "turn-2")
    tools = {tool.name: tool for tool in kit.tools}
    reply = tools["merge_memories"].invoke({
        "id1": short_id(kit, "dates"), "id2": short_id(kit, "kyoto"),
        "content": "Plan a trip to Kyoto in April.", "section": "task", "reason": "one plan",
    })  # fmt: skip
    assert not reply.startswith("Error"), reply
    manager.apply(kit.changes, "turn-2", at(2, "turn-2"))
    assert {i: manager.get(i).to_dict() for i in ancestors_before} == ancestors_before
    items = manager.all_items()
    seen = {node: {items[i].description for i in visible_ids(items, lineage(node))}
            for node in range(4)}  # fmt: skip
    assert seen[2] == {"The user is Ada.", "Plan a trip to Kyoto in April."}
    assert seen[1] == {"The user is Ada.", "Plan a trip to Kyoto.", "Kyoto in April."}
    assert seen[3] == {"The user is Ada.", "Plan a trip to Kyoto."}
    assert_visibility_matches_the_definition(manager)


@pytest.mark.parametrize("editor", ["delete", "update"])
def test_a_copy_on_write_version_is_stale_when_the_editor_changed_the_original(
    manager: YamlMemoryManager, editor: str
) -> None:
    kit = toolkit(manager, 1, "turn-1")
    tools = {tool.name: tool for tool in kit.tools}
    if editor == "delete":
        manager.delete("kyoto", "the user deleted it in the editor")
    else:
        manager.update("kyoto", "the user edited it", "Plan a trip to Osaka.")
    edited = snapshot(manager)
    reply = tools["update_memory"].invoke(
        {"id": short_id(kit, "kyoto"), "content": "Plan a trip to Kyoto in April.", "reason": "x"}
    )
    assert not reply.startswith("Error"), reply
    with pytest.raises(StaleWrite, match="kyoto"):
        manager.apply(kit.changes, "turn-1", at(1, "turn-1"))
    assert snapshot(manager) == edited and not manager.has_applied("turn-1")
    assert_visibility_matches_the_definition(manager)


def test_a_version_never_supersedes_a_tombstone(manager: YamlMemoryManager) -> None:
    manager.delete("kyoto", "gone")
    revive = Change("add", id="copy", description="Plan a trip to Kyoto.", theme="task",
                    scope="branch", supersedes="kyoto")  # fmt: skip
    with pytest.raises(MemoryNotFound, match="deleted"):
        manager.apply([revive], "turn-1", at(1, "turn-1"))
    assert "copy" not in manager.all_items()
    assert_visibility_matches_the_definition(manager)


async def test_the_writer_reruns_the_turn_when_the_editor_deletes_meanwhile(
    manager: YamlMemoryManager, caplog: pytest.LogCaptureFixture
) -> None:
    script = iter([
        step(call("update_memory", id=2, content="Plan a trip to Kyoto in April.", reason="x")),
        AIMessage("done"),
        AIMessage("nothing to change"),  # the second run, on a fresh read
    ])  # fmt: skip
    deleted: list[str] = []
    first_calls: list[tuple[str, bool]] = []

    def editor_deletes(event: Any) -> None:
        if not deleted:  # after the agent staged its update, before the commit
            first_calls.append((event.tool, event.ok))
            deleted.append(manager.delete("kyoto", "the user deleted it meanwhile"))

    consumer = MemoryConsumer(ScriptedModel(messages=script), clock=lambda: MONDAY_MORNING)
    memory = LongTermMemory(manager, on_event=editor_deletes)
    result = await consumer.consume(said_at(1, "turn-1", "In April."), memory)
    assert first_calls == [("update_memory", True)]  # a version of kyoto was staged
    assert "running it again" in caplog.text  # the stale commit was refused, the turn rerun
    assert deleted and result.applied and result.changes == []
    items = manager.all_items()
    assert {items[i].description for i in visible_ids(items, lineage(1))} == {"The user is Ada."}
    assert_visibility_matches_the_definition(manager)
