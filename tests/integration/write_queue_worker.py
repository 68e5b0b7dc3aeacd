"""A process that runs LongTermMemory's write queue with a scripted model, for the crash tests.

    python -m tests.integration.write_queue_worker DATA_DIR send N    # queue N turns, then drain
    python -m tests.integration.write_queue_worker DATA_DIR resume    # replay the journal, drain

Either waits until the journal has no pending turn of "alice" before it stops. A turn is leased
to the process writing it for `WORKER_LEASE_SECONDS` (default: the queue's own lease).

Each turn says "fact number i"; the scripted model answers with one create_memory call per fact
in its prompt after `WORKER_MODEL_DELAY` seconds. With `WORKER_CRASH_AFTER_APPLY=<turn id>` the
process SIGKILLs itself right after the store committed that turn and before the journal marked
it done. With `WORKER_BATCH_SIZE=n` the turns are admitted as "batch" and written n at a time.

The store is YAML in DATA_DIR/memory; the journal and the trace live beside it, where
LongTermMemory keeps them (`write-journal.sqlite`, `write-journal-trace.sqlite`).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memory.admission import Admission
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Provenance
from memory.store.manager import ApplyResult, Change
from memory.writer.batching import BatchPolicy
from memory.writer.queue import RetryPolicy
from memory.writer.turn import Turn

BATCH = Admission(3.0, "batch", ("first_person_fact",))


class FactModel(GenericFakeChatModel):
    """Turns "fact number i" into create_memory("The user told fact number i."), slowly."""

    delay: float = 0.0

    def bind_tools(self, tools: Any, **kwargs: Any) -> FactModel:
        return self

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay)
        last = messages[-1]
        if isinstance(last, HumanMessage):
            facts = re.findall(r"fact number \d+", str(last.content))
            assert facts
            calls = [
                {
                    "name": "create_memory",
                    "args": {"content": f"The user told {fact}.", "section": "moments"},
                    "id": f"c{n}",
                    "type": "tool_call",
                }
                for n, fact in enumerate(facts)
            ]
            reply = AIMessage("", tool_calls=calls)
        else:
            reply = AIMessage("done")
        return ChatResult(generations=[ChatGeneration(message=reply)])


class CrashingManager(YamlMemoryManager):
    """Dies by SIGKILL just after committing one chosen turn: the worst moment for a queue."""

    def apply(
        self,
        changes: Sequence[Change],
        turn_id: str | Sequence[str],
        provenance: Provenance | None = None,
    ) -> ApplyResult:
        result = super().apply(changes, turn_id, provenance)
        turn_ids = [turn_id] if isinstance(turn_id, str) else list(turn_id)
        if os.environ.get("WORKER_CRASH_AFTER_APPLY") in turn_ids:
            os.kill(os.getpid(), signal.SIGKILL)
        return result


def turn_messages(index: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"Remember fact number {index}."},
        {"role": "assistant", "content": "I will."},
    ]


async def main(data_dir: str, mode: str, count: int) -> None:
    manager = CrashingManager(os.path.join(data_dir, "memory"), "alice")
    model = FactModel(messages=iter([]), delay=float(os.environ.get("WORKER_MODEL_DELAY", "0")))
    memory = LongTermMemory(
        manager, writer_llm=model, retry=RetryPolicy(max_attempts=3, initial_delay=0.05)
    )
    queue = memory._writer()
    # A turn this process is writing is leased to it: a process killed mid-turn keeps its lease
    # until it runs out, and only then may the next process take the turn.
    queue.lease_seconds = float(os.environ.get("WORKER_LEASE_SECONDS", queue.lease_seconds))
    batch_size = int(os.environ.get("WORKER_BATCH_SIZE", "0"))
    if batch_size:
        memory.batching = BatchPolicy(size=batch_size, quiet_seconds=600)
    replayed = memory.start()
    print(f"replayed {replayed}", flush=True)
    if mode == "send":
        for index in range(count):
            turn = Turn.of(
                "alice", turn_messages(index), turn_id=f"turn-{index}", thread_id="s",
                admission=BATCH if batch_size else None,
            )  # fmt: skip
            await memory.send(turn)
        print("queued", flush=True)
    # A turn still leased by a killed process is not in the queue yet (it is taken once the
    # lease runs out): wait until the journal has nothing pending, then drain and stop.
    deadline = time.monotonic() + 120
    while queue.journal.counts("alice")["pending"] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await memory.stop()
    print("drained", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
