"""How fast the editor shows a change another process wrote, among 10,000 memories, against
reloading the page.

Run: `.venv/bin/python bench/editor_live.py [--rounds 5]` (about a minute; needs Debian's
Chromium, `scripts/install_chromium.sh`).

One SQLite store of 10,000 memories, the editor as a real process with its default poll, one
Chromium page. Each round adds a memory, renames the oldest card shown and deletes it, each from
another process, and times commit → card changed on the page (a MutationObserver's clock). The
baseline, in the same run: a reload of the page until its first card shows, what a user would do
without the live list. Target: every live change under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from memory.integration.settings import Settings
from tests.browser.chromium import launch
from tests.browser.live_scale import USER, follow_live_changes, seed
from tests.webapp.editor_process import run_editor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "memory"
        folder.mkdir()
        database = str(folder / "memories.db")
        seed(database)
        poll = Settings.from_env({}).editor_poll_seconds
        backend = f"sqlite:{database}"
        with run_editor(
            folder, GULFSTREAM_MEMORY_BACKEND=backend, GULFSTREAM_EDITOR_POLL_SECONDS=str(poll)
        ) as base, sync_playwright() as playwright:  # fmt: skip
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            reloads: list[float] = []
            live: list[float] = []
            for round_number in range(rounds):
                started = time.monotonic()
                page.goto(f"{base}/memories/?user={USER}&lang=en")
                page.locator(".card").first.wait_for(state="visible")
                reloads.append(time.monotonic() - started)
                page.locator("#live.on").wait_for()
                changes = follow_live_changes(page, database, str(round_number))
                live += [changes.added, changes.updated, changes.deleted]
            browser.close()
    print(f"10,000 memories, editor poll {poll} s, {rounds} rounds of add / update / delete")
    print(f"  live change shown   p50 {statistics.median(live):.2f} s, max {max(live):.2f} s")
    print(f"  reload of the page  p50 {statistics.median(reloads):.2f} s, max {max(reloads):.2f} s")
    print(f"  live / reload (p50) ×{statistics.median(live) / statistics.median(reloads):.2f}")
    print(f"  target: every live change under 1 s: {'met' if max(live) < 1 else 'missed'}")


if __name__ == "__main__":
    main()
