"""MemoryContext: what the caller of one run may choose of its memory (user, models, retrieval,
language, scope); an app's run context extends it with its own fields."""

from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from typing import Annotated, Any

from memory.integration.settings import ENV_PREFIX, Settings
from memory.integration.time_of_run import check_now, check_timezone, run_moment
from memory.retrieval.modes import RetrievalMode
from memory.store.branch import SCOPE_POLICIES
from memory.text.language import LANGUAGE_POLICIES, resolve_language
from memory.text.moments import moment_named

DEFAULT_MODEL = "openai/gpt-4o-mini"

MAX_RETRIEVAL_LIMIT = 100
# Deployment settings a caller might try to send: refused by name, never applied.
DEPLOYMENT_SETTINGS = frozenset(f.name for f in fields(Settings))


@dataclass(kw_only=True, init=False)
class MemoryContext:
    """The memory side of one run's settings, editable in Studio's assistant settings or passed as
    `context={...}`. A field left out takes `GULFSTREAM_<FIELD>` from the server's environment
    when set, else its default. Where memories live and how they are written are the
    deployment's choice (memory/integration/settings.py): a run naming one of those is refused.
    An app subclasses it (`@dataclass(kw_only=True, init=False)`) to add fields of its own; each
    added field must be a string.
    """

    user_id: str = field(
        default="default",
        metadata={
            "description": "Whose memories to read and write when the server has no custom auth. "
            "With custom auth the authenticated user is used instead and this is ignored."
        },
    )
    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default=DEFAULT_MODEL,
        metadata={
            "description": "The chat model, as provider/model; a model named here needs its "
            "LangChain package and key. Only the default, with neither OPENAI_API_KEY nor "
            "OPENAI_BASE_URL, is answered by an offline rule-based model."
        },
    )
    writer_model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="",
        metadata={"description": "The model of the background memory writer; empty = `model`."},
    )
    retrieval_mode: str = field(
        default="mechanical",
        metadata={
            "description": "How related memories are found: 'mechanical' (BM25, no model call: "
            "a few milliseconds), or, at the cost of one more model call before every reply, "
            "'hybrid' (the model picks from the whole list while it is small, from a BM25 "
            "shortlist once it is large) or 'llm' (the model always reads every memory). The "
            "offline model never ranks: with it every mode is BM25."
        },
    )
    retrieval_limit: int = field(
        default=10,
        metadata={"description": "At most this many memories enter the system prompt."},
    )
    language: str = field(
        default="auto",
        metadata={
            "description": "Language of the chat prompt and of the memories the writer stores: "
            "'auto' (the language the user writes in), 'en' or 'zh' (always that one)."
        },
    )
    memory_scope: str = field(
        default="auto",
        metadata={
            "description": "Which memories the writer stores for this conversation: 'auto' (the "
            "writer decides: facts about the user are for every conversation, facts about this "
            "conversation's task only for this branch), 'user' (all shared) or 'branch' (all "
            "visible only to this branch of the conversation and its continuations)."
        },
    )

    remember: bool = field(
        default=True,
        metadata={
            "description": "False keeps this conversation off the record: nothing of it is "
            "remembered, archived, digested or summarised into memory (the thread's own "
            'checkpoints keep it); the user saying "don\'t remember this conversation" does the '
            "same for the rest of the thread."
        },
    )
    now: str = field(
        default="",
        metadata={
            "description": "The run's current time, ISO 8601 with an offset (a replay, an import, "
            'an evaluation); empty = the clock. Every "today" of the run is read from it: the '
            "prompt's current time, relative days, what is coming up."
        },
    )
    timezone: str = field(
        default="",
        metadata={
            "description": "The user's time zone, an IANA name such as 'Asia/Shanghai' (by "
            "default the deployment's GULFSTREAM_TIMEZONE); empty = the server's own zone. "
            '"Tomorrow" is the user\'s tomorrow.'
        },
    )

    def __init__(self, **values: Any) -> None:
        known = {f.name for f in fields(self)}
        for name in sorted(set(values) - known):
            if name in DEPLOYMENT_SETTINGS:
                raise ValueError(
                    f"Context.{name} is not a run setting: it belongs to the deployment "
                    f"({ENV_PREFIX}{name.upper()} in the server's environment) and no run can "
                    "choose it"
                )
            raise ValueError(f"Context has no field {name!r}; its fields are {sorted(known)}")
        for spec in fields(self):
            if spec.name in values:
                value = values[spec.name]
            else:
                value = os.environ.get(ENV_PREFIX + spec.name.upper())
                if value is None:
                    assert spec.default is not MISSING
                    value = spec.default
            setattr(self, spec.name, value)
        self._validate()

    def language_for(self, text: str = "") -> str:
        """The language to answer `text` in, "en" or "zh": the run's `language`, or with "auto"
        the language `text` is written in."""
        return resolve_language(self.language, text)

    def moment(self) -> datetime:
        """The run's current time in the user's zone (`now`, else the clock; `timezone`, else
        the server's zone): the one door to "today" for everything a run does."""
        return run_moment(self.now, self.timezone)

    def moment_named(self, text: str) -> datetime | None:
        """The moment `text` names ("in 10 minutes", "Friday at 8", "明天下午3点") from the run's
        time in the user's zone (`memory.text.days.moment_named`); None when it names none."""
        return moment_named(text, self.moment())

    @classmethod
    def _app_text_fields(cls) -> tuple[str, ...]:
        """The fields an app's subclass adds (strings: a system prompt, a persona, …)."""
        own = {f.name for f in fields(MemoryContext)}
        return tuple(f.name for f in fields(cls) if f.name not in own)

    def _validate(self) -> None:
        self.retrieval_limit = _as_int("retrieval_limit", self.retrieval_limit)
        modes = tuple(mode.value for mode in RetrievalMode)
        self.retrieval_mode = _one_of("retrieval_mode", self.retrieval_mode, modes)
        self.language = _one_of("language", self.language, LANGUAGE_POLICIES)
        self.memory_scope = _one_of("memory_scope", self.memory_scope, SCOPE_POLICIES)
        self.remember = _as_bool("remember", self.remember)
        for name in ("user_id", "model"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Context.{name} must be a non-empty string, got {value!r}")
            setattr(self, name, value.strip())
        for name in ("writer_model", "now", "timezone", *self._app_text_fields()):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"Context.{name} must be a string, got {getattr(self, name)!r}")
        self.writer_model = self.writer_model.strip() or self.model
        self.timezone, self.now = check_timezone(self.timezone), check_now(self.now)
        for name in ("model", "writer_model"):
            if "/" not in getattr(self, name):
                raise ValueError(
                    f"Context.{name} must look like 'provider/model', got {getattr(self, name)!r}"
                )


def _as_int(name: str, value: Any) -> int:
    try:
        number = int(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or not 1 <= number <= MAX_RETRIEVAL_LIMIT:
        raise ValueError(
            f"Context.{name} must be an integer from 1 to {MAX_RETRIEVAL_LIMIT}, got {value!r}"
        )
    return number


def _as_bool(name: str, value: Any) -> bool:
    """A flag from a run (a bool) or the environment ("true"/"false", "1"/"0", "yes"/"no")."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"Context.{name} must be true or false, got {value!r}")


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in allowed:
        raise ValueError(f"Context.{name} must be one of {', '.join(allowed)}; got {value!r}")
    return str(text)
