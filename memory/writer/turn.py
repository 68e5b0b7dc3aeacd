"""Turn: one finished turn of conversation, the one value that carries it to the memory writer."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memory.admission import Admission
from memory.store.branch import Lineage, Provenance, check_scope_policy
from memory.store.item import now_iso, parse_time
from memory.store.manager import validate_user_id
from memory.text.language import LANGUAGE_POLICIES
from memory.text.messages import CONTEXT_CHARS, check_turn_messages, user_side


@dataclass(frozen=True)
class Turn:
    """Who said what, where, and how its memories may be scoped. Immutable and validated.

    - `messages`: `[{role, content}]`, the user's message and the replies after it.
    - `turn_id`: stable across retries; `apply` records it, so a turn is written once.
    - `thread_id` / `checkpoint_id`: where in the conversation tree it was said ("" when the
      graph has no checkpointer); `lineage`: the checkpoints it descends from (None: no branches).
    - `scope_policy`: "auto" (the writer picks per memory), "user" or "branch".
    - `language`: "auto" (the user's language), "en" or "zh"; `writer_model`: the model that
      writes it ("" = whatever the consumer uses by default).
    - `admission`: the admission scorer's verdict (`memory.admission`): "write" now, "batch"
      with its thread's next turns, or "skip"; None when it was not scored (written at once).
    - `batch`: set only on the value `Turn.merge` makes of several turns of one thread: their
      ids in order (the last is `turn_id`); `apply` records every one of them.
    - `context`: the exchange just before the turn (`memory.text.messages.preceding_exchange`:
      a few messages, bounded in characters), which the writer reads to understand a short
      answer and is told not to take memories from.
    - `said_at`: when the user said it, ISO 8601, stored in UTC ("" = now): an imported past
      chat's turn; the writer reads the date as "today" and its history entries carry it.
    - `timezone`: the user's zone (IANA name; "" = the server's), in which the days a memory
      names ("后天", "next Friday") are resolved from when the turn was said.
    """

    user_id: str
    turn_id: str
    messages: tuple[dict[str, str], ...]
    thread_id: str = ""
    checkpoint_id: str = ""
    lineage: Lineage | None = None
    scope_policy: str = "auto"
    language: str = "auto"
    writer_model: str = ""
    enqueued_at: str = field(default_factory=now_iso)
    admission: Admission | None = None
    batch: tuple[str, ...] = ()
    context: tuple[dict[str, str], ...] = ()
    said_at: str = ""
    timezone: str = ""

    def __post_init__(self) -> None:
        validate_user_id(self.user_id)
        if not isinstance(self.turn_id, str) or not self.turn_id.strip():
            raise ValueError("turn_id must be a non-empty string")
        object.__setattr__(self, "messages", tuple(check_turn_messages(self.messages)))
        for name in ("thread_id", "checkpoint_id", "writer_model", "enqueued_at"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"Turn.{name} must be a string, got {getattr(self, name)!r}")
        if self.lineage is not None and not isinstance(self.lineage, Lineage):
            raise ValueError("Turn.lineage must be a Lineage or None")
        check_scope_policy(self.scope_policy)
        if self.language not in LANGUAGE_POLICIES:
            raise ValueError(
                f"Turn.language must be one of {', '.join(LANGUAGE_POLICIES)}, "
                f"got {self.language!r}"
            )
        if self.admission is not None and not isinstance(self.admission, Admission):
            raise ValueError("Turn.admission must be an Admission or None")
        object.__setattr__(self, "batch", tuple(self.batch))
        context = tuple(check_turn_messages(self.context)) if self.context else ()
        if sum(len(m["content"]) for m in context) > CONTEXT_CHARS:
            raise ValueError(f"Turn.context holds at most {CONTEXT_CHARS} characters")
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "said_at", _utc_time(self.said_at))
        if self.timezone:
            _check_zone(self.timezone)
        if self.batch and (
            not all(isinstance(i, str) and i for i in self.batch) or self.batch[-1] != self.turn_id
        ):
            raise ValueError("Turn.batch lists the merged turns' ids and ends with turn_id")

    @classmethod
    def of(
        cls,
        user_id: str,
        messages: Sequence[Mapping[str, str]],
        *,
        turn_id: str | None = None,
        **details: Any,
    ) -> Turn:
        """A turn with a fresh random id unless one is given (`details`: the other fields)."""
        return cls(user_id, turn_id or uuid.uuid4().hex, tuple(messages), **details)  # type: ignore[arg-type]

    @classmethod
    def merge(cls, turns: Sequence[Turn]) -> Turn:
        """One value for several turns of one thread, oldest first, for one writer run: their
        messages in order, where the last was said (its checkpoint and lineage: a branch memory
        written from the batch is seen below the last turn, which descends from the others),
        and every turn id in `batch`. One turn is returned as it is."""
        if not turns:
            raise ValueError("Turn.merge needs at least one turn")
        if len(turns) == 1:
            return turns[0]
        last = turns[-1]
        if any((t.user_id, t.thread_id) != (last.user_id, last.thread_id) for t in turns):
            raise ValueError("Turn.merge takes turns of one user and one thread")
        messages = tuple(m for t in turns for m in t.messages)
        ids = tuple(i for t in turns for i in t.turn_ids)
        # The context is what came before the first turn: the later turns are in the batch.
        return dataclasses.replace(last, messages=messages, batch=ids, context=turns[0].context)

    @property
    def turn_ids(self) -> tuple[str, ...]:
        """The ids this value stands for: its own, or those of the turns it merges."""
        return self.batch or (self.turn_id,)

    @property
    def decision(self) -> str:
        """The admission decision; a turn that was not scored is written at once."""
        return self.admission.decision if self.admission is not None else "write"

    @property
    def provenance(self) -> Provenance | None:
        """Where the turn's changes come from, recorded in items and history (None: unknown)."""
        if not self.thread_id and not self.checkpoint_id:
            return None
        return Provenance(
            self.thread_id, self.checkpoint_id, self.turn_id, len(self.turn_ids), self.said_at
        )

    @property
    def moment(self) -> datetime:
        """When the turn was said (`said_at`, else when it was queued), in the user's zone: what
        its relative days ("tomorrow", "后天") are counted from."""
        said = parse_time(self.said_at or self.enqueued_at) or datetime.now(UTC)
        return said.astimezone(ZoneInfo(self.timezone) if self.timezone else None)

    @property
    def user_text(self) -> str:
        """What the user said in this turn."""
        return "\n".join(m["content"] for m in self.messages if m["role"] == "user")

    @property
    def users_side(self) -> list[dict[str, str]]:
        """This turn's user messages with the assistant's questions they answer, the one just
        before the turn included (`memory.text.messages.user_side`): what a memory may come from."""
        asked_before = [m for m in self.context[-1:] if m["role"] == "assistant"]
        return user_side([*asked_before, *self.messages])

    @property
    def heard_from_user(self) -> str:
        """`users_side` as text: what a written memory must hold a word of (json protocol)."""
        return "\n".join(m["content"] for m in self.users_side)

    @property
    def text(self) -> str:
        """Everything said in this turn."""
        return "\n".join(m["content"] for m in self.messages)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (the journal row, the server writer's input)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["messages"] = [dict(m) for m in self.messages]
        data["lineage"] = self.lineage.as_dict() if self.lineage is not None else None
        data["admission"] = self.admission.to_dict() if self.admission is not None else None
        data["batch"] = list(self.batch)
        data["context"] = [dict(m) for m in self.context]
        for name in ("said_at", "timezone"):  # unset, a turn reads as before: an older writer
            if not data[name]:  # still takes it
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        """The inverse of `to_dict`; ValueError naming an unknown or malformed field."""
        if not isinstance(data, Mapping):
            raise ValueError("a turn must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"a turn has no field {unknown[0]!r}; fields are {sorted(known)}")
        lineage = data.get("lineage")
        if lineage is not None and (
            not isinstance(lineage, Mapping) or not isinstance(lineage.get("checkpoint_ids"), list)
        ):
            raise ValueError("Turn.lineage needs a checkpoint_ids list")
        admission = data.get("admission")
        values = {
            **data,
            "lineage": Lineage.from_dict(lineage),
            "admission": Admission.from_dict(admission) if admission is not None else None,
            "batch": tuple(data.get("batch") or ()),
            "context": tuple(data.get("context") or ()),
        }
        for name in ("user_id", "turn_id", "messages"):
            if name not in values:
                raise ValueError(f"a turn needs {name}")
        values["messages"] = tuple(values["messages"] or ())
        return cls(**values)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Turn:
        return cls.from_dict(json.loads(text))


def _check_zone(name: object) -> None:
    try:
        ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"Turn.timezone must be an IANA time zone name, got {name!r}") from exc


def _utc_time(value: object) -> str:
    """`Turn.said_at` checked and in UTC ("" stays ""); ValueError when it is no ISO 8601 time
    (one without an offset is local time)."""
    if value == "":
        return ""
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError(f'Turn.said_at must be an ISO 8601 time or "", got {value!r}')
    return parsed.astimezone(UTC).isoformat(timespec="microseconds")
