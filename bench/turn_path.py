"""Turn path: the project functions a turn passes through, on the read side and the write side.

Run: `.venv/bin/python bench/turn_path.py [--backend sqlite]`. One real turn through
`compile_graph()` (offline model, the default YAML backend, default write mode, an in-memory
checkpointer), profiled:

- read side: from `retrieve_memory` to the BM25 ranking (`Bm25Index.search` or `.scored`): the
  project functions called on the way, and the call depth at which the ranking runs; then on to
  the finished system prompt (`build_system_prompt` returning);
- write side: from `ltm_write` to the manager's `apply` returning. "Hand-off": every function
  called until the memory consumer starts; "all of it": every project function until `apply`
  (the agent's tools and the offline model's rules included; the model itself is not project
  code). "Carried by": the functions
  that receive the turn itself, i.e. an argument that is its id, or holds it (`turn.turn_id`,
  a dict with "turn_id"); `self` is not counted, so the turn's own methods and objects that
  merely remember the id are left out. "To the store" counts those files with the store as
  one stop: the memory manager's own modules (its methods, `apply` and `has_applied`, and what
  they call) are where the turn arrives, not a layer on its way.

"Package switches" counts the calls, in the order they were made, whose file is in another of
graph/, memory/, prompts/ than the call before.

It reads only the environment and `compile_graph`, so it measures any version of the project.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PACKAGES = tuple(p for p in ("graph", "memory", "prompts", "webapp") if (ROOT / p).is_dir())
THREAD = "path"
NODES = ("retrieve_memory", "agent")


def project_name(frame: FrameType) -> str | None:
    path = Path(frame.f_code.co_filename)
    try:
        relative = path.resolve().relative_to(ROOT)
    except ValueError:
        return None
    if relative.parts[0] not in PACKAGES:
        return None
    return f"{relative}:{frame.f_code.co_qualname}"


class PathRecorder:
    """Collects project functions between a start function and a stop function, all threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.read: list[str] = []
        self.read_depth = 0
        self.prompt: list[str] = []  # retrieve_memory to the finished system prompt
        self.prompting = False
        # The threads that run the retrieve_memory and agent nodes: the writer's thread, still
        # busy with the turn before, is not part of the read.
        self.readers: set[int] = set()
        self.write: list[str] = []
        self.handoff = 0  # how many of `write` came before the consumer started
        self.carried: list[str] = []  # functions whose arguments hold the turn
        self.store: set[str] = set()  # those of them inside the store (a manager's call)
        self.armed = False  # set before the measured turn
        self.reading = False
        self.writing = False
        self.read_done = threading.Event()
        self.prompt_done = threading.Event()
        self.write_done = threading.Event()
        self.applied = 0  # turns applied, armed or not (the warm-up turn waits on it)

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        name = project_name(frame)
        if name is None:
            return
        function = frame.f_code.co_name
        applying = function == "apply" and "manager" in name.lower()
        if event == "return":
            with self.lock:
                if applying:
                    self.applied += 1
                    if self.writing:
                        self.writing = False
                        self.write_done.set()
                on_reader = threading.get_ident() in self.readers
                if function == "build_system_prompt" and self.prompting and on_reader:
                    self.prompting = False
                    self.prompt_done.set()
            return
        if not self.armed:
            return
        with self.lock:
            if function == "retrieve_memory" and not self.read_done.is_set():
                self.reading = True
                self.prompting = True
            if self.prompting and function in NODES and name.endswith(f":{function}"):
                self.readers.add(threading.get_ident())
            on_reader = threading.get_ident() in self.readers
            if self.prompting and on_reader:
                self.prompt.append(name)
            if self.reading and on_reader:
                self.read.append(name)
                # `search` ranks by BM25 alone, `scored` feeds the fusion (the default).
                if function in ("search", "scored") and "Bm25Index" in name:
                    self.read_depth = _depth(frame, "retrieve_memory")
                    self.reading = False
                    self.read_done.set()
            if (
                function in ("ltm_write", "ltm_write_sync", "altm_write")
                and not self.write_done.is_set()
            ):
                self.writing = True
            if self.writing:
                if function == "consume" and "consumer" in name and not self.handoff:
                    self.handoff = len(self.write)
                self.write.append(name)
                if _carries_turn(frame):
                    self.carried.append(name)
                    if _in_store(frame):
                        self.store.add(name.split(":")[0])


