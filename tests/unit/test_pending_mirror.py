"""The per-process copy of the server's waiting turns: current after this process's puts and
deletes, and catching up with other processes' in the background."""

from __future__ import annotations

import time

import pytest
from langgraph.store.memory import InMemoryStore

import memory.integration.writing.pending
import memory.integration.writing.pending_mirror
from memory.integration.writing.pending import (
    drop_pending,
    keep_pending_sync,
    pending_namespace,
    waiting_turns,
)
from memory.writer.turn import Turn


def said(number: int, user: str = "ada") -> Turn:
    return Turn.of(user, [{"role": "user", "content": f"fact {number}"}], turn_id=f"w{number}")


def ids(turns: list[Turn]) -> list[str]:
    return sorted(turn.turn_id for turn in turns)


async def test_the_copy_follows_this_process_and_catches_up_with_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = InMemoryStore()
    keep_pending_sync(store, said(1))
    assert ids(waiting_turns(store, "ada")) == ["w1"]  # listed on first use
    monkeypatch.setattr(
        memory.integration.writing.pending, "pending_turns_sync", lambda *a: pytest.fail("listed")
    )
    keep_pending_sync(store, said(2))
    await drop_pending(store, "ada", ["w1"])
    assert ids(waiting_turns(store, "ada")) == ["w2"]  # this process's own changes, not listed
    monkeypatch.undo()
    keep_pending_sync(store, said(9, user="bob"))  # another user has a copy of their own
    assert ids(waiting_turns(store, "bob")) == ["w9"]
    # Another process puts a turn straight into the store: seen once the copy is listed again.
    store.put(pending_namespace("ada"), "w3", said(3).to_dict(), index=False)
    assert ids(waiting_turns(store, "ada")) == ["w2"]
    monkeypatch.setattr(memory.integration.writing.pending_mirror, "REFRESH_SECONDS", 0.0)
    waiting_turns(store, "ada")  # starts the listing in the background
    deadline = time.monotonic() + 10
    while ids(waiting_turns(store, "ada")) != ["w2", "w3"]:
        assert time.monotonic() < deadline, "the copy never caught up"
        time.sleep(0.01)


def test_a_put_or_delete_during_a_listing_is_not_undone_by_it() -> None:
    store = InMemoryStore()
    keep_pending_sync(store, said(1))
    mirror = memory.integration.writing.pending_mirror.mirror_of(store, "ada")
    assert mirror is not None
    mirror.turns(lambda: [said(1)])

    def slow_listing() -> list[Turn]:  # what the store held when the listing read it
        mirror.added(said(2))  # meanwhile this process puts one turn and deletes another
        mirror.dropped(["w1"])
        return [said(1)]

    mirror._refresh(slow_listing)
    assert ids(mirror.turns(slow_listing)) == ["w2"]
