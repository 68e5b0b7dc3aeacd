"""The core context block: the persona, what is known about the human, each thread's goal."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memory.prompts.writer import DEFAULT_SECTIONS
from memory.store.item import now_iso

if TYPE_CHECKING:
    from memory.store.item import MemoryItem

CORE_CONTEXT_KEYS = ("persona", "human", "goal")
MAX_CORE_CONTEXT_CHARS = 4000
HUMAN_SEED_CHARS = 600
# What `human` lists first when the caller names no profile sections: the library's default
# sections (memory/prompts/writer.py); the app passes its own (prompts/persona.py).
IDENTITY_SECTIONS = ("identity", "身份")
# What `human` never lists: memories of the library's sections of these kinds (an app's own are
# passed by the writer, who knows them).
NOT_ABOUT_THE_USER = frozenset(
    section.name
    for sections in DEFAULT_SECTIONS.values()
    for section in sections
    if section.kind in ("event", "task", "instruction")
)
GOAL_SEED_CHARS = 200
# Stored flat (every backend keeps a str -> str mapping): a thread's goal under "goal@<thread>",
# and who wrote `human` last: "auto" (the writer's seeding) or "user" (a hand edit pins it).
GOAL_PREFIX = "goal@"
HUMAN_SOURCE = "human_source"
HUMAN_SOURCES = ("auto", "user")
LEGACY_GOAL = "goal"  # the old user-wide goal: kept as stored, never shown in any thread
# A thread kept off the record, under "private@<thread>" ("1"): its id only, never its text, so
# that the editor and MCP can tell it from the others.
PRIVATE_PREFIX = "private@"

StoredChanges = Mapping[str, Any] | Callable[[Mapping[str, str]], Mapping[str, Any]]


def goal_key(thread_id: str) -> str:
    """The stored key of one thread's goal; ValueError for an empty thread id."""
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise ValueError("thread_id must be a non-empty string to set or seed a goal")
    return GOAL_PREFIX + thread_id


def _stored_key(key: str) -> bool:
    return key in ("persona", "human", HUMAN_SOURCE, LEGACY_GOAL, "updated_at") or any(
        key.startswith(prefix) and len(key) > len(prefix)
        for prefix in (GOAL_PREFIX, PRIVATE_PREFIX)
    )


def check_part(value: object, name: str) -> str:
    """Return the text stripped, or raise ValueError naming the part."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    text = value.strip()
    if len(text) > MAX_CORE_CONTEXT_CHARS:
        raise ValueError(f"{name} is {len(text)} characters; the limit is {MAX_CORE_CONTEXT_CHARS}")
    return text


def merge(current: Mapping[str, str], changes: Mapping[str, Any]) -> dict[str, str]:
    """The stored block with `changes` applied and `updated_at` set.

    `changes` may name persona, human, human_source and goal@<thread id>; anything else is a
    ValueError (so a typo never lands in the store).
    """
    merged = {key: str(value) for key, value in current.items() if _stored_key(key)}
    for key, value in changes.items():
        if key == HUMAN_SOURCE:
            if value not in HUMAN_SOURCES:
                raise ValueError(f"{HUMAN_SOURCE} must be 'auto' or 'user', not {value!r}")
            merged[key] = str(value)
        elif key in ("persona", "human") or (key.startswith(GOAL_PREFIX) and key != GOAL_PREFIX):
            merged[key] = check_part(value, key)
        elif key.startswith(PRIVATE_PREFIX) and key != PRIVATE_PREFIX:
            merged[key] = "1"
        else:
            raise ValueError(
                f"core context has no part {key!r}; use persona, human or a thread's goal"
            )
    merged["updated_at"] = now_iso()
    return merged


def resolve_changes(current: Mapping[str, str], changes: StoredChanges) -> dict[str, Any]:
    """`changes` as a mapping: a callable is asked with the block as read under the write lock."""
    return dict(changes(current) if callable(changes) else changes)


def read_stored(raw: Any, repaired: list[str] | None = None) -> dict[str, str]:
    """A stored block as a dict of text; anything else is dropped (and noted in `repaired`)."""
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        if repaired is not None:
            repaired.append("core_context was not a mapping; dropped")
        return {}
    return {
        str(key): str(value)
        for key, value in raw.items()
        if isinstance(key, str) and _stored_key(key) and value is not None
    }


def view(stored: Mapping[str, str], thread_id: str | None) -> dict[str, str]:
    """What a reader sees: persona, human, that thread's goal ("" without one) and updated_at,
    and `private` "1" when that thread is off the record; `{}` while nothing is stored."""
    if not stored:
        return {}
    goal = stored.get(GOAL_PREFIX + thread_id, "") if thread_id else ""
    shown = {
        "persona": stored.get("persona", ""),
        "human": stored.get("human", ""),
        "goal": goal,
        "updated_at": stored.get("updated_at", ""),
    }
    if thread_id and PRIVATE_PREFIX + thread_id in stored:
        shown["private"] = "1"  # the thread is off the record
    return shown


def private_threads(stored: Mapping[str, str]) -> list[str]:
    """The threads kept off the record, by id."""
    return sorted(key[len(PRIVATE_PREFIX) :] for key in stored if key.startswith(PRIVATE_PREFIX))


def seed_changes(
    current: Mapping[str, str],
    *,
    persona: str | None = None,
    human: str | None = None,
    thread_id: str | None = None,
    goal: str | None = None,
) -> dict[str, str]:
    """What the writer's seeding may change in `current` (read under the write lock):
    the persona once (a cleared one stays cleared), `human` when it differs and nobody edited it
    by hand, and the thread's goal when the thread has none. `{}` when nothing changes."""
    changes: dict[str, str] = {}
    if persona is not None and "persona" not in current:
        changes["persona"] = persona
    if (
        human is not None
        and current.get(HUMAN_SOURCE) != "user"
        and current.get("human", "") != human.strip()
    ):
        changes["human"], changes[HUMAN_SOURCE] = human, "auto"
    if goal is not None and thread_id and goal_key(thread_id) not in current:
        changes[goal_key(thread_id)] = goal
    return changes


