"""Admission: a rule-based score, without a model, deciding whether a turn is written now, batched
or skipped before the memory writer ever sees it (rules in `memory.admission.rules`). Imports
memory.text only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from memory.admission.rules import RULES
from memory.admission.text import Message, Rule

Decision = Literal["write", "batch", "skip"]
DECISIONS: tuple[Decision, ...] = ("write", "batch", "skip")
# A turn is admitted when its score reaches this: one strong sign of something lasting (+3) that
# nothing speaks against, or two weaker ones.
ADMIT_SCORE = 2.0
MAX_CHARS = 4_000  # the rules read the start of a long message; enough to see what it is about


@dataclass(frozen=True)
class Admission:
    """What the scorer decided for one turn, and why.

    - `score`: the sum of the weights of the rules that fired;
    - `reasons`: those rules' names, strongest first (`memory.admission.rules.RULES`);
    - `decision`: "write" (an explicit remember, forget or correction, or an admitted task
      set-up: written at once, with whatever of the thread waits in a batch), "batch" (worth
      keeping: written with the next batch of its thread) or "skip" (nothing worth keeping:
      never sent to the memory writer).
    """

    score: float
    decision: Decision
    reasons: tuple[str, ...]

    @property
    def admitted(self) -> bool:
        return self.decision != "skip"

    def describe(self) -> str:
        """One line for logs and the editor: 'skip (score -8: small_talk, short)'."""
        because = ", ".join(self.reasons) or "no rule fired"
        return f"{self.decision} (score {self.score:g}: {because})"

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "decision": self.decision, "reasons": list(self.reasons)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Admission:
        """The inverse of `to_dict`; ValueError naming what is malformed."""
        if not isinstance(data, Mapping):
            raise ValueError("an admission must be an object with score, decision and reasons")
        decision, score, reasons = data.get("decision"), data.get("score"), data.get("reasons")
        if decision not in DECISIONS:
            raise ValueError(f"admission decision must be one of {DECISIONS}, not {decision!r}")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValueError(f"admission score must be a number, not {score!r}")
        if not isinstance(reasons, list | tuple) or not all(isinstance(r, str) for r in reasons):
            raise ValueError("admission reasons must be a list of rule names")
        return cls(float(score), decision, tuple(reasons))


def score_turn(
    text: str,
    *,
    memories: Iterable[str] = (),
    after: str = "",
    admit_score: float = ADMIT_SCORE,
    rules: tuple[Rule, ...] = RULES,
) -> Admission:
    """Score what the user said in one turn (`text`, their message) and decide.

    `memories`: descriptions already stored that may repeat it (e.g. those retrieved for this
    turn); a message that only repeats one of them is skipped. `after`: the assistant's message
    it replies to; an answer to a question the assistant asked is kept unless it is plain small
    talk. No model, no I/O: well under a millisecond for a chat message.
    """
    if not isinstance(text, str):
        raise ValueError(f"score_turn needs the user's message as a string, got {type(text)!r}")
    if not isinstance(after, str):
        raise ValueError(f"score_turn's after must be the assistant's message, got {type(after)!r}")
    memories = tuple(m for m in memories if isinstance(m, str))
    message = Message.of(text[:MAX_CHARS], memories, after)
    fired = [rule for rule in rules if rule.test(message)]
    score = float(sum(rule.weight for rule in fired))
    fired.sort(key=lambda rule: -abs(rule.weight))
    reasons = tuple(rule.name for rule in fired)
    decision: Decision
    if any(rule.forces for rule in fired):
        decision = "write"
    elif score >= admit_score:
        decision = "write" if any(rule.urgent for rule in fired) else "batch"
    else:
        decision = "skip"
    return Admission(score, decision, reasons)


__all__ = ["ADMIT_SCORE", "DECISIONS", "RULES", "Admission", "Decision", "Rule", "score_turn"]
