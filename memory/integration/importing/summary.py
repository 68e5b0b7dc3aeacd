"""What an import did, counted for the summary a user reads at the end."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from memory.integration.importing.collect import reason_kind
from memory.integration.importing.records import ParsedExport, Skipped


@dataclass
class ImportSummary:
    """Counts of one import run; `failures` names each turn the writer could not write."""

    format: str = ""
    conversations: int = 0
    messages: int = 0
    archived: int = 0  # newly archived messages (0 at a second import)
    turns: int = 0
    written: int = 0  # turns the writer ran on...
    unchanged: int = 0  # ... of which it found nothing new to keep
    already: int = 0  # turns written by an earlier run
    skipped_by_admission: int = 0
    changes: Counter[str] = field(default_factory=Counter)  # add, update, ... of the writer
    skipped: list[Skipped] = field(default_factory=list)  # messages left out
    skipped_conversations: list[Skipped] = field(default_factory=list)
    failures: list[Skipped] = field(default_factory=list)
    stopped: str = ""  # why the run stopped before the end ("" when it finished)

    @classmethod
    def of(cls, export: ParsedExport) -> ImportSummary:
        return cls(
            export.format, len(export.conversations), export.message_count,
            skipped=list(export.skipped_messages),
            skipped_conversations=list(export.skipped_conversations),
        )  # fmt: skip

    @property
    def complete(self) -> bool:
        """Every turn written, skipped or already there, and no failure."""
        return not self.stopped and not self.failures

    def describe(self) -> str:
        """The summary, a few lines of text."""
        made = ", ".join(f"{n} {op}" for op, n in sorted(self.changes.items())) or "none"
        lines = [
            f"format: {self.format}",
            f"conversations: {self.conversations} imported"
            + (
                f", {len(self.skipped_conversations)} skipped" if self.skipped_conversations else ""
            ),
            f"messages: {self.messages} ({self.archived} newly archived)",
            f"turns: {self.turns} ({self.written} written, {self.unchanged} of them with nothing "
            f"new; {self.already} written before; {self.skipped_by_admission} skipped by "
            "admission)",
            f"memory changes: {made}",
        ]
        if self.skipped:
            why = Counter(reason_kind(s.reason) for s in self.skipped)
            lines.append(
                "messages left out: " + ", ".join(f"{n} {r}" for r, n in why.most_common())
            )
        lines += [f"skipped {s.where}: {s.reason}" for s in self.skipped_conversations]
        lines.append(f"failures: {len(self.failures)}")
        lines += [f"  {f.where}: {f.reason}" for f in self.failures[:10]]
        if len(self.failures) > 10:
            lines.append(f"  … and {len(self.failures) - 10} more")
        if self.stopped:
            lines.append(f"stopped: {self.stopped}; run the same command again to go on")
        return "\n".join(lines)
