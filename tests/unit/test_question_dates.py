"""The period a question names, resolved against the time it is asked."""

from __future__ import annotations

from datetime import datetime

import pytest

from memory.archive.dates import question_period

ASKED = datetime(2026, 12, 1, 12, 0).astimezone()


def days(question: str) -> tuple[str, str] | None:
    period = question_period(question, ASKED)
    if period is None:
        return None
    first, end = (datetime.fromtimestamp(t).strftime("%Y-%m-%d") for t in period)
    return first, end  # the end is exclusive: the next day


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I say last May?", ("2026-05-01", "2026-06-01")),
        ("What did we talk about in December?", ("2026-12-01", "2027-01-01")),
        ("And last December?", ("2025-12-01", "2026-01-01")),
        ("On May 2nd I went to a museum: which one?", ("2026-05-02", "2026-05-03")),
        ("What happened on 4 January 2024?", ("2024-01-04", "2024-01-05")),
        ("What did I do yesterday?", ("2026-11-30", "2026-12-01")),
        ("去年五月我们聊了什么？", ("2025-05-01", "2025-06-01")),
        ("5月2日我去了哪里？", ("2026-05-02", "2026-05-03")),
        ("上周我说了什么", ("2026-11-23", "2026-11-30")),
        ("I may go hiking, where did you suggest?", None),
        ("Where does my sister work?", None),
    ],
)
def test_the_period_a_question_names(question: str, expected: tuple[str, str] | None) -> None:
    assert days(question) == expected
