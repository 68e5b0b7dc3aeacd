"""Waiting turns read before the writer files them: ranking, branch rules, forget requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memory.admission import Admission
from memory.store.branch import Lineage
from memory.writer.turn import Turn
from memory.writer.waiting import WaitingIndex, forget_of

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BATCH = Admission(3.0, "batch", ("first_person_fact",))
TASK = Admission(3.0, "write", ("task_setup",))


def said(text: str, thread: str = "t1", minutes_ago: float = 1.0, **details: Any) -> Turn:
    when = (NOW - timedelta(minutes=minutes_ago)).isoformat()
    details.setdefault("admission", BATCH)
    return Turn.of(
        "ada",
        [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted, Porto."}],
        turn_id=f"{thread}:{text[:24]}",
        thread_id=thread,
        enqueued_at=when,
        **details,
    )


def read(index: WaitingIndex, query: str, thread: str = "t9", **kw: Any) -> list[str]:
    lineage = kw.pop("lineage", Lineage(thread, frozenset({"c9"})))
    return [line.text for line in index.read(query, thread, lineage, now=NOW, **kw)]


def index_of(*turns: Turn) -> WaitingIndex:
    index = WaitingIndex()
    index.update(turns)
    return index


def test_the_matching_turn_of_another_thread_comes_first_and_only_the_user_text() -> None:
    index = index_of(
        said("My sister Ines lives in Lyon.", minutes_ago=2),
        said("I started learning the cello.", thread="t2", minutes_ago=1),
    )
    assert read(index, "What instrument am I learning?")[0] == "I started learning the cello."
    assert read(index, "Where does my sister live?")[0] == "My sister Ines lives in Lyon."
    assert all("Noted" not in text for text in read(index, "sister"))  # not the reply


def test_the_run_s_own_thread_is_never_read_back() -> None:
    index = index_of(said("My sister Ines lives in Lyon.", thread="t1"))
    assert read(index, "Where does my sister live?", thread="t1") == []
    assert read(index, "Where does my sister live?", thread="t2") != []


def test_a_task_turn_is_read_only_below_its_own_checkpoint() -> None:
    task = said("Let's plan a trip to Kyoto.", thread="t1", admission=TASK, checkpoint_id="c1")
    fact = said("My name is Ada.", thread="t1", checkpoint_id="c0", minutes_ago=3)
    index = index_of(task, fact)
    elsewhere = read(index, "How is the Kyoto trip?", thread="t2")
    assert elsewhere == ["My name is Ada."]  # the user fact only (said lately)
    below = Lineage("t3", frozenset({"c0", "c1"}))  # a copy of the thread below the task
    assert "Let's plan a trip to Kyoto." in read(index, "Kyoto trip", thread="t3", lineage=below)
    unscored = said("Let's plan a trip to Kyoto.", thread="t1", admission=None)
    assert read(index_of(unscored), "Kyoto trip", thread="t2") == []  # the task markers tell


def test_a_forget_request_in_the_query_or_waiting_hides_what_it_names_said_before_it() -> None:
    porto = said("I live in Porto now.", minutes_ago=5)
    cello = said("I play the cello.", minutes_ago=4)
    assert read(index_of(porto, cello), "Please forget where I live.") == []  # no fill either
    forget = said("Forget where I live.", thread="t2", minutes_ago=2)
    later = said("I live in Braga, actually.", thread="t3", minutes_ago=1)
    index = index_of(porto, cello, forget, later)
    seen = read(index, "Where do I live?")
    assert "I live in Porto now." not in seen and "Forget where I live." not in seen
    assert seen[0] == "I live in Braga, actually."  # said after the forget request
    assert "I play the cello." in seen  # another topic: a recent line still
    everything = index_of(porto, cello, said("Forget everything about me.", thread="t2"))
    assert read(everything, "Where do I live?") == []
    assert forget_of("Don't forget my keys.") is None


def test_a_forget_request_hides_by_meaning_not_only_by_a_shared_word() -> None:
    moved = said("By the way, I moved to Porto last week.", minutes_ago=5)
    sister = said("My sister is called Mei.", minutes_ago=4)
    forget = said("Please forget where I live.", thread="t2", minutes_ago=2)
    seen = read(index_of(moved, sister, forget), "Where do I live now?")
    assert not any("Porto" in text for text in seen)  # no word shared, the same topic
    assert seen == ["My sister is called Mei."]  # another topic: still a recent line
    assert read(index_of(moved, sister), "Please forget where I live.") == []  # as the query
    hangzhou = said("我上周搬到了杭州。", minutes_ago=5)
    job = said("我在一家医院工作。", minutes_ago=4)
    zh_forget = said("忘掉我住在哪里", thread="t2", minutes_ago=2)
    assert read(index_of(hangzhou, job, zh_forget), "我现在住在哪里？") == ["我在一家医院工作。"]
    name = said("Call me Ada.", minutes_ago=5)
    job_en = said("I work as a nurse.", minutes_ago=4)
    index = index_of(name, job_en, said("忘记我的名字", thread="t2", minutes_ago=2))
    assert read(index, "What do you know about me?") == ["I work as a nurse."]


def test_a_turn_the_writer_applied_is_read_as_a_memory_only() -> None:
    porto = said("I live in Porto now.")
    index = index_of(porto)
    assert read(index, "Where do I live?", applied=lambda turn_id: turn_id == porto.turn_id) == []


def test_unmatched_turns_fill_in_only_when_said_lately_and_gone_turns_leave() -> None:
    old = said("I moved to Porto last week.", minutes_ago=30)
    index = index_of(old)
    assert read(index, "Where do I live now?") == []  # no shared word, and not just said
    fresh = said("I moved to Porto last week.", thread="t2", minutes_ago=1)
    index.update([old, fresh])
    assert read(index, "Where do I live now?") == ["I moved to Porto last week."]
    index.update([])
    assert read(index, "Porto") == [] and index.turns == {}


def test_a_thousand_waiting_turns_rank_by_words_and_updates_keep_the_index() -> None:
    turns = [said(f"I noted item number {n} about topic{n}.", thread=f"t{n % 7}",
                  minutes_ago=60 + n) for n in range(1000)]  # fmt: skip
    index = index_of(*turns)
    assert read(index, "what about topic512?")[0] == "I noted item number 512 about topic512."
    index.update(turns[1:])
    assert read(index, "topic0") == []
    assert len(index.turns) == 999
