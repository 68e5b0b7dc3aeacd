"""ConsolidationReport: what one consolidation pass did, or why it refused."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ConsolidationReport:
    """`merged` maps each survivor to the ids merged into it; `staled` and `archived` list ids;
    `kept` counts the live memories after the pass. `refused` says why nothing was changed;
    `skipped` lists the steps left out because a memory changed since the pass planned them."""

    user_id: str
    pass_id: str = ""
    merged: dict[str, list[str]] = field(default_factory=dict)
    staled: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    kept: int = 0
    rewritten: int = 0  # merged texts the model rewrote (the rest kept the most complete text)
    skipped: list[str] = field(default_factory=list)
    refused: str = ""
    snapshot: str = ""
    resumed: bool = False  # this run finished a pass an earlier, interrupted run planned
    topics_summarised: int = 0  # topic summaries written afresh after the pass (memory.topics)
    duration_seconds: float = 0.0

    @property
    def removed(self) -> int:
        """Memories the pass took out of retrieval (merged away or archived)."""
        return sum(len(ids) for ids in self.merged.values()) + len(self.archived)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "removed": self.removed}

    def summary(self) -> str:
        """One line for a person: what changed, or why nothing did."""
        if self.refused:
            return f"consolidation refused: {self.refused}"
        return (
            f"consolidation: merged {self.removed - len(self.archived)} memories into "
            f"{len(self.merged)}, marked {len(self.staled)} stale, archived "
            f"{len(self.archived)}, {self.kept} kept"
            + (f", {len(self.skipped)} step(s) skipped (changed meanwhile)" if self.skipped else "")
        )
