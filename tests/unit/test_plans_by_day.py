"""Plans by day: a question naming a day, relative or not, brings that day's plan first among forty
plans on other days; what is coming up is the next days' plans, soonest first, nothing past and
nothing beyond the window; a run's time and zone are checked where its context is read."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from graph.context import Context
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.text.days import anchor_days
from memory.writer.turn import Turn

SHANGHAI = ZoneInfo("Asia/Shanghai")
TUESDAY_EVENING = datetime(2026, 12, 8, 20, 0, tzinfo=SHANGHAI)
ERRANDS = ["dentist appointment", "dinner with Sam", "yoga class", "car service", "haircut",
           "team offsite", "piano lesson", "call with the bank", "parents' visit",
           "book club"]  # fmt: skip


@pytest.fixture(scope="module", params=["off", "default"])
def memory(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Any:
    """Forty-one plans said the same way two days ahead, each kept with its own day; BM25 alone
    and fused with the offline embedding."""
    folder = tmp_path_factory.mktemp("plans")
    embeddings = {} if request.param == "default" else {"embeddings": "off"}
    memory = LongTermMemory(YamlMemoryManager(folder, "alice"), **embeddings)
    # The exam is the oldest: the newest memories are not what a question about a day wants.
    memory.manager.add(anchor_days("我后天有离散数学考试", date(2026, 12, 7)), "瞬间")
    start = date(2026, 11, 20)
    for n in range(41):
        said = start + timedelta(days=n)
        if said == date(2026, 12, 7):
            continue
        if n % 2:
            text = anchor_days(f"I have a {ERRANDS[n % 10]} the day after tomorrow", said)
        else:
            text = anchor_days(f"我后天有{['体检', '聚餐', '面试', '搬家', '开会'][n % 5]}", said)
        memory.manager.add(text, "moments")
    if request.param == "default":
        memory.retrievers.catch_up(max_missing=100)
    return memory


@pytest.mark.parametrize(
    "question",
    ["帮我查一下明天的天气", "明天有什么安排？", "What is on Wednesday?", "what do I have tomorrow",
     "周三我要做什么", "12月9号忙吗", "Am I free on December 9?", "What's happening on the 9th?"],
)  # fmt: skip
def test_the_day_asked_about_comes_first(memory: LongTermMemory, question: str) -> None:
    found = memory.get_related_memory_from(question, "mechanical", 5, now=TUESDAY_EVENING)
    assert "离散数学" in found[0]["description"], [m["description"] for m in found]


def test_coming_up_is_the_next_days_soonest_first(memory: LongTermMemory) -> None:
    today = TUESDAY_EVENING.date()
    plans = memory.coming_up(TUESDAY_EVENING, days=7, limit=50)
    days = [date.fromisoformat(plan["day"]) for plan in plans]
    assert days == sorted(days) and days[0] == today
    assert all(today <= day <= today + timedelta(days=7) for day in days)  # nothing past or beyond
    assert len(days) == 8  # one plan a day, the exam's day included
    assert "离散数学" in plans[1]["description"]
    assert len(memory.coming_up(TUESDAY_EVENING, days=7, limit=3)) == 3
    # A week later the exam has passed: no longer coming up, still a memory.
    later = memory.coming_up(TUESDAY_EVENING + timedelta(days=7), days=7, limit=50)
    assert not any("离散数学" in plan["description"] for plan in later)


def test_a_runs_time_is_in_the_users_zone() -> None:
    context = Context(now="2026-12-07T18:30:00+00:00", timezone="Asia/Shanghai")
    assert context.moment().isoformat() == "2026-12-08T02:30:00+08:00"
    assert Context(timezone="Asia/Shanghai").moment().utcoffset() == timedelta(hours=8)
    with pytest.raises(ValueError, match="timezone"):
        Context(timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="now"):
        Context(now="next tuesday")


def test_the_deployments_zone_is_the_users_when_a_run_names_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory.integration.time_of_run import deployment_timezone

    monkeypatch.setenv("GULFSTREAM_TIMEZONE", "America/New_York")
    unnamed = Context(now="2026-12-07T18:30:00+00:00")
    named = Context(now="2026-12-07T18:30:00+00:00", timezone="Asia/Shanghai")
    assert unnamed.moment().isoformat() == "2026-12-07T13:30:00-05:00"
    assert named.moment().isoformat() == "2026-12-08T02:30:00+08:00"  # the run's own wins
    assert deployment_timezone() == "America/New_York"  # the archive's and consolidation's
    monkeypatch.setenv("GULFSTREAM_TIMEZONE", "Mars/Olympus")
    with pytest.raises(ValueError, match="IANA"):
        Context()


def test_a_turn_keeps_its_zone_through_the_journal() -> None:
    turn = Turn.of("alice", [{"role": "user", "content": "我后天有考试"}],
                   said_at="2026-12-07T18:30:00+00:00", timezone="Asia/Shanghai")  # fmt: skip
    again = Turn.from_json(turn.to_json())
    assert again.timezone == "Asia/Shanghai"
    assert again.moment.date() == date(2026, 12, 8)  # Tuesday already in Shanghai
    with pytest.raises(ValueError, match="timezone"):
        Turn.of("alice", [{"role": "user", "content": "hi"}], timezone="Nowhere/Else")
    assert "timezone" not in Turn.of("alice", [{"role": "user", "content": "hi"}]).to_dict()


def test_the_chat_prompt_says_the_users_time_and_what_is_coming_up() -> None:
    from graph.prompting import build_system_prompt

    context = Context(now="2026-12-08T12:30:00+00:00", timezone="Asia/Shanghai", language="en")
    exam = {"id": "m1", "description": "Exam on Wednesday 2026-12-09", "theme": "moments",
            "day": "2026-12-09"}  # fmt: skip
    past = {"id": "m2", "description": "Dentist on Monday 2026-12-07", "day": "2026-12-07"}
    prompt = build_system_prompt(context, [exam], coming_up=[exam, past])
    assert "Tuesday 2026-12-08 20:30 (UTC+0800)" in prompt  # not the server's UTC+0000
    assert "<coming_up>\n- (2026-12-09, tomorrow) Exam on Wednesday 2026-12-09\n</coming_up>" in (
        prompt
    )
    assert prompt.count("Exam on Wednesday") == 1  # shown once, as coming up
    assert "Dentist" not in prompt  # its day passed: no longer coming up
