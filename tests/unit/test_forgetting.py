"""memory.store.forgotten: what carries a forgotten memory leaves the archive's searches and
digests, and derived text, until the memory is restored."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from memory.archive import ArchivedMessage, DigestSealer, SearchResult
from memory.archive.base import hidden_note
from memory.archive.reconcile import carrying_messages, reconcile
from memory.archive.sqlite_archive import SqliteArchive
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Provenance
from memory.store.document import Change
from memory.store.forgotten import Fingerprint, forgotten_prints, redact, redact_core_context
from memory.store.item import MemoryItem
from memory.store.operations import archive as archive_memory

ADDRESS = "I live in Hangzhou, at 18 Wenyi Road"


def _said(archive: SqliteArchive, thread: str, checkpoint: str, *texts: tuple[str, str]) -> None:
    now = time.time() - 60
    archive.add([
        ArchivedMessage(archive.user_id, thread, checkpoint, f"{checkpoint}-{n}", role, text, now,
                        n)
        for n, (role, text) in enumerate(texts)
    ])  # fmt: skip


def _messages(result: SearchResult) -> list[str]:
    return [h.anchor.content for h in result.hits if h.digest is None]


def _setup(tmp_path: Path) -> tuple[YamlMemoryManager, SqliteArchive, str]:
    manager = YamlMemoryManager(tmp_path / "memory", "ada")
    archive = SqliteArchive(tmp_path / "conversations", "ada")
    _said(archive, "t1", "c1", ("user", ADDRESS), ("assistant", "Noted."))
    _said(archive, "t1", "c2", ("user", "I love green tea"), ("assistant", "Tea, lovely."))
    _said(archive, "t2", "c3", ("user", "The weather in Hangzhou is humid"))
    _said(archive, "t2", "c4", ("user", "我住在杭州"))
    where = Provenance("t1", "c1", "t1:c1-0@c1")
    manager.apply([Change("add", description="User lives in Hangzhou, at 18 Wenyi Road",
                          theme="identity")], "turn-1", where)  # fmt: skip
    manager.apply([Change("add", description="User loves green tea", theme="preferences")],
                  "turn-2", Provenance("t1", "c2", "t1:c2-0@c2"))  # fmt: skip
    memory_id = next(i for i, m in manager.list_items().items() if "Hangzhou" in m.description)
    DigestSealer().seal(archive)
    return manager, archive, memory_id


def test_the_messages_of_its_turn_and_those_naming_it_are_the_ones_found(tmp_path: Path) -> None:
    manager, archive, memory_id = _setup(tmp_path)
    manager.delete(memory_id, "the user asked to forget it")
    keys = carrying_messages(archive, manager.get(memory_id, include_deleted=True))
    texts = {m.content for m in archive.messages() if m.ref in set(keys)}
    # The turn that told it (its reply too), and what names the place in either language.
    assert texts == {ADDRESS, "Noted.", "The weather in Hangzhou is humid", "我住在杭州"}


def test_a_batched_runs_last_turn_is_taken_only_where_it_names_the_memory(
    tmp_path: Path,
) -> None:
    """Two facts told at c5 and c6, written by one batched run recorded at c6: forgetting the
    first takes the c5 message that names it and nothing of c6, which told the other fact;
    the same entries without a batch size take c6 whole, as a turn that told it."""
    manager = YamlMemoryManager(tmp_path / "memory", "ada")
    archive = SqliteArchive(tmp_path / "conversations", "ada")
    _said(archive, "t1", "c5", ("user", "I live in Lisbon"), ("assistant", "Noted."))
    _said(archive, "t1", "c6", ("user", "My sister is called Clara"), ("assistant", "Nice."))
    batched = Provenance("t1", "c6", "t1:c6-0@c6", batch_size=2)
    changes = [
        Change("add", description="User lives in Lisbon", theme="identity"),
        Change("add", description="User's sister is Clara", theme="relationships"),
    ]
    manager.apply(changes, ["turn-5", "turn-6"], batched)  # fmt: skip
    lisbon = next(i for i, m in manager.list_items().items() if "Lisbon" in m.description)
    assert manager.get(lisbon).origin["batch_size"] == "2"
    manager.delete(lisbon, "the user asked to forget it")
    item = manager.get(lisbon, include_deleted=True)

    def carried(of: MemoryItem) -> set[str]:
        keys = set(carrying_messages(archive, of))
        return {m.content for m in archive.messages() if m.ref in keys}

    assert carried(item) == {"I live in Lisbon"}
    unbatched = dataclasses.replace(
        item,
        history=[{k: v for k, v in e.items() if k != "batch_size"} for e in item.history],
        origin={k: v for k, v in item.origin.items() if k != "batch_size"},
    )
    assert carried(unbatched) == {"I live in Lisbon", "My sister is called Clara", "Nice."}


def test_forget_hides_from_search_and_digests_and_restore_brings_back(tmp_path: Path) -> None:
    manager, archive, memory_id = _setup(tmp_path)
    assert "Wenyi" in archive.digests()[0].text
    manager.delete(memory_id, "the user asked to forget it")
    done = reconcile(manager, archive)
    assert done.hidden == {memory_id: 4}
    result = archive.search("Wenyi Road")
    assert _messages(result) == []
    assert result.notes == (hidden_note(1),)
    assert archive.search("Hangzhou").notes == (hidden_note(2),)
    assert _messages(archive.search("green tea")) == ["I love green tea"]
    digest = archive.digests()[0].text
    assert "Hangzhou" not in digest and "Wenyi" not in digest and "杭州" not in digest
    assert "green tea" in digest
    assert DigestSealer().due_days(archive) == []  # not sealed again with what it hid
    assert reconcile(manager, archive).hidden == {}  # nothing new: nothing done

    manager.restore(memory_id, "undo")
    assert reconcile(manager, archive).restored == (memory_id,)
    assert _messages(archive.search("Wenyi Road")) == [ADDRESS]
    assert archive.search("Wenyi Road").notes == ()
    assert "Wenyi" in archive.digests()[0].text


def test_a_merge_tombstone_is_not_forgotten(tmp_path: Path) -> None:
    manager, archive, memory_id = _setup(tmp_path)
    other = next(i for i in manager.list_items() if i != memory_id)
    manager.merge(other, memory_id, "User loves green tea and lives in Hangzhou", "identity", "dup")
    assert reconcile(manager, archive).hidden == {}
    assert forgotten_prints(manager) == {}


def test_derived_text_loses_the_sentences_that_carry_it(tmp_path: Path) -> None:
    manager, _, memory_id = _setup(tmp_path)
    manager.delete(memory_id, "forget")
    prints = forgotten_prints(manager)
    summary = "- user: I live in Hangzhou, at 18 Wenyi Road\n- user: I love green tea"
    kept, withheld = redact(summary, prints)
    assert kept == "- user: I love green tea"
    assert withheld == [(memory_id, "- user: I live in Hangzhou, at 18 Wenyi Road")]
    block = {"human": "User lives in Hangzhou, at 18 Wenyi Road; User loves green tea",
             "persona": "", "goal": "", "updated_at": "x"}  # fmt: skip
    assert redact_core_context(block, prints)["human"] == "User loves green tea"


def test_a_fingerprint_is_not_fooled_by_common_words() -> None:
    address = Fingerprint.of(["User lives in Hangzhou, at 18 Wenyi Road"])
    assert not address.carries("Please forget where I live")
    assert not address.carries("A road trip next week")
    assert address.carries("18 Wenyi Road")
    assert Fingerprint.of(["User likes jazz"]).carries("I really like jazz")
    assert not Fingerprint.of(["User likes jazz"]).carries("I like pizza")
    assert not Fingerprint.of(["User's mom is a nurse"]).carries("my mom called")


def test_an_archived_memory_is_forgotten_and_an_erased_one_stays_hidden(tmp_path: Path) -> None:
    manager, archive, memory_id = _setup(tmp_path)
    with manager.transaction() as tx:  # what a consolidation pass does to a cold memory
        archive_memory(tx, memory_id, "cold for 90 days")
    assert reconcile(manager, archive).hidden == {memory_id: 4}
    manager.purge(memory_id)  # gone from the store: nothing to restore, nothing comes back
    assert reconcile(manager, archive).restored == ()
    assert _messages(archive.search("Wenyi Road")) == []


def test_the_running_summary_withholds_and_gives_back(tmp_path: Path) -> None:
    from memory.integration.summarizer import without_forgotten

    manager, _, memory_id = _setup(tmp_path)
    state = {"text": "- user: I live in Hangzhou, at 18 Wenyi Road\n- user: I love green tea",
             "messages": 4}  # fmt: skip
    assert without_forgotten(state, forgotten_prints(manager)) is None  # nothing forgotten
    manager.delete(memory_id, "forget")
    rewritten = without_forgotten(state, forgotten_prints(manager))
    assert rewritten is not None and rewritten["text"] == "- user: I love green tea"
    assert rewritten["withheld"] == [[memory_id, "- user: I live in Hangzhou, at 18 Wenyi Road"]]
    assert without_forgotten(rewritten, forgotten_prints(manager)) is None  # stable
    manager.restore(memory_id, "undo")
    back = without_forgotten(rewritten, forgotten_prints(manager))
    assert back is not None and "Wenyi Road" in back["text"] and back["withheld"] == []


async def test_a_forget_that_matches_nothing_is_not_done(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage

    from memory.long_term import LongTermMemory
    from memory.writer.trace import UNMATCHED_FORGET
    from tests.unit.test_writer_tools import call, consume, step

    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    manager.add("The user lives in Lyon.", "identity")
    # A model that reads the memories, finds nothing about a shoe size and says "Done."
    script = [step(call("read_memories")), AIMessage("Done.")]
    result, _ = await consume(manager, script, text="Please forget my shoe size.")
    assert result.applied and result.summary == UNMATCHED_FORGET
    rows = LongTermMemory(manager).trace.for_turn("alice", "turn-1")
    assert [(r.tool, r.op, r.result) for r in rows] == [("forget", "unmatched", UNMATCHED_FORGET)]
    assert rows[0].arguments == {"request": "Please forget my shoe size."}
    # A forget that deleted something is recorded as the delete, with no such row.
    script = [step(call("read_memories")), step(call("delete_memory", id=1, reason="asked")),
              AIMessage("Done.")]  # fmt: skip
    await consume(manager, script, text="Please forget where I live.", turn_id="turn-2")
    ops = [r.op for r in LongTermMemory(manager).trace.for_turn("alice", "turn-2")]
    assert ops == ["delete"]


def test_forgotten_again_before_a_look_keeps_the_first_digest_for_the_restore(
    tmp_path: Path,
) -> None:
    manager, archive, memory_id = _setup(tmp_path)
    manager.delete(memory_id, "forget")
    reconcile(manager, archive)
    manager.restore(memory_id, "undo")
    manager.delete(memory_id, "forget again")  # no turn in between: nobody looked
    assert reconcile(manager, archive).hidden == {memory_id: 4}
    assert "Wenyi" not in archive.digests()[0].text
    manager.restore(memory_id, "undo")
    reconcile(manager, archive)
    assert "Wenyi" in archive.digests()[0].text
