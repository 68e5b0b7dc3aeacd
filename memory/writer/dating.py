"""The days a written memory names, fixed from when its turn was said: "我后天有考试" said on Monday
7 December is kept as "我2026年12月9日（周三）有考试", whichever model wrote it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memory.store.document import Change
from memory.text.days import anchor_days

# The operations whose text the writer wrote this turn.
_WRITTEN = ("add", "update", "merge")


def anchored(changes: Sequence[Change], said: datetime) -> list[Change]:
    """`changes` with every relative day in the text they write resolved against `said` (the
    turn's moment in the user's zone): a week later "后天" would mean another day."""
    fixed = []
    for change in changes:
        if change.op in _WRITTEN and change.description:
            text = anchor_days(change.description, said)
            if text != change.description:
                change = replace(change, description=text)
        fixed.append(change)
    return fixed
