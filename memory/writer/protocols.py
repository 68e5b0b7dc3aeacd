"""Which protocol the memory writer speaks with a model: tools (the ReAct agent) or json (one
constrained request), chosen by GULFSTREAM_WRITER_PROTOCOL; `auto` moves a model to json once
it writes tool calls as text, and remembers that for the model."""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger(__name__)

PROTOCOLS = ("auto", "tools", "json")

# Models that wrote tool calls as text, with why: one table per process, like the breakers.
_moved_to_json: dict[str, str] = {}
_lock = threading.Lock()


def check_protocol(value: str) -> str:
    """`value` when it is a known protocol, else ValueError."""
    if value not in PROTOCOLS:
        raise ValueError(f"writer protocol must be one of {', '.join(PROTOCOLS)}, not {value!r}")
    return value


def protocol_for(setting: str, model_key: str) -> str:
    """ "tools" or "json" for the model `model_key` under `setting`."""
    if setting != "auto":
        return setting
    with _lock:
        return "json" if model_key in _moved_to_json else "tools"


def move_to_json(model_key: str, why: str) -> None:
    """From now on `model_key` is written to with the json protocol (`auto` only); logged once."""
    with _lock:
        if model_key in _moved_to_json:
            return
        _moved_to_json[model_key] = why
    logger.warning(
        "the writer model %s %s: its turns use the json protocol from now on "
        "(GULFSTREAM_WRITER_PROTOCOL=json sets this for every model)",
        model_key,
        why,
    )


def forget_protocol_choices() -> None:
    """Start every model on tools again (tests)."""
    with _lock:
        _moved_to_json.clear()
