"""Values of GULFSTREAM_* variables and `.env` lines, parsed (memory/integration/settings.py reads
them)."""

from __future__ import annotations

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
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values