def hand_edit(
    persona: str | None, human: str | None, goal: str | None, thread_id: str | None
) -> dict[str, str]:
    """The stored changes of a hand edit (None leaves a part as it is). Setting `human` pins it:
    the writer no longer refreshes it. A goal belongs to one thread and needs its id."""
    changes: dict[str, str] = {}
    if persona is not None:
        changes["persona"] = persona
    if human is not None:
        changes["human"], changes[HUMAN_SOURCE] = human, "user"
    if goal is not None:
        if thread_id is None:
            raise ValueError("goal needs thread_id: each conversation has its own goal")
        changes[goal_key(thread_id)] = goal
    return changes


def truncate(text: str, limit: int) -> str:
    """`text` on one line, cut at `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def user_facts(
    items: Mapping[str, MemoryItem],
    profile_sections: Sequence[str] = IDENTITY_SECTIONS,
    left_out: Collection[str] = NOT_ABOUT_THE_USER,
) -> list[str]:
    """The live user-scope memories of `items` (live, oldest first) that say who the user is or
    what they like: profile sections first, and none of the sections `left_out` (what happened,
    what is to be done, how to answer them). What `human` is made of."""
    users = [item for item in items.values() if item.scope == "user" and item.theme not in left_out]
    users.sort(key=lambda item: item.theme not in profile_sections)  # stable: order kept
    return [item.description for item in users]


def human_summary(facts: Sequence[str], limit: int = HUMAN_SEED_CHARS) -> str:
    """`human` from `user_facts`: whole facts joined with "; " while they fit in `limit`
    characters (the first one cut with an ellipsis when it alone is longer)."""
    kept: list[str] = []
    used = 0
    for fact in (" ".join(f.split()) for f in facts):
        cost = len(fact) + (2 if kept else 0)
        if used + cost > limit:
            break
        kept.append(fact)
        used += cost
    if not kept and facts:
        return truncate(facts[0], limit)
    return "; ".join(kept)


def thread_task(items: Mapping[str, MemoryItem], thread_id: str) -> str | None:
    """The thread's goal as the writer understood it: its oldest live branch memory (a task or
    plan of this conversation), None when it has none. Never the thread's first message, which
    is as often "Hi! My name is Ada" as a goal. `items` are the live ones, oldest first."""
    if not thread_id:
        return None
    for item in items.values():  # live, oldest first
        if item.scope == "branch" and item.origin.get("thread_id") == thread_id:
            return item.description
    return None