def _is_turn_id(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(f"{THREAD}:") and "@" in value


def _carries_turn(frame: FrameType) -> bool:
    """Whether an argument of this call is the measured turn's id or holds it."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    for name in code.co_varnames[:count]:
        if name == "self":
            continue
        value = frame.f_locals.get(name)
        values = list(value.values()) if isinstance(value, dict) else [value]
        values += list(value) if isinstance(value, tuple) else []
        for candidate in values:
            if _is_turn_id(candidate):
                return True
            if "Turn" in type(candidate).__name__ and _is_turn_id(getattr(candidate, "turn_id", 0)):
                return True
            if isinstance(candidate, dict) and _is_turn_id(candidate.get("turn_id")):
                return True
    return False


def _in_store(frame: FrameType) -> bool:
    """Whether this call is the store's own work: a method of a memory manager (`apply`,
    `has_applied`), or what one of them calls (the backend's row helpers)."""
    current: FrameType | None = frame
    while current is not None:
        if project_name(current) is not None and "MemoryManager." in current.f_code.co_qualname:
            return True
        current = current.f_back
    return False


def _depth(frame: FrameType, until: str) -> int:
    depth, current = 0, frame
    while current is not None:
        if project_name(current) is not None:
            depth += 1
            if current.f_code.co_name == until:
                return depth
        current = current.f_back  # type: ignore[assignment]
    return depth


def wait_for_applied_turns(recorder: PathRecorder, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while recorder.applied < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} turn(s) not applied within {timeout:g} s")
        time.sleep(0.05)


def switches(names: list[str]) -> int:
    """How often consecutive calls change package (graph/, memory/, prompts/, webapp/)."""
    tops = [name.split("/", 1)[0] for name in names]
    return sum(1 for before, after in itertools.pairwise(tops) if before != after)


def report(title: str, names: list[str], extra: str = "") -> None:
    functions = list(dict.fromkeys(names))
    files = list(dict.fromkeys(name.split(":")[0] for name in functions))
    extra = f", {switches(names)} package switches{extra}"
    print(f"== {title}: {len(files)} files, {len(functions)} functions{extra}")
    for file in files:
        inside = [name.split(":", 1)[1] for name in functions if name.startswith(file + ":")]
        print(f"  {file}: {', '.join(inside)}")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("yaml", "sqlite"), default="yaml")
    backend = parser.parse_args().backend
    tmp = Path(tempfile.mkdtemp(prefix="turn-path-"))
    where = tmp / ("memory.db" if backend == "sqlite" else "memory")
    os.environ["GULFSTREAM_MEMORY_BACKEND"] = f"{backend}:{where}"
    os.environ["GULFSTREAM_SNAPSHOT_SECONDS"] = "off"
    # Every admitted turn is written on its own, at once: the path of one turn to `apply`.
    os.environ["GULFSTREAM_WRITE_BATCH_SIZE"] = "1"
    os.environ.pop("OPENAI_API_KEY", None)
    os.environ.pop("OPENAI_BASE_URL", None)
    from langgraph.checkpoint.memory import InMemorySaver

    from graph.agent import compile_graph

    recorder = PathRecorder()
    threading.setprofile(recorder)  # threads started from here on (the writer's) are profiled
    app = compile_graph(checkpointer=InMemorySaver())
    context_args: dict[str, Any] = {}
    try:
        from graph.context import Context

        context_args["context"] = Context(user_id="path-user", model="offline/rules")
    except (ImportError, TypeError):  # pragma: no cover - another layout
        pass
    first = {"messages": [{"role": "user", "content": "My name is Ada and I live in Lisbon."}]}
    await app.ainvoke(first, {"configurable": {"thread_id": "path"}}, **context_args)
    await asyncio.to_thread(wait_for_applied_turns, recorder, 1)
    recorder.armed = True
    sys.setprofile(recorder)
    # A fact (the admission scorer would skip a bare question: it never reaches the writer).
    said = "I moved to Porto last month, where do I live now?"
    second = {"messages": [{"role": "user", "content": said}]}
    await app.ainvoke(second, {"configurable": {"thread_id": "path"}}, **context_args)
    await asyncio.to_thread(recorder.write_done.wait, 60)
    sys.setprofile(None)
    threading.setprofile(None)  # type: ignore[arg-type]
    depth = f", ranking at call depth {recorder.read_depth}"
    report("retrieve_memory → BM25 ranking", recorder.read, depth)
    report("retrieve_memory → the finished system prompt", recorder.prompt)
    carriers = list(dict.fromkeys(name.split(":")[0] for name in recorder.carried))
    route = [file for file in carriers if file not in recorder.store]
    store = [file for file in carriers if file in recorder.store]
    print(
        f"== ltm_write → the store: {len(route) + bool(store)} files carry the turn, the store "
        f"counted once ({len(route)} on the way, then the store: {', '.join(store) or 'none'})"
    )
    report("ltm_write → apply, carried by", recorder.carried)
    report("ltm_write → consumer (the hand-off)", recorder.write[: recorder.handoff])
    report("ltm_write → apply returning (all of it)", recorder.write)
    finished = (recorder.read_done, recorder.prompt_done, recorder.write_done)
    if not all(event.is_set() for event in finished):
        print("the turn did not reach the ranking or apply")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
