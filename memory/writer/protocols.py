"""Which protocol the memory writer speaks with a model: tools (the ReAct agent) or json (one
constrained request), chosen by GULFSTREAM_WRITER_PROTOCOL. `auto` picks json up front for a
model whose name says it is small (`local`, what `make local-serve` serves; a size of 4B or
less: `qwen2.5:1.5b`, `llama3.2-3b`, `smollm2-360m`), which write tool calls as text, and for a
model seen doing that before, in this process or an earlier one (`remember_in`); tools
otherwise."""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any

from memory.store.atomic_file import write_text_atomically

logger = logging.getLogger(__name__)

PROTOCOLS = ("auto", "tools", "json")
SMALL_MODEL_BILLIONS = 4.0
# The model name `make local-serve` gives llama-server.
LOCAL_MODEL_NAMES = frozenset({"local"})
# A parameter count in a model name: "1.5b", "3B", "0.6b", "360m" (not "gpt-4o" nor "o1").
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", re.IGNORECASE)
# Where LangChain chat models keep the model's name.
_NAME_ATTRIBUTES = ("model_name", "model")

# Models that wrote tool calls as text, with why: one table per process, like the breakers,
# kept in a file when `remember_in` named one so the next process starts on json.
_moved_to_json: dict[str, str] = {}
_remembered_in: Path | None = None
_lock = threading.Lock()


def check_protocol(value: str) -> str:
    """`value` when it is a known protocol, else ValueError."""
    if value not in PROTOCOLS:
        raise ValueError(f"writer protocol must be one of {', '.join(PROTOCOLS)}, not {value!r}")
    return value


def protocol_for(setting: str, model_key: str, model: Any = None) -> str:
    """ "tools" or "json" for the model `model_key` (the client `model`, when known) under
    `setting`: decided before the first call, never by failing one."""
    if setting != "auto":
        return setting
    names = [model_key, *(getattr(model, a, "") for a in _NAME_ATTRIBUTES if model is not None)]
    if any(isinstance(name, str) and is_small_model(name) for name in names):
        return "json"
    with _lock:
        return "json" if model_key in _moved_to_json else "tools"


def is_small_model(name: str) -> bool:
    """Whether a model's name (`provider/model` or the bare model) says it is small: the local
    server's `local`, or a parameter count of at most SMALL_MODEL_BILLIONS."""
    bare = name.rsplit("/", 1)[-1].strip().lower()
    if bare in LOCAL_MODEL_NAMES:
        return True
    for number, unit in _SIZE.findall(bare):
        billions = float(number) / (1000 if unit.lower() == "m" else 1)
        if billions <= SMALL_MODEL_BILLIONS:
            return True
    return False


def move_to_json(model_key: str, why: str) -> None:
    """From now on `model_key` is written to with the json protocol (`auto` only); logged once,
    and kept in the file `remember_in` named."""
    with _lock:
        if model_key in _moved_to_json:
            return
        _moved_to_json[model_key] = why
        path, table = _remembered_in, dict(_moved_to_json)
    logger.warning(
        "the writer model %s %s: its turns use the json protocol from now on "
        "(GULFSTREAM_WRITER_PROTOCOL=json sets this for every model)",
        model_key,
        why,
    )
    if path is not None:
        try:
            write_text_atomically(path, json.dumps(table, indent=1, sort_keys=True))
        except OSError:  # a cache of a choice: the next process finds out again
            logger.exception("keeping the writer protocol choices in %s failed", path)


def remember_in(path: Path) -> None:
    """Keep the models moved to json in `path` (JSON) and start from what it holds."""
    global _remembered_in
    try:
        stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        logger.warning("ignoring the unreadable writer protocol choices in %s", path)
        stored = {}
    with _lock:
        _remembered_in = path
        if isinstance(stored, dict):
            for key, why in stored.items():
                _moved_to_json.setdefault(str(key), str(why))


def forget_protocol_choices() -> None:
    """Start every model on tools again, and keep nothing in a file (tests)."""
    global _remembered_in
    with _lock:
        _moved_to_json.clear()
        _remembered_in = None
