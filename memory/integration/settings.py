"""Settings: the deployment's choices (backend, paths, write mode, secrets, hosts), read once from
the environment; no run's context can change them.

Long because it is the one list of the deployment's settings, each with its help text: one place to
read them all.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from memory.integration.env_values import ENV_PREFIX, parse_value, read_dotenv
from memory.integration.time_of_run import deployment_timezone  # feature: consolidation
from memory.store.factory import backend_folder
from memory.store.state_db import is_postgres_dsn
from memory.upkeep.consolidation.plan import ConsolidationPolicy  # feature: consolidation
from memory.writer.batching import MAX_BATCH_SIZE, BatchPolicy
from memory.writer.protocols import PROTOCOLS
from memory.writer.timeouts import PREFILL_TOKENS_PER_SECOND

WRITE_MODES = ("auto", "server", "local", "inline")
PROMPT_LAYOUTS = ("auto", "split", "single")
MAX_WRITE_DELAY_SECONDS = 3600
DEFAULT_BUDGET_TOKENS = 16_000  # when the chat model's window is unknown
DEFAULT_BUDGET_FRACTION = 0.5
MIN_BUDGET_TOKENS = 200
DOTENV = ".env"
# LangGraph Platform gives a deployment its PostgreSQL in these (the store lives there too).
PLATFORM_DATABASE_VARIABLES = ("DATABASE_URI", "POSTGRES_URI")
# Old variable names still read (with a warning) when the new one is unset.
RENAMED_VARIABLES = {
    # It named the conversation archive but read like GULFSTREAM_ARCHIVE_COLD_AFTER_DAYS
    # (consolidation archiving memories).
    "GULFSTREAM_ARCHIVE": "GULFSTREAM_CONVERSATION_ARCHIVE",
}

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """Each field is `GULFSTREAM_<FIELD>` in the environment (or `.env`). A bad value is a
    ValueError naming the variable, raised when the settings are read (at start)."""

    memory_backend: str = field(
        default="yaml:data/memory",
        metadata={
            "help": "where memories live: yaml:<dir>, sqlite:<file>, store (the LangGraph "
            "server's store), postgres:<dsn>, store:memory (in-process; tests)"
        },
    )
    data_dir: str = field(
        default="data",
        metadata={
            "help": "the write journal and trace of a backend without a folder of its own "
            "(store, postgres) when no PostgreSQL holds them (postgres:<dsn>, or the platform's "
            "DATABASE_URI for store); yaml and sqlite keep them beside their files"
        },
    )
    write_mode: str = field(
        default="auto",
        metadata={
            "help": "how a finished turn reaches the memory writer: server (a background run of "
            "memory_writer), local (this process's durable queue), inline (written before the "
            "run returns; debugging), auto (server under LangGraph, else local)"
        },
    )
    write_delay_seconds: int = field(
        default=0, metadata={"help": "server mode: the writer run starts this much later"}
    )
    admission: bool = field(
        default=True,
        metadata={
            "help": "score each finished turn without a model and write only what is worth "
            "keeping (memory.admission); off: every turn is written at once"
        },
    )
    write_batch_size: int = field(
        default=5,
        metadata={"help": "a thread's admitted turns are written together once this many wait"},
    )
    write_batch_seconds: int = field(
        default=30,
        metadata={"help": "... or once the thread has been quiet this long (seconds)"},
    )
    writer_thread_secret: str = field(
        default="",
        metadata={"help": "salts each user's writer thread id (set it on a deployment)"},
    )
    writer_timeout_seconds: float = field(
        default=30.0,
        metadata={"help": "how long one call to the writer model may take before it fails"},
    )
    writer_prefill_tokens_per_second: float = field(
        default=PREFILL_TOKENS_PER_SECOND,
        metadata={
            "help": "the slowest prompt reading speed of a working writer model: its time limit "
            "grows by the prompt's tokens at this speed (a 1.5B model on 2 CPU cores: 120-170)"
        },
    )
    writer_protocol: str = field(
        default="auto",
        metadata={
            "help": "how the memory writer asks its model: tools (an agent calling the memory "
            "tools), json (one request answered with a JSON list of operations, for small "
            "local models), auto (json for a model named small, else tools, then json for a "
            "model that writes tool calls as text)"
        },
    )
    max_tool_rounds: int = field(
        default=5,
        metadata={
            "help": "tool rounds per turn of the chat agent (then it answers without tools; 0: "
            "no tools, a small model's shortest prompt); the memory writer gets twice as many "
            "(a read, then its writes), at least 2"
        },
    )
    small_model_tool_rounds: int = field(
        default=0,
        metadata={
            "help": "tool rounds per chat turn for a model whose name says it is small (local, "
            "or 4B or less), instead of max_tool_rounds: with tools bound the 1.5B local model "
            "wrote a lookup as text on most turns and then answered the lookup instead of the "
            "user; 0 binds none (the related memories are in its prompt either way)"
        },
    )
    prompt_layout: str = field(
        default="auto",
        metadata={
            "help": "where the chat's per-turn context (time, memories) goes: split (a second "
            "system message before the user's latest message, so a server's prompt cache keeps "
            "the conversation), single (all in the first system message), auto (split for "
            "OpenAI and OpenAI-compatible servers, else single)"
        },
    )
    allowed_models: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "comma-separated provider/model names a run may choose; '*' allows any. "
            "Unset: any model without custom auth, only the default models with it"
        },
    )
    snapshot_seconds: float | None = field(
        default=5.0,
        metadata={"help": "quiet seconds before a memory snapshot is written; 'off' disables"},
    )
    editor_hosts: tuple[str, ...] = field(
        default=(), metadata={"help": "host names the editor answers besides loopback ('*': any)"}
    )
    editor_origins: tuple[str, ...] = field(
        default=(), metadata={"help": "other origins the editor accepts requests from"}
    )
    editor_require_auth: bool = field(
        default=False, metadata={"help": "refuse the editor's local mode (user from the URL)"}
    )
    require_user_id: str = field(
        default="auto",
        metadata={
            "help": "refuse a run that names no user_id instead of running it as user "
            "'default' (whose memories every such caller would share): on, off, or auto (on "
            "in a deployed server without custom auth: its PostgreSQL in DATABASE_URI)"
        },
    )
    editor_user: str = field(
        default="", metadata={"help": "the editor's user in local mode when the URL names none"}
    )
    mcp: bool = field(
        default=False,
        metadata={"help": "serve the MCP endpoint /memories/mcp on the LangGraph server"},
    )
    editor_poll_seconds: float = field(
        default=0.25, metadata={"help": "how often the editor's live view checks for changes"}
    )
    embeddings: str = field(
        default="offline/use-multilingual-v3",
        metadata={
            "help": "semantic recall fused with BM25: provider/model of a LangChain embeddings "
            "model (openai/text-embedding-3-small, ...), the offline default "
            "offline/use-multilingual-v3 (no key, no download), or off"
        },
    )
    conversation_archive: str = field(
        default="auto",
        metadata={
            "help": "the conversation archive: auto (beside the memory store: SQLite files, or "
            "PostgreSQL for postgres:<dsn>, and for the store backend when the platform sets "
            "DATABASE_URI), sqlite:<folder>, postgres:<dsn>, or off"
        },
    )
    context_budget_tokens: str = field(
        default="auto",
        metadata={
            "help": "compaction starts when a turn's prompt would exceed this: a token count, "
            "a fraction of the chat model's window (0.5), auto (half the window, "
            f"{DEFAULT_BUDGET_TOKENS} tokens when the window is unknown), or off"
        },
    )
    compaction_keep_messages: int = field(
        default=6,
        metadata={"help": "compaction keeps at least this many recent messages"},
    )
    compaction_cooldown_seconds: float = field(
        default=60.0,
        metadata={
            "help": "after a failed summary, the next attempt waits this long (doubling per "
            "failure, at most 15 minutes); the prompt is trimmed meanwhile"
        },
    )
    digests: bool = field(
        default=True,
        metadata={"help": "seal each user's day of conversation into a daily digest"},
    )
    topics: bool = field(
        default=True,
        metadata={
            "help": "the chat tool memories_about (a person's, place's or subject's memories) "
            "and retrieval by topic; off: neither"
        },
    )
    hotness_half_life_days: float = field(
        default=30.0,
        metadata={
            "help": "an unused episodic memory (a plan, an event, a dated fact) loses half its "
            "hotness in this many days; evergreen ones never decay; 0 turns decay off"
        },
    )
    min_score: float = field(
        # bench/min_score.py: the largest threshold that lost no recall@5 on the labelled sets,
        # BM25 alone or fused, with and without 2,000 distractors (0.3 lost paraphrase recall).
        default=0.2,
        metadata={
            "help": "retrieval drops matches scoring below this fraction of the best match "
            "instead of filling the limit with weak ones (0: keep every match)"
        },
    )
    coming_up_days: int = field(
        default=7,
        metadata={
            "help": "what the memories plan for today and this many days after reaches the chat "
            "prompt unasked, a few lines, soonest first (0: only today; -1: off)"
        },
    )
    reminders: bool = field(
        default=True,
        metadata={
            "help": "the chat tools set_reminder, list_reminders and cancel_reminder: a reminder "
            "is a one-shot cron on the user's thread in the LangGraph server (off: not bound)"
        },
    )
    memory_capacity: int = field(
        default=2000,
        metadata={
            "help": "live memories per user; nearing it runs consolidation, over it the writer "
            "must merge or archive before it adds (0: no cap)"
        },
    )
    consolidate_every_writes: int = field(
        default=50,
        metadata={"help": "a consolidation pass runs after this many writer runs (0: never)"},
    )
    consolidate_idle_seconds: float = field(
        default=900.0,
        metadata={
            "help": "local mode: a pass also runs after this long without a turn, when "
            "something was written since the last pass (0: never on idle)"
        },
    )
    archive_cold_after_days: float = field(
        default=90.0,
        metadata={
            "help": "consolidation archives (restorably) memories cold for this long; stale "
            "plans whose date passed are marked at once (0: never archive)"
        },
    )
    auth_tokens: str = field(
        default="",
        metadata={"help": "memory/integration/auth.py's example tokens: 'token1:alice,token2:bob'"},
    )
    platform_database: str = field(
        default="",
        metadata={
            "help": "the deployment's PostgreSQL, shared by its replicas: LangGraph Platform "
            "sets DATABASE_URI (or POSTGRES_URI), read when this is unset"
        },
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings from `environ` (default: the process environment, completed by a
        `.env` file in the working directory, whose values never override the environment)."""
        source = dict(read_dotenv(Path(DOTENV))) | dict(os.environ if environ is None else environ)
        for old, new in RENAMED_VARIABLES.items():
            if source.get(old, "").strip() and not source.get(new, "").strip():
                message = f"{old} is deprecated: rename it to {new} (it is read for now)"
                warnings.warn(message, DeprecationWarning, stacklevel=2)
                logger.warning(message)
                source[new] = source[old]
        values: dict[str, Any] = {}
        for spec in fields(cls):
            raw = source.get(ENV_PREFIX + spec.name.upper())
            if raw is not None and raw.strip() != "":
                values[spec.name] = parse_value(spec.name, raw.strip(), spec.default)
        for name in PLATFORM_DATABASE_VARIABLES:
            # `langgraph dev` sets DATABASE_URI=":memory:" for its in-process runtime.
            if is_postgres_dsn(source.get(name, "").strip()):
                values.setdefault("platform_database", source[name].strip())
                break
        return cls(**values)

    def __post_init__(self) -> None:
        if self.write_mode not in WRITE_MODES:
            raise ValueError(
                f"GULFSTREAM_WRITE_MODE must be one of {', '.join(WRITE_MODES)}; "
                f"got {self.write_mode!r}"
            )
        if not 0 <= self.write_delay_seconds <= MAX_WRITE_DELAY_SECONDS:
            raise ValueError(
                f"GULFSTREAM_WRITE_DELAY_SECONDS must be 0 to {MAX_WRITE_DELAY_SECONDS}"
            )
        if not 1 <= self.write_batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"GULFSTREAM_WRITE_BATCH_SIZE must be 1 to {MAX_BATCH_SIZE}")
        if not 0 <= self.write_batch_seconds <= MAX_WRITE_DELAY_SECONDS:
            raise ValueError(
                f"GULFSTREAM_WRITE_BATCH_SECONDS must be 0 to {MAX_WRITE_DELAY_SECONDS}"
            )
        if self.writer_timeout_seconds <= 0:
            raise ValueError("GULFSTREAM_WRITER_TIMEOUT_SECONDS must be positive")
        if self.writer_prefill_tokens_per_second <= 0:
            raise ValueError("GULFSTREAM_WRITER_PREFILL_TOKENS_PER_SECOND must be positive")
        if self.writer_protocol not in PROTOCOLS:
            raise ValueError(
                f"GULFSTREAM_WRITER_PROTOCOL must be one of {', '.join(PROTOCOLS)}; "
                f"got {self.writer_protocol!r}"
            )
        if self.prompt_layout not in PROMPT_LAYOUTS:
            raise ValueError(
                f"GULFSTREAM_PROMPT_LAYOUT must be one of {', '.join(PROMPT_LAYOUTS)}; "
                f"got {self.prompt_layout!r}"
            )
        if not 0 <= self.max_tool_rounds <= 50:
            raise ValueError("GULFSTREAM_MAX_TOOL_ROUNDS must be 0 to 50")
        if not 0 <= self.small_model_tool_rounds <= 50:
            raise ValueError("GULFSTREAM_SMALL_MODEL_TOOL_ROUNDS must be 0 to 50")
        if not self.memory_backend.strip():
            raise ValueError("GULFSTREAM_MEMORY_BACKEND must name a backend")
        self.context_budget(None)  # a bad budget stops the start
        if not 1 <= self.compaction_keep_messages <= 1000:
            raise ValueError("GULFSTREAM_COMPACTION_KEEP_MESSAGES must be 1 to 1000")
        if self.compaction_cooldown_seconds < 0:
            raise ValueError("GULFSTREAM_COMPACTION_COOLDOWN_SECONDS must not be negative")
        for name in (
            "hotness_half_life_days",
            "memory_capacity",
            "consolidate_every_writes",
            "consolidate_idle_seconds",
            "archive_cold_after_days",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"GULFSTREAM_{name.upper()} must not be negative")
        if not 0 <= self.min_score < 1:
            raise ValueError("GULFSTREAM_MIN_SCORE must be at least 0 and below 1")

    def context_budget(self, window: int | None) -> int | None:
        """The prompt budget in tokens for a chat model whose window is `window` tokens (None:
        unknown); None when compaction is off."""
        raw = self.context_budget_tokens.strip().lower()
        variable = "GULFSTREAM_CONTEXT_BUDGET_TOKENS"
        if raw in ("off", "none", "0"):
            return None
        if raw == "auto":
            fraction = DEFAULT_BUDGET_FRACTION
        else:
            try:
                number = float(raw)
            except ValueError:
                raise ValueError(
                    f"{variable} must be a token count, a fraction of the model's window "
                    f"(0 < f <= 1), auto or off; got {self.context_budget_tokens!r}"
                ) from None
            if number > 1:
                if number < MIN_BUDGET_TOKENS or number != int(number):
                    raise ValueError(f"{variable} must be a whole number >= {MIN_BUDGET_TOKENS}")
                return int(number)
            if number <= 0:
                raise ValueError(f"{variable} must be positive (or off)")
            fraction = number
        if not window:
            return DEFAULT_BUDGET_TOKENS
        return max(MIN_BUDGET_TOKENS, int(window * fraction))

    @property
    def shared_database(self) -> str | None:
        """The PostgreSQL every process of the deployment shares: `postgres:<dsn>`'s own, else
        for the `store` backend the platform's; None when the processes share none."""
        kind, _, target = self.memory_backend.partition(":")
        kind = kind.strip().lower()
        if kind == "postgres":
            return target.strip() or None
        if kind == "store" and not target.strip():
            return self.platform_database or None
        return None

    def user_id_required(self) -> bool:
        """Whether a run must name its user (`require_user_id`); never with custom auth, where
        the signed-in user is the run's."""
        choice = self.require_user_id.strip().lower()
        if custom_auth_configured() or choice in ("off", "false", "no", "0"):
            return False
        if choice in ("on", "true", "yes", "1"):
            return True
        if choice != "auto":
            raise ValueError(f"GULFSTREAM_REQUIRE_USER_ID must be on, off or auto; got {choice!r}")
        # A deployed server: LangGraph Platform gives it a PostgreSQL (`langgraph dev` does not).
        return "langgraph_api" in sys.modules and bool(self.platform_database)

    @property
    def archive_on(self) -> bool:
        """False when the conversation archive is turned off."""
        return self.conversation_archive.strip().lower() != "off"

    @property
    def compaction_on(self) -> bool:
        """False when compaction is turned off (no budget)."""
        return self.context_budget(None) is not None

    def with_changes(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def consolidation_policy(self) -> ConsolidationPolicy:  # feature: consolidation
        """A consolidation pass's thresholds on this deployment."""  # feature: consolidation
        return ConsolidationPolicy(  # feature: consolidation
            half_life_days=self.hotness_half_life_days,  # feature: consolidation
            archive_cold_after_days=self.archive_cold_after_days,  # feature: consolidation
            timezone=deployment_timezone(),  # feature: consolidation
        )  # feature: consolidation

    @property
    def memory_folder(self) -> Path:
        """The folder the backend keeps its files in (the write journal and trace beside them):
        the backend's own folder, else `data_dir`."""
        return backend_folder(self.memory_backend) or Path(self.data_dir)

    @staticmethod
    def custom_auth() -> bool:
        """Whether this process is a LangGraph server with an `auth` section in langgraph.json
        (then a user is who the server authenticated, never who a request says it is)."""
        return custom_auth_configured()

    @staticmethod
    def is_studio_user(user: Any) -> bool:
        """LangGraph Studio's shared user: no end user, so it owns no memories."""
        return is_studio_user(user)

    @staticmethod
    def load_dotenv() -> None:
        """`.env` in the working folder into the environment (what is set already wins)."""
        load_dotenv()

    def batch_policy(self) -> BatchPolicy:
        """How the local queue batches a thread's admitted turns."""
        return BatchPolicy(self.write_batch_size, float(self.write_batch_seconds))


def load_dotenv() -> None:
    """Put `.env`'s values into the environment where it has none (the CLI commands do this,
    so that model keys in `.env` reach the model clients as under `langgraph dev`)."""
    for key, value in read_dotenv(Path(DOTENV)).items():
        os.environ.setdefault(key, value)


_current: Settings | None = None
_lock = threading.Lock()


def get_settings() -> Settings:
    """The process's settings, read from the environment the first time they are needed."""
    global _current
    with _lock:
        if _current is None:
            _current = Settings.from_env()
        return _current


@contextlib.contextmanager
def use_settings(settings: Settings | None = None, **changes: Any) -> Iterator[Settings]:
    """Run with other settings (the demo's folder, tests): `settings`, or the current ones with
    `changes`; the previous ones come back afterwards."""
    global _current
    previous = _current
    chosen = (settings or get_settings()).with_changes(**changes)
    with _lock:
        _current = chosen
    try:
        yield chosen
    finally:
        with _lock:
            _current = previous


def custom_auth_configured() -> bool:
    """True inside the LangGraph server with an `auth` section in langgraph.json."""
    if "langgraph_api" not in sys.modules:
        return False
    try:
        from langgraph_api import config
    except ImportError:  # pragma: no cover - present whenever it is in sys.modules
        return False
    return bool(getattr(config, "LANGGRAPH_AUTH", None))


def is_studio_user(user: Any) -> bool:
    """LangGraph Studio's shared user (an object, or its serialized form with a `kind`)."""
    if isinstance(user, dict):
        return user.get("kind") == "StudioUser"
    return type(user).__name__ == "StudioUser" or getattr(user, "kind", None) == "StudioUser"
