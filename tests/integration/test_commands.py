"""`make demo`, `make chat` and the snapshot targets as a user runs them: real processes, real
files (integration: each test starts a process, so they stay out of `make unit`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import graph.cli.demo as demo
from memory.integration.app_text import current_app_text

PROJECT = Path(__file__).resolve().parents[2]
PROFILE = current_app_text().section_name(
    "profile", "en"
)  # where the offline model files "I work at …"


def offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
    env["GULFSTREAM_MEMORY_BACKEND"] = f"yaml:{tmp_path / 'memory'}"
    return env


def test_demo_exits_zero_after_recall(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graph.cli.demo", "--dir", str(tmp_path / "demo")],
        cwd=PROJECT,
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: 'Lisbon', told in session 1, was recalled in session 2." in done.stdout
    assert "User lives in Lisbon" in (tmp_path / "demo" / "demo-user.yaml").read_text()


def test_demo_exits_non_zero_when_recall_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "EXPECTED", "Madrid")  # never told, so it cannot be recalled
    assert demo.main(["--dir", str(tmp_path / "demo")]) == 1
    assert "FAILED" in capsys.readouterr().out


def run_chat(tmp_path: Path, commands: str) -> subprocess.CompletedProcess[str]:
    """`make chat` as a user runs it, offline, typing `commands` line by line."""
    return subprocess.run(
        [sys.executable, "-m", "graph.cli.chat", "--data", str(tmp_path / "chat")],
        cwd=PROJECT,
        env=offline_env(tmp_path),
        input=commands,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_chat_writes_lists_and_forgets(tmp_path: Path) -> None:
    commands = "My name is Bob and I work at Acme.\n/memories\n/forget Acme\n/memories\n/quit\n"
    done = run_chat(tmp_path, commands)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "(memory) create_memory" in out  # the user sees when memory was written
    assert "forgot" in out and "User works at Acme" in out
    after_forget = out.split("forgot", 1)[1]
    assert (
        "User's name is Bob" in after_forget
        and f"[{PROFILE}] User works at Acme" not in after_forget
    )
    memory_file = (tmp_path / "memory" / "default.yaml").read_text()
    assert "deleted: true" in memory_file  # forgetting is a tombstone, undoable
    assert (tmp_path / "chat" / "threads.sqlite").exists()


def test_chat_ended_at_once_or_after_questions_leaves_no_pending_task(tmp_path: Path) -> None:
    # The session's queue was started unregistered: /quit logged "Task was destroyed but it is
    # pending!" at exit.
    for commands in ("/quit\n", "Where do I live?\n/quit\n"):
        done = run_chat(tmp_path, commands)
        assert done.returncode == 0, done.stderr
        assert "Task was destroyed" not in done.stderr, done.stderr


def test_chat_cost_shows_the_model_calls_by_purpose_and_small_talk_costs_no_writer_call(
    tmp_path: Path,
) -> None:
    commands = "ok\n/cost\nMy name is Bob.\n/memories\n/cost\n/quit\n"
    done = run_chat(tmp_path, commands)
    assert done.returncode == 0, done.stderr
    after_ok, after_fact = done.stdout.split("you so far:", 2)[1:]
    assert after_ok.split("\n")[0].strip().startswith("chat 1 call")  # "ok": no writer call
    assert "writer" not in after_ok.split("you>")[0]
    totals = after_fact.split("you>")[0]
    assert "chat 2 calls" in totals and re.search(r"writer \d+ calls? \(\d+ in", totals), totals


def run_make(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # BIN: this interpreter's folder, so the test works in a checkout without .venv; -o: never
    # install a venv from inside a test.
    bin_folder = f"BIN={Path(sys.executable).parent}"
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "-o", ".venv/.installed", bin_folder, *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_make_export_and_import_move_a_users_memory(tmp_path: Path) -> None:
    from memory.store.backends.yaml_files import YamlMemoryManager

    store = tmp_path / "memory"
    YamlMemoryManager(str(store), "alice").add("用户喜欢喝茶", "品味")
    env = {**offline_env(tmp_path), "USER": "login-name"}  # the shell's $USER is not the user
    assert "--user" not in run_make("-n", "export", env=env).stdout
    exported = run_make("export", "USER=alice", f"BACKEND=yaml:{store}", env=env)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    snapshot = store / "memory_backup" / "alice.jsonl.gz"
    assert snapshot.exists()
    imported = run_make("import", "USER=bob", f"FILE={snapshot}", env=env)  # backend from env
    assert imported.returncode == 0, imported.stdout + imported.stderr
    bob = YamlMemoryManager(str(store), "bob")
    assert [item.description for item in bob.list_items().values()] == ["用户喜欢喝茶"]


def test_chat_back_starts_a_sibling_branch_that_does_not_see_the_task(tmp_path: Path) -> None:
    commands = (
        "My name is Bob.\nLet's plan a trip to Kyoto.\n/memories\n/back\n"
        "Bob, how is the Kyoto trip?\n/quit\n"
    )
    done = run_chat(tmp_path, commands)
    assert done.returncode == 0, done.stderr
    listing, after_back = done.stdout.split("sibling branch of the one taken back", 1)
    assert "(branch) Current task: plan a trip to Kyoto" in listing  # written, branch scope
    reply = after_back.split("bot>", 1)[1].split("you>", 1)[0]
    assert "User's name is Bob" in reply and "Kyoto" not in reply


def test_forget_needs_an_id_or_a_unique_match_and_restore_undoes_it(tmp_path: Path) -> None:
    from memory.integration.chat_commands import forget, restore
    from memory.store.backends.yaml_files import YamlMemoryManager

    manager = YamlMemoryManager(str(tmp_path), "ada")
    for text in ("User likes tea", "User lives in Lisbon", "User works at Acme", "User is tall"):
        manager.add(text, "identity")
    ambiguous = forget(manager, "a")
    assert "nothing forgotten" in ambiguous and len(manager.list_items()) == 4
    assert all(text in ambiguous for text in ("User likes tea", "User works at Acme"))
    done = forget(manager, "lisbon")  # the only memory that contains it
    [gone] = manager.deleted_items()
    assert f"forgot {gone}" in done and f"/restore {gone}" in done
    assert "Lisbon" not in " ".join(i.description for i in manager.list_items().values())
    assert "no forgotten memory has the id 'nope'" in restore(manager, "nope")
    assert f"restored {gone}" in restore(manager, gone)
    assert len(manager.list_items()) == 4 and not manager.deleted_items()
    by_id = next(iter(manager.list_items()))
    assert f"forgot {by_id}" in forget(manager, by_id)


def test_demo_refuses_a_folder_it_did_not_make_and_reuses_its_own(tmp_path: Path) -> None:
    real = tmp_path / "data"
    real.mkdir()
    (real / "alice.yaml").write_text("items: {}\n")
    assert demo.main(["--dir", str(real)]) == 2
    assert (real / "alice.yaml").exists()  # nothing wiped
    own = tmp_path / "demo"
    assert demo.fresh_demo_dir(own) == "" and (own / demo.DEMO_MARKER).is_file()
    (own / "old.yaml").write_text("from an earlier run")
    assert demo.fresh_demo_dir(own) == "" and not (own / "old.yaml").exists()


async def test_chat_memories_and_forget_follow_the_branch_and_never_edit_an_ancestor(
    tmp_path: Path,
) -> None:
    from graph.cli.session import LocalSession
    from graph.context import Context
    from memory.integration.chat_commands import forget, list_memories, restore
    from memory.integration.settings import use_settings
    from memory.store.branch import Provenance

    context = Context(user_id="bob", model="offline/rules")
    with use_settings(memory_backend=f"yaml:{tmp_path}/m"):
        async with LocalSession(context, tmp_path / "chat") as session:
            assert session.manager is not None
            manager = session.manager
            reply = await session.say("t", "My name is Bob.")
            assert (reply.memory_write["mode"], reply.memory_write["status"]) == (
                "local",
                "journaled",
            )
            first_end = await session.latest_checkpoint_id("t")
            await session.say("t", "Let's plan a trip to Kyoto.")
            second_end = await session.latest_checkpoint_id("t")
            await session.say("t", "I like tea.")
            await session.wait_for_writes()
            latest = await session.latest_checkpoint_id("t")
            here = await session.lineage_at("t", latest)
            assert "(branch) Current task: plan a trip to Kyoto" in list_memories(manager, here)
            # /back to the first turn: the Kyoto plan belongs to the branch taken back.
            back = await session.lineage_at("t", first_end)
            assert "Kyoto" not in list_memories(manager, back) and "Bob" in list_memories(
                manager, back
            )
            assert "no memory matches 'kyoto'" in forget(manager, "kyoto", back)

            [kyoto_id] = [i for i, m in manager.list_items().items() if "Kyoto" in m.description]
            before = manager.get(kyoto_id)
            done = forget(manager, "kyoto", here, Provenance(thread_id="t", checkpoint_id=latest))
            tombstone = done.split("/restore ")[1].rstrip(")")
            assert f"forgot {kyoto_id}" in done and tombstone != kyoto_id
            assert manager.get(kyoto_id) == before  # the ancestor's item is untouched
            assert "Kyoto" not in list_memories(manager, here)  # gone from this branch
            await session.say("t", "How is the trip to Kyoto going?", checkpoint_id=latest)
            sibling = await session.lineage_at("t", await session.latest_checkpoint_id("t"))
            assert "Kyoto" not in list_memories(manager, sibling)  # a descendant: still forgotten
            before_tea = await session.lineage_at("t", second_end)
            assert "Kyoto" in list_memories(manager, before_tea)  # a branch forked earlier keeps it
            assert f"restored {tombstone}" in restore(manager, tombstone)
            assert "Kyoto" in list_memories(manager, here)
    assert (tmp_path / "m" / "bob.yaml").exists()  # the deployment's backend
    assert (tmp_path / "m" / "write-journal.sqlite").exists()  # the journal beside the store


@pytest.mark.uses("archive")
def test_chat_search_finds_past_conversations_on_this_branch_and_make_archive_rebuilds_them(
    tmp_path: Path,
) -> None:
    commands = (
        "我下周要去上海出差\nThe hotel is near the Bund.\n/back\nActually I will stay in Pudong.\n"
        "/search 上海\n/search Bund\n/search hotels\n/search\n/quit\n"
    )
    done = run_chat(tmp_path, commands)
    assert done.returncode == 0, done.stderr
    searches = done.stdout.split("you> ")[-5:]
    assert "» " in searches[0] and "我下周要去上海出差" in searches[0]
    assert "No archived message matches." in searches[1]  # the branch taken back is hidden
    assert "No archived message matches." in searches[2]
    assert "usage: /search <text>" in searches[3]
    archive = tmp_path / "memory" / "conversations" / "default.sqlite"
    assert archive.exists()
    archive.unlink()  # lost: rebuilt from the checkpoints
    rebuilt = subprocess.run(
        [sys.executable, "-m", "memory.integration.admin.archive", "rebuild", "--threads",
         str(tmp_path / "chat" / "threads.sqlite")],
        cwd=PROJECT, env=offline_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "default: " in rebuilt.stdout and archive.exists()
    found = subprocess.run(
        [sys.executable, "-m", "memory.integration.admin.archive", "search", "Pudong", "--user", "default"],  # noqa: E501
        cwd=PROJECT, env=offline_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Actually I will stay in Pudong." in found.stdout


def test_chat_why_shows_what_a_reply_drew_on_and_private_keeps_a_thread_out_of_memory(
    tmp_path: Path,
) -> None:
    commands = (
        "From now on, please always answer me in short bullet points.\nI work at Acme.\n"
        "/memories\nWhat about films tonight?\n/why\n"
        "/private\nMy codename is Zanzibarquartz.\n/why\n/quit\n"
    )
    done = run_chat(tmp_path, commands)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    why = out.split("you> ")[5]  # the answer to the first /why
    assert "[standing instructions] User's instruction: From now on" in why
    assert "Acme" not in why  # retrieval found nothing about films: only the instruction
    started, private = out.split("off the record: nothing of it is remembered", 1)
    assert "(off the record: this conversation is not remembered)" in private
    assert "(off the record" not in started
    assert "Zanzibarquartz" not in (tmp_path / "memory" / "default.yaml").read_text()
    assert not any(
        b"Zanzibarquartz" in path.read_bytes()
        for path in (tmp_path / "memory").rglob("*")
        if path.is_file()
    )


def test_make_demo_shows_what_was_remembered_in_a_few_lines_under_its_real_ids() -> None:
    """`make demo` lists the memories it made, one line each, not the YAML file; the writer's
    lines name the ids the memories really have, not the short numbers only the model sees."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
    done = run_make("demo", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "latest_update_time" not in out and "history:" not in out  # no YAML dump
    assert len(out.splitlines()) <= 25, out  # it printed 70 lines and more
    remembered = re.findall(r"^  ([0-9a-f]{6,}) +\[[^\]]+\] (.+)$", out, re.M)
    assert [text for _, text in remembered] == [
        "User's name is Ada",
        "User lives in Lisbon",
        "User likes green tea",
    ]
    written = re.findall(r"\[memory writer\] create_memory (\S+): (.+)$", out, re.M)
    assert written == remembered
    assert not re.search(r"memory \d{1,4}\b", out), out  # a model's number; an id has 8 hex digits


def test_the_chats_memory_lines_name_the_real_id(tmp_path: Path) -> None:
    done = run_chat(tmp_path, "I work as a nurse.\n/quit\n")
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "(memory)" in x]
    memory_file = (tmp_path / "memory" / "default.yaml").read_text()
    real_id = re.search(r"create_memory (\S+): User works as a nurse$", line)
    assert real_id is not None, line
    assert real_id.group(1) in memory_file
    assert "Created memory 1" not in done.stdout


def test_make_export_hints_name_the_make_variable_that_works(tmp_path: Path) -> None:
    """A backend with no default snapshot place: the hint names FILE=, what `make export`
    takes, not the module's --file; run without make, it names --file."""
    env = offline_env(tmp_path)
    done = run_make("export", "BACKEND=store:memory", "USER=hint-user", env=env)
    assert done.returncode != 0
    assert "pass FILE=<path>" in done.stderr and "--file" not in done.stderr, done.stderr
    direct = subprocess.run(
        [sys.executable, "-m", "memory.integration.admin.snapshot", "export", "--backend",
         "store:memory", "--user", "hint-user"],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert direct.returncode != 0 and "pass --file" in direct.stderr, direct.stderr
