"""The rules of consolidation without a store: which texts are one fact, which dates passed."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from memory.store.item import MemoryItem
from memory.upkeep.consolidation import dates_in, duplicate_groups, is_stale, passed_date, same_fact
from memory.upkeep.consolidation.similarity import MAX_POSTINGS, candidate_pairs, fingerprint

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = date(2026, 4, 20)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("User likes jazz", "User enjoys jazz music"),
        ("User likes jazz", "user really likes jazz."),
        ("User's flight to Tokyo is on 3 May", "User flies to Tokyo on 3 May"),
        ("用户喜欢爵士乐", "用户非常喜爱爵士乐。"),
        ("用户5月3日要去北京出差", "用户5月3号要去北京出差"),
    ],
)
def test_paraphrases_are_one_fact(first: str, second: str) -> None:
    assert same_fact(fingerprint(first), fingerprint(second))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("User's flight to Tokyo is on 3 May", "User's flight to Tokyo is on 5 May"),
        ("User's sister Anna lives in Oslo", "User's sister Maria lives in Oslo"),
        ("User likes jazz", "User dislikes jazz"),
        ("User likes jazz", "User likes rock"),
        ("用户5月3日要去北京出差", "用户5月5日要去北京出差"),
        ("用户喜欢爵士乐", "用户不喜欢爵士乐"),
        ("用户住在北京", "用户住在上海"),
        ("用户养了两只猫", "用户养了三只猫"),
    ],
)
def test_look_alike_distinct_facts_stay_apart(first: str, second: str) -> None:
    assert not same_fact(fingerprint(first), fingerprint(second))


def test_groups_follow_the_pairs_and_keep_input_order() -> None:
    texts = {
        "a": "User likes jazz",
        "b": "User enjoys jazz",
        "c": "User likes rock",
        "d": "User really loves jazz",
        "e": "用户喜欢爵士乐",
        "f": "用户很喜欢爵士乐",
    }
    assert sorted(duplicate_groups(texts)) == [["a", "b", "d"], ["e", "f"]]


def test_candidates_come_from_rare_tokens_not_all_pairs() -> None:
    # 3 x MAX_POSTINGS memories sharing only very common words: no pair is a candidate.
    texts = {f"m{n}": f"User likes item number {n} very much" for n in range(3 * MAX_POSTINGS)}
    prints = {i: fingerprint(t) for i, t in texts.items()}
    assert candidate_pairs(prints) == set()
    prints["dup"] = fingerprint("User likes item number 7 very much")
    assert candidate_pairs(prints) == {("m7", "dup")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("flight on 3 May", date(2026, 5, 3)),
        ("flight on May 3rd", date(2026, 5, 3)),
        ("flight on 3rd of May, 2027", date(2027, 5, 3)),
        ("dinner on 2026-05-03", date(2026, 5, 3)),
        ("5月3日去北京", date(2026, 5, 3)),
        ("2025年5月3日去北京", date(2025, 5, 3)),
        ("2月1号开会", date(2027, 2, 1)),  # long before the day it was written: next year
        ("met on 10 April", date(2026, 4, 10)),  # shortly before it: this year's, in the past
    ],
)
def test_absolute_dates_in_english_and_chinese(text: str, expected: date) -> None:
    assert dates_in(text, WRITTEN) == [expected]


def test_no_date_in_plain_text_or_impossible_days() -> None:
    assert dates_in("User likes May and the number 31", WRITTEN) == []
    assert dates_in("on 31 February", WRITTEN) == []


def _written(text: str, when: datetime) -> MemoryItem:
    item = MemoryItem.create(text, "notes")
    item.history[0]["time"] = item.latest_update_time = when.isoformat()
    return item


def test_a_day_is_over_in_the_deployments_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    # 17:00 UTC on 7 December is already the 8th in Shanghai: the flight's day is over there.
    from zoneinfo import ZoneInfo

    from memory.integration.settings import Settings

    flight = _written("User's flight to Tokyo is on 7 December", datetime(2026, 12, 1, tzinfo=UTC))
    now = datetime(2026, 12, 7, 17, 0, tzinfo=UTC)
    assert passed_date(flight, now) is None
    assert passed_date(flight, now.astimezone(ZoneInfo("Asia/Shanghai"))) == date(2026, 12, 7)
    monkeypatch.setenv("GULFSTREAM_TIMEZONE", "Asia/Shanghai")
    policy = Settings().consolidation_policy()
    assert policy.timezone == "Asia/Shanghai"


def test_only_episodic_memories_whose_date_is_over_pass() -> None:
    when = datetime(2026, 4, 20, tzinfo=UTC)
    now = datetime(2026, 5, 10, tzinfo=UTC)
    assert passed_date(_written("User's flight to Tokyo is on 3 May", when), now) == date(
        2026, 5, 3
    )
    assert passed_date(_written("User's flight to Tokyo is on 30 May", when), now) is None
    assert passed_date(_written("User was born in 1990", when), now) is None


def test_a_stale_mark_holds_until_the_text_changes() -> None:
    item = _written("User's flight to Tokyo is on 3 May", datetime(2026, 4, 20, tzinfo=UTC))
    assert not is_stale(item)
    item.history.append({"time": "2026-05-10T00:00:00+00:00", "action": "stale", "reason": ""})
    assert is_stale(item)
    item.history.append({"time": "2026-05-11T00:00:00+00:00", "action": "hit", "reason": ""})
    assert is_stale(item)
    item.update("moved", "User's flight to Tokyo is on 3 June")
    assert not is_stale(item)


@pytest.mark.slow  # a fresh interpreter
def test_a_pass_needs_no_langchain(tmp_path: Path) -> None:
    script = f"""
import sys
for name in ("langchain", "langchain_core", "langchain_openai", "langgraph", "pydantic"):
    sys.modules[name] = None  # any import of them now raises ImportError
from memory import LongTermMemory
from memory.store.factory import open_memory_manager
manager = open_memory_manager("sqlite:{tmp_path}/memory.db", "alice")
for text in ("User likes jazz", "User enjoys jazz music", "User lives in Oslo", "User has a cat"):
    manager.add(text, "notes")
report = LongTermMemory(manager, embeddings="off").consolidate()
assert len(report.merged) == 1 and report.kept == 3, report
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
