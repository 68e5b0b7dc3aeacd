"""`make demo`: two sessions on the offline model; a fact from session 1 recalled in session 2."""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
from pathlib import Path

from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration import use_settings

SESSION_1 = ["Hi! My name is Ada and I live in Lisbon.", "I like green tea."]
SESSION_2 = "Where do I live?"
EXPECTED = "Lisbon"
# A folder the demo made: only such a folder (or an empty one) is wiped for a fresh start.
DEMO_MARKER = ".gulfstream-demo"


def show_event(event: LocalSession.Event) -> None:
    if event.tool != "read_memories":
        print(f"    [memory writer] {event.for_people()}")


async def run(data_dir: Path) -> bool:
    # The demo always uses the offline model, so that it needs no key and gives the same result,
    # and its own folder, so that it never touches your memories.
    context = Context(user_id="demo-user", model="offline/rules")
    with use_settings(memory_backend=f"yaml:{data_dir}", write_mode="local"):
        return await _run_sessions(context, data_dir)


async def _run_sessions(context: Context, data_dir: Path) -> bool:
    async with LocalSession(context, data_dir, on_memory_event=show_event) as session:
        print("== Session 1 (thread session-1)")
        for text in SESSION_1:
            print(f"you> {text}")
            reply = await session.say("session-1", text)
            print(f"bot> {reply.text}")
        await session.wait_for_writes()
        assert session.memory is not None
        remembered = session.memory.manager.list_items()
        print(f"\n== Remembered: {len(remembered)} memories (in {data_dir / 'demo-user.yaml'})")
        for memory_id, item in remembered.items():
            print(f"  {memory_id}  [{item.theme}] {item.description}")
        print("\n== Session 2 (a new thread: nothing of session 1 in its messages)")
        print(f"you> {SESSION_2}")
        reply = await session.say("session-2", SESSION_2)
        print(f"bot> {reply.text}")
    recalled = any(EXPECTED in m.get("description", "") for m in reply.related_memories)
    if recalled and EXPECTED in reply.text:
        print(f"\nOK: '{EXPECTED}', told in session 1, was recalled in session 2.")
        return True
    print(f"\nFAILED: '{EXPECTED}' was not recalled; retrieved {reply.related_memories}")
    return False


def fresh_demo_dir(data_dir: Path) -> str:
    """Empty `data_dir` for a fresh start (so session 1 really teaches) and mark it as the
    demo's; a non-empty folder without the marker may hold real memories: refused (message)."""
    if data_dir.exists() and not data_dir.is_dir():
        return f"{data_dir} is a file, not a folder"
    if data_dir.is_dir() and any(data_dir.iterdir()):
        if not (data_dir / DEMO_MARKER).is_file():
            return (
                f"{data_dir} is not empty and was not made by the demo (no {DEMO_MARKER} file): "
                "it may hold real memories, so the demo will not wipe it; pick an empty or new "
                "folder"
            )
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / DEMO_MARKER).write_text("made by python -m graph.cli.demo; wiped by its next run\n")
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", help="keep the demo's data here (default: a temporary folder)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.dir:
        data_dir = Path(args.dir)
        refusal = fresh_demo_dir(data_dir)
        if refusal:
            print(f"error: {refusal}", file=sys.stderr)
            return 2
        return 0 if asyncio.run(run(data_dir)) else 1
    with tempfile.TemporaryDirectory(prefix="gulfstream-demo-") as tmp:
        return 0 if asyncio.run(run(Path(tmp))) else 1


if __name__ == "__main__":
    sys.exit(main())
