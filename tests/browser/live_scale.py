"""The editor over 10,000 memories in Chromium: seed it, write from another process, time it."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.document import Change
from tests.webapp.editor_process import ROOT

USER = "big"
COUNT = 10_000
PAGE = 200
# Another process writes, as the memory writer or a second editor would; it prints when its
# write was committed.
WRITER = """
import sys, time
from memory.store.backends.sqlite_db import SqliteMemoryManager
store = SqliteMemoryManager(sys.argv[1], sys.argv[2])
action, argument = sys.argv[3], sys.argv[4]
if action == "add":
    store.add(argument, "live", "written by another process")
elif action == "update":
    store.update(argument, "edited elsewhere", new_description="Renamed by another process")
else:
    store.delete(argument, "deleted by another process")
print(time.time(), flush=True)
"""

# Records when cards enter and leave the page (Date.now() shares the machine's clock with
# time.time()): Playwright's own waits poll, up to every 500 ms, too coarse to time this.
WATCH_CARDS = """() => {
  window.cardLog = [];
  new MutationObserver((records) => {
    for (const record of records) {
      for (const [nodes, kind] of [[record.addedNodes, "added"],
                                   [record.removedNodes, "removed"]]) {
        for (const node of nodes) {
          const cards = node.nodeType !== 1 ? [] : node.matches(".card") ? [node]
            : [...node.querySelectorAll(".card")];
          for (const card of cards)
            window.cardLog.push(
              {kind, id: card.dataset.id, text: card.textContent, at: Date.now()});
        }
      }
    }
  }).observe(document.getElementById("waterfall"), {subtree: true, childList: true});
}"""


def seed(database: str) -> None:
    """COUNT memories of USER in a new SQLite file."""
    store = SqliteMemoryManager(database, USER)
    facts = [
        Change("add", description=f"Memory {i}: a fact about topic {i % 37}, with a few more words",
               theme=f"theme {i % 20}")
        for i in range(COUNT)
    ]  # fmt: skip
    store.apply(facts, "seed")
    store.close()


def write_elsewhere(database: str, action: str, argument: str) -> float:
    """Run the write in a new process; the time its write was committed."""
    done = subprocess.run(
        [sys.executable, "-c", WRITER, database, USER, action, argument],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return float(done.stdout.strip())


def seconds_until(page: object, kind: str, text: str, written_at: float, done: object) -> float:
    """Seconds from the commit of a write to the first card log entry of `kind` containing
    `text` (an id or a description); `done` is a locator state to wait for first (10 s at most:
    past that the page did not follow the change at all)."""
    done.wait_for(state="attached" if kind == "added" else "detached", timeout=10_000)  # type: ignore[attr-defined]
    log = page.evaluate("() => window.cardLog")  # type: ignore[attr-defined]
    at = min(
        entry["at"]
        for entry in log
        if entry["kind"] == kind
        and entry["at"] >= written_at * 1000
        and (text == entry["id"] or text in entry["text"])
    )
    return at / 1000 - written_at


@dataclass(frozen=True)
class LiveChanges:
    """Seconds from each write's commit to its card changing on the page."""

    added: float
    updated: float
    deleted: float
    added_on_top: bool  # the new memory came in as the first card of the newest group


def follow_live_changes(page: object, database: str, label: str) -> LiveChanges:
    """Add a memory, rename the oldest card shown and delete it, each from another process,
    and time each until the open page shows it. `label` keeps repeated rounds apart."""
    page.evaluate(WATCH_CARDS)  # type: ignore[attr-defined]
    text = f"A new fact from another process {label}"
    written_at = write_elsewhere(database, "add", text)
    added = seconds_until(page, "added", text, written_at, page.locator(".card", has_text=text))  # type: ignore[attr-defined]
    on_top = text in page.locator("#waterfall .group .card").first.inner_text()  # type: ignore[attr-defined]
    target = page.locator("#waterfall .card").nth(PAGE - 1).get_attribute("data-id")  # type: ignore[attr-defined]
    written_at = write_elsewhere(database, "update", str(target))
    renamed = page.locator(f'.card[data-id="{target}"]', has_text="Renamed by another process")  # type: ignore[attr-defined]
    updated = seconds_until(page, "added", "Renamed by another", written_at, renamed)
    written_at = write_elsewhere(database, "delete", str(target))
    gone = page.locator(f'.card[data-id="{target}"]')  # type: ignore[attr-defined]
    deleted = seconds_until(page, "removed", str(target), written_at, gone)
    return LiveChanges(added, updated, deleted, on_top)
