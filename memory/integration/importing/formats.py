"""Which export a file is (from its content, or as named) and its conversations in neutral form."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memory.integration.importing.chatgpt import parse_chatgpt
from memory.integration.importing.claude import parse_claude
from memory.integration.importing.jsonl import parse_jsonl
from memory.integration.importing.records import ParsedExport

FORMATS = ("chatgpt", "claude", "jsonl")


class UnreadableExport(ValueError):
    """The file cannot be imported at all (missing, not text, no known format)."""


def read_export(path: str | Path, format: str = "auto") -> ParsedExport:
    """The conversations of the export at `path`; `format` is "auto" (told from the content)
    or one of FORMATS. UnreadableExport names the file and what is wrong with it."""
    path = Path(path)
    if format not in ("auto", *FORMATS):
        raise UnreadableExport(f"unknown format {format!r}: use auto, {', '.join(FORMATS)}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UnreadableExport(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if raw[:2] == b"PK":
        raise UnreadableExport(f"{path}: a zip archive; unzip it and import its conversations.json")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableExport(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    data = _json_document(text, path)
    chosen = format if format != "auto" else detect(data, text, path)
    export = ParsedExport(str(path), chosen)
    if chosen == "jsonl":
        parse_jsonl(text, export)
        return export
    if not isinstance(data, list):
        raise UnreadableExport(f"{path}: a {chosen} export is a JSON list of conversations")
    (parse_chatgpt if chosen == "chatgpt" else parse_claude)(data, export)
    return export


def detect(data: Any, text: str, path: Path) -> str:
    """The format of a file: a JSON list whose conversations have a `mapping` (ChatGPT) or
    `chat_messages` (Claude), or lines of `{thread, role, text, time}` objects (JSONL)."""
    if isinstance(data, list):
        first = next((c for c in data if isinstance(c, Mapping)), None)
        if first is not None and "mapping" in first:
            return "chatgpt"
        if first is not None and "chat_messages" in first:
            return "claude"
        if not data:
            raise UnreadableExport(f"{path}: an empty list: no conversations to import")
        raise UnreadableExport(
            f"{path}: a JSON list, but its first conversation has neither 'mapping' (ChatGPT) "
            "nor 'chat_messages' (Claude)"
        )
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = json.loads(first_line)
    except json.JSONDecodeError:
        record = None
    if isinstance(record, Mapping) and {"thread", "role", "text"} <= set(record):
        return "jsonl"
    raise UnreadableExport(
        f"{path}: not a ChatGPT or Claude conversations.json, nor JSONL of "
        "{thread, role, text, time} lines (FORMAT= names the format)"
    )


def _json_document(text: str, path: Path) -> Any:
    """The file as one JSON document, None when it is not one (JSONL); a file that starts as a
    JSON list and breaks off is UnreadableExport, with where it breaks."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("["):
            raise UnreadableExport(
                f"{path}: broken JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from exc
        return None
