"""Model calls and tokens by purpose (chat, retrieval, writer, summary), per run and per user
(kept in the write trace's file: `memory.writer.trace.UsageLedger`)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

PURPOSES = ("chat", "retrieval", "writer", "summary")


@dataclass
class Usage:
    """Model calls and their tokens (as the provider reported them, else estimated)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        names = ("calls", "input_tokens", "output_tokens")
        return cls(*(int(data.get(name) or 0) for name in names))


ByPurpose = dict[str, Usage]


def add_up(*parts: Mapping[str, Usage]) -> ByPurpose:
    """The sum, purpose by purpose."""
    total: ByPurpose = {}
    for part in parts:
        for purpose, usage in part.items():
            total[purpose] = total.get(purpose, Usage()) + usage
    return total


def as_dicts(usage: Mapping[str, Usage]) -> dict[str, dict[str, int]]:
    """`{purpose: {calls, input_tokens, output_tokens}}`, for state and JSON."""
    return {purpose: value.to_dict() for purpose, value in usage.items()}


def from_dicts(data: Mapping[str, Mapping[str, Any]] | None) -> ByPurpose:
    return {purpose: Usage.from_dict(value) for purpose, value in (data or {}).items()}


def describe(usage: Mapping[str, Usage]) -> str:
    """One line: 'chat 1 call (812 in / 40 out tokens), writer 2 calls (…)'."""
    parts = [
        f"{purpose} {u.calls} call{'s' if u.calls != 1 else ''} "
        f"({u.input_tokens} in / {u.output_tokens} out tokens)"
        for purpose in sorted(usage, key=lambda p: PURPOSES.index(p) if p in PURPOSES else 99)
        if (u := usage[purpose]).calls
    ]
    return ", ".join(parts) or "no model calls"


class UsageMeter:
    """What one run's model calls cost, by purpose; safe to record into from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: ByPurpose = {}

    def record(self, purpose: str, input_tokens: int, output_tokens: int) -> None:
        if purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {', '.join(PURPOSES)}, not {purpose!r}")
        with self._lock:
            self._usage[purpose] = self._usage.get(purpose, Usage()) + Usage(
                1, max(0, int(input_tokens)), max(0, int(output_tokens))
            )

    def by_purpose(self) -> ByPurpose:
        with self._lock:
            return {purpose: Usage(**asdict(u)) for purpose, u in self._usage.items()}


def added_cost(
    cost: Mapping[str, Mapping[str, int]], meter: UsageMeter
) -> dict[str, dict[str, int]]:
    """A run's `cost` (as the state keeps it) with what `meter` counted since, as dicts again."""
    return as_dicts(add_up(from_dicts(cost), meter.by_purpose()))
