"""Values of GULFSTREAM_* variables and `.env` lines, parsed (memory/integration/settings.py reads
them)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ENV_PREFIX = "GULFSTREAM_"


def parse_value(name: str, raw: str, default: Any) -> Any:
    """`raw` as the type of the field's `default`; ValueError naming the variable otherwise."""
    variable = ENV_PREFIX + name.upper()
    try:
        if isinstance(default, bool):
            if raw.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(raw)
            return raw.lower() in ("1", "true", "yes", "on")
        if isinstance(default, tuple):
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        if name == "snapshot_seconds":
            if raw.lower() in ("off", "none", "no", "false"):
                return None
            value = float(raw)
            if value < 0:
                raise ValueError(raw)
            return value
        if name == "write_mode":
            return raw.lower()
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        raise ValueError(f"{variable} has a value that cannot be used: {raw!r}") from None
    return raw


def dotenv_value(text: str) -> str:
    """The value right of a `.env` line's `=`, read as `langgraph dev` (python-dotenv) reads
    it: a quoted value is what the quotes hold; an unquoted one ends before ` #` (a comment,
    as on the lines `.env.example` asks to uncomment)."""
    quoted = text.strip()
    if quoted[:1] in ("'", '"'):
        end = quoted.find(quoted[0], 1)
        if end > 0:
            return quoted[1:end]
    return re.split(r"\s#", text, maxsplit=1)[0].strip()


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a `.env` file (comments, `export` and quotes allowed); {} without one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return {}
    values = {}
    for line in lines:
        line = line.strip().removeprefix("export ").strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = dotenv_value(value)
    return values
