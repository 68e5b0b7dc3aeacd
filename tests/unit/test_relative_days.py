"""Relative days resolved by the library, English and Chinese: "后天" said on Monday 7 December 2026
is Wednesday 9 December; each form a user writes, one test row each."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from memory.text.days import anchor_days, day_mentions, named_days
from memory.text.moments import moment_named, time_of_day

MONDAY = date(2026, 12, 7)  # a Monday

ONE_DAY = [
    ("I have a dentist appointment today.", "2026-12-07"),
    ("Remind me to call my mom tomorrow.", "2026-12-08"),
    ("We met yesterday.", "2026-12-06"),
    ("The exam is the day after tomorrow.", "2026-12-09"),
    ("It was the day before yesterday.", "2026-12-05"),
    ("The party is on Friday.", "2026-12-11"),
    ("This Wednesday I fly.", "2026-12-09"),
    ("next Tuesday works", "2026-12-15"),
    ("last Sunday was fun", "2026-12-06"),
    ("Rent is due on the 15th.", "2026-12-15"),
    ("Rent was due on the 3rd.", "2027-01-03"),  # the 3rd has passed this month: next month's
    ("I have a job interview at Acme on December 15.", "2026-12-15"),
    ("She arrives 2 January.", "2027-01-02"),
    ("We married on May 2, 2019.", "2019-05-02"),
    ("The launch is 2027-03-01.", "2027-03-01"),
    ("in 3 days", "2026-12-10"),
    ("我今天加班。", "2026-12-07"),
    ("我明天去上海。", "2026-12-08"),
    ("我后天有离散数学考试。", "2026-12-09"),
    ("大后天放假", "2026-12-10"),
    ("昨天下雨了", "2026-12-06"),
    ("前天见了老王", "2026-12-05"),
    ("我下周三要去北京出差。", "2026-12-16"),
    ("上周五交了报告", "2026-12-04"),
    ("这周四开会", "2026-12-10"),
    ("星期天去爬山", "2026-12-13"),
    ("礼拜六休息", "2026-12-12"),
    ("15号交房租", "2026-12-15"),
    ("12月25日聚会", "2026-12-25"),
    ("2027年1月3日回国", "2027-01-03"),
    ("三天后出发", "2026-12-10"),
]


@pytest.mark.parametrize(("text", "expected"), ONE_DAY)
def test_each_form_names_its_day(text: str, expected: str) -> None:
    mentions = day_mentions(text, MONDAY)
    assert [m.first.isoformat() for m in mentions] == [expected]
    assert mentions[0].one_day


SPANS = [
    ("this weekend", "2026-12-12", "2026-12-13"),
    ("这周末去爬山", "2026-12-12", "2026-12-13"),
    ("next week is busy", "2026-12-14", "2026-12-20"),
    ("下周很忙", "2026-12-14", "2026-12-20"),
    ("next month", "2027-01-01", "2027-01-31"),
    ("下个月搬家", "2027-01-01", "2027-01-31"),
    ("I went to Paris last year", "2025-01-01", "2025-12-31"),
]


@pytest.mark.parametrize(("text", "first", "last"), SPANS)
def test_weeks_weekends_and_months_are_spans(text: str, first: str, last: str) -> None:
    (mention,) = day_mentions(text, MONDAY)
    assert (mention.first.isoformat(), mention.last.isoformat()) == (first, last)


def test_habits_and_plain_words_name_no_day() -> None:
    habits = ("I go running on Saturdays.", "every Friday", "每周六去游泳", "我喜欢周末")
    for text in (*habits, "I sat down", "I may go"):
        assert [m for m in day_mentions(text, MONDAY) if m.one_day] == [], text


def test_the_day_is_the_speakers_day_in_their_zone() -> None:
    # 20:00 on Monday in Shanghai is still Monday noon in UTC, but 02:00 on Tuesday in Shanghai
    # is Monday evening in UTC: "tomorrow" is Wednesday for the user.
    late = datetime(2026, 12, 8, 2, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert day_mentions("tomorrow", late)[0].first == date(2026, 12, 9)


def test_anchoring_replaces_relative_days_and_keeps_dates() -> None:
    exam = anchor_days("我后天有离散数学考试。", MONDAY)
    assert exam == "我2026年12月9日（周三）有离散数学考试。"
    assert anchor_days("Remind me to call my mom tomorrow.", MONDAY) == (
        "Remind me to call my mom on Tuesday 2026-12-08."
    )
    assert anchor_days("Dinner on Friday at 8pm", MONDAY) == "Dinner on Friday 2026-12-11 at 8pm"
    assert anchor_days("I went to Paris last year", MONDAY) == "I went to Paris in 2025"
    kept = "I have a job interview at Acme on December 15."
    assert anchor_days(kept, MONDAY) == kept
    # Anchored text names the same day read a week later: that is the point.
    later = date(2026, 12, 14)
    assert named_days(anchor_days("我后天有考试", MONDAY), later) == [date(2026, 12, 9)]
    assert named_days(anchor_days("exam the day after tomorrow", MONDAY), later) == [
        date(2026, 12, 9)
    ]
    # An update of an anchored memory a week later keeps its day: the weekday beside the date is
    # that date's, not next week's.
    for said in ("我后天有考试", "下周三出差", "exam the day after tomorrow", "on Friday at 8"):
        once = anchor_days(said, MONDAY)
        assert anchor_days(once, later) == once


def test_an_anchored_week_or_weekend_stays_a_span() -> None:
    # A plan for "next week" names no one day: a question about its Monday is not about it.
    for said in ("下周出差", "这周末爬山", "busy next week", "hiking this weekend"):
        once = anchor_days(said, MONDAY)
        assert named_days(once, MONDAY) == [], once
        assert not day_mentions(once, MONDAY)[0].one_day
        assert anchor_days(once, MONDAY) == once


TIMES = [
    ("call mom at 8", (8, 0)),
    ("dinner at 7:30pm", (19, 30)),
    ("meeting at 14:00", (14, 0)),
    ("pick up at 5", (17, 0)),
    ("run in the morning", (9, 0)),
    ("明天下午3点开会", (15, 0)),
    ("早上8点半出发", (8, 30)),
    ("晚上7点吃饭", (19, 0)),
]


@pytest.mark.parametrize(("text", "expected"), TIMES)
def test_times_of_day(text: str, expected: tuple[int, int]) -> None:
    assert time_of_day(text) == expected


MOMENTS = [
    ("in 10 minutes", "2026-12-07T20:10:00+08:00"),
    ("半小时后", "2026-12-07T20:30:00+08:00"),
    ("tomorrow at 8pm", "2026-12-08T20:00:00+08:00"),
    ("Friday at 8", "2026-12-11T08:00:00+08:00"),
    ("周五早上8点", "2026-12-11T08:00:00+08:00"),
    ("at 7:30", "2026-12-08T07:30:00+08:00"),  # 7:30 has passed today: tomorrow's
    ("明天", "2026-12-08T09:00:00+08:00"),  # a day alone: in the morning
]


@pytest.mark.parametrize(("text", "expected"), MOMENTS)
def test_the_moment_a_reminder_names(text: str, expected: str) -> None:
    evening = datetime(2026, 12, 7, 20, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    found = moment_named(text, evening)
    assert found is not None and found.isoformat() == expected
    assert moment_named("call mom", evening) is None
