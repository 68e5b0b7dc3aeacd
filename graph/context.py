"""Context: the runtime settings of a Gulfstream run, with GULFSTREAM_* environment fallbacks."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Annotated, Any

ENV_PREFIX = "GULFSTREAM_"
RETRIEVAL_MODES = ("llm", "mechanical", "hybrid")
LANGUAGES = ("auto", "en", "zh")
WRITE_MODES = ("auto", "local", "server", "inline")
MEMORY_SCOPES = ("auto", "user", "branch")
MAX_RETRIEVAL_LIMIT = 100
MAX_WRITE_DELAY_SECONDS = 3600


@dataclass(kw_only=True)
class Context:
    """Settings for one run. A field left at its default takes `GULFSTREAM_<FIELD>` from the
    environment when that variable is set, so `langgraph dev`, the CLI and tests share one source.
    """

    user_id: str = field(
        default="default",
        metadata={
            "description": "Whose memories to read and write when the server has no custom auth. "
            "With custom auth the authenticated user is used instead and this is ignored."
        },
    )
    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="openai/gpt-4o-mini",
        metadata={
            "description": "The chat model, as provider/model. Without OPENAI_API_KEY or "
            "OPENAI_BASE_URL an offline rule-based model is used instead."
        },
    )
    writer_model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="",
        metadata={"description": "The model of the background memory writer; empty = `model`."},
    )
    retrieval_mode: str = field(
        default="hybrid",
        metadata={
            "description": "How related memories are found: 'hybrid' (the model picks from the "
            "whole list while it is small, from a BM25 shortlist once it is large), 'llm' (the "
            "model always reads every memory, the seed's mode) or 'mechanical' (BM25, no LLM "
            "call). The offline model never ranks: with it every mode is BM25."
        },
    )
    retrieval_limit: int = field(
        default=10,
        metadata={"description": "At most this many memories enter the system prompt."},
    )
    memory_backend: str = field(
        default="yaml:data/memory",
        metadata={
            "description": "Where memories live: 'yaml:<dir>', 'sqlite:<file>', 'store' (the "
            "LangGraph server's store), 'postgres:<dsn>', or 'store:memory' (in-process, "
            "forgotten at exit: tests only)."
        },
    )
    language: str = field(
        default="auto",
        metadata={
            "description": "Language of the chat prompt and of the memories the writer stores: "
            "'auto' (the language the user writes in), 'en' or 'zh' (always that one)."
        },
    )
    write_mode: str = field(
        default="auto",
        metadata={
            "description": "How a finished turn reaches the memory writer: 'server' (a background "
            "run of memory_writer), 'local' (the queue graph.chat/LocalSession registered), "
            "'inline' (written before the run ends, errors logged; for debugging) or 'auto' "
            "(server under LangGraph, else the registered local queue, else a durable queue of "
            "this process with its journal beside the store)."
        },
    )
    write_delay_seconds: int = field(
        default=0,
        metadata={
            "description": "Server mode: wait this long before the writer runs, so that a burst "
            "of messages is written turn by turn after the user pauses."
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
    system_prompt: str = field(
        default="",
        metadata={
            "description": "The agent's system prompt; empty = the built-in prompt of `language`. "
            "'{memories}', '{core_context}' and '{current_time}' are replaced when present (the "
            "memories and core context blocks are appended when their placeholder is missing)."
        },
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            if not f.init:
                continue
            env_value = os.environ.get(ENV_PREFIX + f.name.upper())
            if env_value is not None and getattr(self, f.name) == f.default:
                setattr(self, f.name, env_value)
        self._validate()

    def _validate(self) -> None:
        self.retrieval_limit = _as_int(
            "retrieval_limit", self.retrieval_limit, 1, MAX_RETRIEVAL_LIMIT
        )
        self.write_delay_seconds = _as_int(
            "write_delay_seconds", self.write_delay_seconds, 0, MAX_WRITE_DELAY_SECONDS
        )
        self.retrieval_mode = _one_of("retrieval_mode", self.retrieval_mode, RETRIEVAL_MODES)
        self.language = _one_of("language", self.language, LANGUAGES)
        self.write_mode = _one_of("write_mode", self.write_mode, WRITE_MODES)
        self.memory_scope = _one_of("memory_scope", self.memory_scope, MEMORY_SCOPES)
        for name in ("user_id", "model", "memory_backend"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Context.{name} must be a non-empty string, got {value!r}")
            setattr(self, name, value.strip())
        for name in ("writer_model", "system_prompt"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"Context.{name} must be a string, got {getattr(self, name)!r}")
        if "/" not in self.model:
            raise ValueError(f"Context.model must look like 'provider/model', got {self.model!r}")
        if self.writer_model and "/" not in self.writer_model:
            raise ValueError(
                f"Context.writer_model must look like 'provider/model', got {self.writer_model!r}"
            )
        if not self.writer_model:
            self.writer_model = self.model


def _as_int(name: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        raise ValueError(f"Context.{name} must be an integer from {low} to {high}, got {value!r}")
    return number


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    text = str(value).strip().lower() if isinstance(value, str) else value
    if text not in allowed:
        raise ValueError(f"Context.{name} must be one of {', '.join(allowed)}; got {value!r}")
    return str(text)
