"""A run's time: the same conversation with `now` set to three different days gives three right
answers. Said on day D in Shanghai, "我后天有离散数学考试。" is kept as D+2's date (offline model,
real YAML files); asked about "明天" on D+1, the exam comes first and is announced as tomorrow's;
asked on D+3, it is no longer coming up."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.settings import use_settings
from memory.registry import registry

pytestmark = pytest.mark.slow

SHANGHAI = "Asia/Shanghai"
OTHER_PLANS = ["我下周三要去北京出差。", "I have a job interview at Acme on December 15.",
               "My sister is visiting next weekend."]  # fmt: skip


def _chinese_date(day: date) -> str:
    return f"{day.year}年{day.month}月{day.day}日（周{'一二三四五六日'[day.weekday()]}）"


def _at(day: date, hour: int) -> str:
    return f"{day.isoformat()}T{hour:02d}:00:00+08:00"


@pytest.mark.parametrize("said_on", [date(2026, 12, 7), date(2026, 12, 10), date(2027, 1, 30)])
async def test_the_exam_is_on_the_day_it_was_said_for(tmp_path: Path, said_on: date) -> None:
    exam_day = said_on + timedelta(days=2)
    with use_settings(
        memory_backend=f"yaml:{tmp_path / 'memory'}", data_dir=str(tmp_path / "data"),
        embeddings="off", snapshot_seconds=None,
    ):  # fmt: skip
        # 23:30 in Shanghai is still the day before in UTC: the day is the user's.
        told = Context(now=_at(said_on, 23).replace(":00:00", ":30:00"), timezone=SHANGHAI)
        async with LocalSession(told, tmp_path / "data") as session:
            for plan in OTHER_PLANS:
                await session.say("plans", plan)
            await session.say("plans", "我后天有离散数学考试。")
            await session.wait_for_writes(timeout_seconds=60)
            stored = [item.description for item in session.manager.list_items().values()]
        exam = [text for text in stored if "离散数学" in text]
        assert exam == [f"用户{_chinese_date(exam_day)}有离散数学考试"]

        evening_before = Context(now=_at(said_on + timedelta(days=1), 20), timezone=SHANGHAI)
        async with LocalSession(evening_before, tmp_path / "data") as session:
            reply = await session.say("weather", "帮我查一下明天的天气")
        assert "离散数学" in reply.related_memories[0]["description"]
        assert f"({exam_day.isoformat()}, 明天)" in reply.text  # the coming-up line, quoted

        after = Context(now=_at(exam_day + timedelta(days=1), 9), timezone=SHANGHAI)
        async with LocalSession(after, tmp_path / "data") as session:
            reply = await session.say("later", "你好，最近怎么样？")
        assert exam_day.isoformat() + "," not in reply.text  # passed: not coming up any more
    registry.clear()
