"""Debian's Chromium as the browser tests and bench/editor_live.py launch it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def launch(playwright: Any) -> Any:
    """A headless Chromium browser from a started `sync_playwright()`."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
