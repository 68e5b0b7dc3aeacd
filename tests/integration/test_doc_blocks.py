"""Every fenced code block of README.md, CHANGELOG.md, docs/*.md and webapp/README.md is run or
checked the way a reader uses it, so a doc cannot drift from the code (issue 45):

- python: run as a script by a fresh interpreter, in a temporary folder, with a clean environment
  (no model key: the offline model answers; the data and settings in that folder; the project on
  PYTHONPATH). A block that defines `test_*` functions runs under pytest in a copy of the app
  with tests/conftest.py. A block that talks to `make dev`'s URL runs against a real
  `langgraph dev` serving a copy of the app.
- pycon: run by doctest, so the results it shows are compared too.
- json: parsed (a fragment of an object's keys inside braces). A langgraph.json's graphs, http
  app and auth name files that define those names, and keep what the project's langgraph.json
  has; an MCP client's command is checked as a shell line, its URL path must be served.
- bash, and unlabelled blocks of commands: each command checked without side effects. `make`:
  `make -n` of the target exits 0 and each VAR= given is read by its recipe; `python -m`: the
  module imports and, when it is a command, `--help` exits 0 and lists the flags used; the
  variables set are ones the code reads. A recipe that starts `make dev` and then calls `curl`
  runs: the server on a copy of the app (with the doc's langgraph.json when it shows one), each
  curl against it.
- text, and unlabelled diagrams and trees: the files, `file.py:name` references and code names
  shown exist, and a `START → … → END` chain is the chat graph's.

A block that cannot run here says why right before its fence:
`<!-- doc-test: skip (needs a provider key) -->`; test_skipped_blocks_say_why lists them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from memory.integration.settings import Settings
from tests.e2e.server import DevServer, copy_app
from tests.integration.doc_blocks import (
    Block,
    all_blocks,
    chain_problem,
    chains,
    code_names,
    command_lines,
    extends,
    langgraph_references,
    make_arguments,
    module_and_flags,
    names_in_source,
    parse_json,
    reference_problem,
    skip_reason,
    split_command,
    stray_markers,
    tree_problems,
)
from tests.integration.test_docs_name_real_files import ROOT

BLOCKS = all_blocks()
MAX_SKIPS = 2  # a skipped block is one a reader cannot trust: keep them rare
MAKE_DEV_URL = "http://127.0.0.1:2024"  # what `make dev` serves, as the docs write it
BIN = Path(sys.executable).parent
SENTINEL = "doc-test-sentinel"
# What a fresh machine's shell must not bring in: keys, base URLs, the developer's settings.
SHELL_PREFIXES = ("GULFSTREAM_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_", "ANTHROPIC_")
# The test files a doc's test block needs beside the app: the settings fixture and the fakes.
TEST_SUPPORT = (
    "tests/__init__.py",
    "tests/conftest.py",
    "tests/fakes.py",
    "tests/unit/__init__.py",
)
TIMEOUT = 240


def blocks(*kinds: str, slow: bool = False) -> list[Any]:
    """The unskipped blocks of these kinds as parameters named `doc#n`, marked slow when `slow`
    or when a check of theirs starts an interpreter or a server."""
    chosen = [block for block in BLOCKS if block.kind in kinds and block.skip is None]
    return [
        pytest.param(block, id=block.id, marks=[pytest.mark.slow] if slow or starts(block) else [])
        for block in chosen
    ]


def starts(block: Block) -> bool:
    """Whether checking a shell or JSON block runs Python or a server (make -n alone is quick)."""
    words = ("python", "mcpServers", "langgraph ", "curl")
    return block.kind in ("shell", "json") and any(word in block.text for word in words)


def clean_env(folder: Path, **extra: str) -> dict[str, str]:
    """A new user's shell: no key (the offline model answers), the settings' data in `folder`,
    the project importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SHELL_PREFIXES)}
    env.update(
        PYTHONPATH=str(ROOT),
        GULFSTREAM_DATA_DIR=str(folder / "data"),
        GULFSTREAM_MEMORY_BACKEND=f"yaml:{folder / 'data' / 'memory'}",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
    )
    return {**env, **extra}


def run(command: list[str], block: Block, cwd: Path, env: dict[str, str]) -> str:
    """`command`'s output; the test fails naming the block when it exits non-zero."""
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, (
        f"{block.id} (line {block.line}): {shlex.join(command)}\n{output[-4000:]}"
    )
    return output


# ── the server some blocks talk to ───────────────────────────────────────


def start_server(app: Path, env: dict[str, str], folder: Path) -> DevServer:
    """`langgraph dev` on `app` (make dev's flags, with --no-reload), ready; nothing of this
    process's environment that a fresh shell would not have."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith(SHELL_PREFIXES)]:
            patch.delenv(name)
        dev = DevServer(app, {**clean_env(folder), **env, "PYTHONPATH": str(app)})
    if not dev.wait_ready(120):
        dev.stop()
        pytest.fail(f"langgraph dev did not become ready:\n{dev.log()[-5000:]}")
    return dev


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """`make dev` as a deployment runs it: memories in the server's store, the MCP endpoint on
    (docs/MCP.md)."""
    folder = tmp_path_factory.mktemp("doc-server")
    env = {"GULFSTREAM_MEMORY_BACKEND": "store", "GULFSTREAM_MCP": "1"}
    dev = start_server(copy_app(folder / "app"), env, folder)
    yield dev
    dev.stop()


def served_routes(url: str) -> dict[str, set[str]]:
    """The server's routes (`/threads/{thread_id}`) and their methods, from its OpenAPI."""
    import urllib.request

    with urllib.request.urlopen(f"{url}/openapi.json", timeout=10) as response:
        spec = json.load(response)
    return {path: {method.upper() for method in item} for path, item in spec["paths"].items()}


def serves(routes: dict[str, set[str]], path: str, method: str) -> bool:
    def pattern(route: str) -> str:
        parts = route.split("/")
        return "/".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts)

    return any(
        method in methods and re.fullmatch(pattern(route), path)
        for route, methods in routes.items()
    )


# ── the blocks and their markers ─────────────────────────────────────────


def test_every_block_has_a_checker() -> None:
    assert BLOCKS, "no fenced block found: the parser broke"
    unknown = [f"{block.id}: ```{block.language}" for block in BLOCKS if not block.kind]
    assert not unknown, f"no checker for these blocks' language: {unknown}"


def test_skipped_blocks_say_why() -> None:
    skipped = {block.id: block.skip for block in BLOCKS if block.skip is not None}
    print("skipped doc blocks:", skipped or "none")
    assert all(skipped.values()), f"a skip marker without a reason: {skipped}"
    assert len(skipped) <= MAX_SKIPS, f"too many skipped doc blocks: {skipped}"
    assert not stray_markers(), f"doc-test markers not right before a fence: {stray_markers()}"


# ── python ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize("block", blocks("python", slow=True))
def test_python_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """In a fresh interpreter; against a real server when it talks to make dev's URL."""
    source = block.text
    server: DevServer | None = None
    if MAKE_DEV_URL in source:
        server = request.getfixturevalue("dev_server")
        source = source.replace(MAKE_DEV_URL, server.url)
        if "memories_dead" in source:  # a block that sends failed writes again meets one
            plant_failed_write(server.url, "alice")
    before = set(os.listdir(ROOT))
    run_script(block, source, tmp_path)
    if server is not None and "memories_dead" in source:
        left = failed_writes(server.url, "alice")
        assert not left, f"{block.id}: the failed write was not sent again: {left}"
    assert set(os.listdir(ROOT)) <= before, f"{block.id} wrote into the checkout"


def run_script(block: Block, source: str, folder: Path) -> str:
    """`python block.py` in `folder`, as a reader runs a snippet saved there."""
    (folder / "block.py").write_text(source, encoding="utf-8")
    return run([sys.executable, "block.py"], block, folder, clean_env(folder))


def plant_failed_write(url: str, user_id: str) -> None:
    """What the writer graph records after its last attempt (writer_graph._record_dead_write)."""
    from langgraph_sdk import get_sync_client

    from memory import Turn

    turn = Turn.of(user_id, [{"role": "user", "content": "I live in Lisbon."}])
    record = {
        "turn_id": turn.turn_id,
        "error": "TimeoutError: the writer model did not answer",
        "failed_at": "2026-01-05T10:00:00+00:00",
        "attempts": 4,
        "input": {"turn": turn.to_dict()},
    }
    get_sync_client(url=url).store.put_item(["memories_dead", user_id], turn.turn_id, record)


def failed_writes(url: str, user_id: str) -> list[dict[str, Any]]:
    from langgraph_sdk import get_sync_client

    items = get_sync_client(url=url).store.search_items(["memories_dead", user_id], limit=100)
    return list(items["items"])


@pytest.mark.slow
@pytest.mark.parametrize("block", blocks("pytest"))
def test_test_block_passes_in_a_copy_of_the_project(block: Block, tmp_path: Path) -> None:
    """As a reader adds it: a file in tests/unit/ of their checkout, run by pytest."""
    tree = copy_app(tmp_path / "project")
    for name in TEST_SUPPORT:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    (tree / "tests/unit/test_from_the_docs.py").write_text(block.text, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "no:langsmith_plugin", "tests/unit/test_from_the_docs.py"]  # fmt: skip
    output = run(command, block, tree, clean_env(tmp_path, PYTHONPATH=str(tree)))
    assert " passed" in output and "skipped" not in output, f"{block.id}:\n{output[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("block", blocks("pycon"))
def test_interactive_block_shows_what_python_answers(block: Block, tmp_path: Path) -> None:
    (tmp_path / "block.txt").write_text(block.text, encoding="utf-8")
    # `...` stands for any text, and a long result may wrap: as a reader would read it.
    options = ["-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE"]
    run(
        [sys.executable, "-m", "doctest", *options, "block.txt"],
        block,
        tmp_path,
        clean_env(tmp_path),
    )


@pytest.mark.slow
def test_a_block_importing_a_moved_module_fails_naming_the_block(tmp_path: Path) -> None:
    moved = "from graph.settings import get_settings\n\nprint(get_settings())\n"  # 0.2's path
    block = Block("docs/EXAMPLE.md", 3, 10, "python", moved, None)
    with pytest.raises(
        AssertionError, match=r"docs/EXAMPLE\.md#3 \(line 10\)(.|\n)*graph\.settings"
    ):
        run_script(block, block.text, tmp_path)


# ── json ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("block", blocks("json"))
def test_json_block_names_what_exists(
    block: Block, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    value = parse_json(block.text)
    if {"graphs", "http", "auth"} & set(value):
        problems = list(filter(None, map(reference_problem, langgraph_references(value))))
        real = json.loads((ROOT / "langgraph.json").read_text())
        if "graphs" in value:  # a whole langgraph.json: the project's, with the doc's additions
            problems += extends(real, value)
        else:
            problems += extends({key: real[key] for key in value if key in real}, value)
        assert not problems, f"{block.id}: {problems}"
    elif "mcpServers" in value:
        for server in value["mcpServers"].values():
            if "args" in server:
                check_python_module(block, ["python", *server["args"]], tmp_path)
            if "url" in server:
                path = urlsplit(server["url"]).path
                answer = probe(request.getfixturevalue("dev_server").url + path)
                assert answer != 404, f"{block.id}: {path} is not served ({answer})"
    else:
        pytest.fail(f"{block.id}: a JSON block this test does not know how to check")


def probe(url: str) -> int:
    """The status a POST of an empty JSON object to `url` gets."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=b"{}", method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


# ── shell ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("block", blocks("shell"))
def test_shell_block_commands_exist(
    block: Block, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    recipe = is_recipe(block)
    for line in command_lines(block.text):
        assignments, argv = split_command(line)
        for name in assignments:
            assert known_variable(name), f"{block.id}: {name} is read nowhere in the project"
        if not argv:
            continue
        program = argv[0]
        if program == "make":
            check_make(block, argv)
        elif program.endswith(("python", "python3")):
            check_python_module(block, argv, tmp_path)
        elif program.endswith("langgraph"):
            help_text = run(
                [str(BIN / "langgraph"), *argv[1:2], "--help"], block, tmp_path, clean_env(tmp_path)
            )
            missing = [
                flag
                for flag in argv[2:]
                if flag.startswith("--") and flag.split("=")[0] not in help_text
            ]
            assert not missing, f"{block.id}: langgraph {argv[1]} has no {missing}"
        elif program == "curl":
            if not recipe:  # a recipe's curl is run: test_recipe_runs_against_a_real_server
                check_curl_route(block, argv, request.getfixturevalue("dev_server").url)
        else:
            pytest.fail(f"{block.id}: no check for `{program}` (add one to this test): {line}")


def check_curl_route(block: Block, argv: list[str], server_url: str) -> None:
    """The route a curl calls is one the server has, for its method."""
    url = next(word for word in argv if word.startswith("http"))
    method = argv[argv.index("-X") + 1] if "-X" in argv else "POST" if "-d" in argv else "GET"
    path = urlsplit(url).path
    assert serves(served_routes(server_url), path, method), f"{block.id}: no {method} {path}"


def known_variable(name: str) -> bool:
    """A GULFSTREAM_ setting, a run context field read from the environment, or a name the
    project's code or Makefile reads (OPENAI_BASE_URL, PORT)."""
    from graph.context import Context

    fields = set(Settings.__dataclass_fields__) | set(Context.__dataclass_fields__)
    setting = name.removeprefix("GULFSTREAM_").lower()
    return (name.startswith("GULFSTREAM_") and setting in fields) or names_in_source(name)


def check_make(block: Block, argv: list[str]) -> None:
    """`make -n` of the targets exits 0 (the venv's stamp taken as made, so nothing is built),
    and each VAR=value is read: replaced by a sentinel, the recipe prints it."""
    targets, variables = make_arguments(argv)
    assert targets, f"{block.id}: `{shlex.join(argv)}` names no target"

    def dry_run(values: dict[str, str]) -> str:
        command = ["make", "-n", "--no-print-directory", "-o", ".venv/.installed", f"BIN={BIN}",
                   *(f"{k}={v}" for k, v in values.items()), *targets]  # fmt: skip
        return run(command, block, ROOT, clean_env(ROOT))

    dry_run(variables)
    for name in variables:
        printed = dry_run({**variables, name: SENTINEL})
        assert SENTINEL in printed, f"{block.id}: make {' '.join(targets)} does not read {name}"


def check_python_module(block: Block, argv: list[str], folder: Path) -> None:
    """`python -m MODULE --flags`: MODULE imports; a command (argparse) answers --help with
    every flag the doc passes."""
    assert "-m" in argv, f"{block.id}: `{shlex.join(argv)}`: only `python -m MODULE` is checked"
    module, flags = module_and_flags(argv)
    spec = importlib.util.find_spec(module)
    assert spec is not None, f"{block.id}: no module {module}"
    if spec.submodule_search_locations:
        spec = importlib.util.find_spec(f"{module}.__main__")
        assert spec is not None, f"{block.id}: {module} has no __main__"
    if "argparse" not in Path(str(spec.origin)).read_text(encoding="utf-8"):
        return  # not a command that answers --help: importable is what can be checked
    help_text = run([sys.executable, "-m", module, "--help"], block, folder, clean_env(folder))
    missing = [flag for flag in flags if flag not in help_text]
    assert not missing, f"{block.id}: python -m {module} has no {missing}"


def is_recipe(block: Block) -> bool:
    lines = command_lines(block.text)
    return any(line.startswith("make dev") for line in lines) and any(
        line.startswith("curl") for line in lines
    )


@pytest.mark.slow
@pytest.mark.parametrize("block", [b for b in blocks("shell") if is_recipe(b.values[0])])
def test_recipe_runs_against_a_real_server(block: Block, tmp_path: Path) -> None:
    """The exports, `make dev` (with the doc's langgraph.json when the doc shows one), then
    each curl against it; a curl carrying a bearer token must also be refused without it."""
    lines = command_lines(block.text)
    exports = [line for line in lines if line.startswith("export ")]
    script = "\n".join(["set -e", *exports, "env -0"])
    shell = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env=clean_env(tmp_path)
    )
    env = dict(item.split("=", 1) for item in shell.stdout.split("\0") if "=" in item)
    env = {name: value for name, value in env.items() if name.startswith("GULFSTREAM_")}
    app = copy_app(tmp_path / "app")
    manifests = [parse_json(b.text) for b in BLOCKS if b.doc == block.doc and b.kind == "json"]
    manifest = next((m for m in manifests if "graphs" in m), None)
    if manifest is not None:
        (app / "langgraph.json").write_text(json.dumps(manifest, indent=2))
    server = start_server(app, env, tmp_path)
    try:
        for line in (line for line in lines if line.startswith("curl")):
            status, body = curl(line.replace(MAKE_DEV_URL, server.url), block, tmp_path)
            assert 200 <= status < 300, f"{block.id}: {line} answered {status}: {body}"
            if "Authorization: Bearer" in line:
                words = shlex.split(line)
                header = words.index("-H")
                without = shlex.join(words[:header] + words[header + 2 :])
                status, body = curl(without.replace(MAKE_DEV_URL, server.url), block, tmp_path)
                assert status in (401, 403), f"{block.id}: without the token {status}: {body}"
    finally:
        server.stop()


def curl(line: str, block: Block, folder: Path) -> tuple[int, str]:
    output = run(
        ["bash", "-c", line + " -sS -w '\\n%{http_code}'"], block, folder, clean_env(folder)
    )
    body, _, status = output.rstrip().rpartition("\n")
    return int(status), body


# ── diagrams and trees ───────────────────────────────────────────────────


@pytest.fixture(scope="module")
def graph_edges() -> set[tuple[str, str]]:
    from graph.agent import graph

    return {(edge.source, edge.target) for edge in graph.get_graph().edges}


@pytest.mark.parametrize("block", blocks("text"))
def test_diagram_names_what_exists(block: Block, graph_edges: set[tuple[str, str]]) -> None:
    problems = tree_problems(block.text)
    problems += [
        f"{name}: in no source file"
        for name in sorted(code_names(block.text))
        if not names_in_source(name)
    ]
    problems += list(
        filter(None, (chain_problem(steps, graph_edges) for steps in chains(block.text)))
    )
    assert not problems, f"{block.id} (line {block.line}): {problems}"


def test_the_checks_read_blocks_as_the_docs_write_them() -> None:
    tree = "graph/     the app\n  agent.py  nodes.py   the chat graph, run by cli/\n  gone.py   x\n"
    assert tree_problems(tree) == ["graph/gone.py: not found"]
    assert tree_problems("memory/   who/what, `memory/long_term.py:LongTermMemory`") == []
    assert tree_problems("see graph/agent.py:nothing") == [
        "graph/agent.py:nothing: graph/agent.py does not define nothing"
    ]
    assert split_command("A=1 make chat USER=ada  # a note") == (
        {"A": "1"},
        ["make", "chat", "USER=ada"],
    )
    assert command_lines("make a \\\n  B=2\n# c\n$ make d\n") == ["make a B=2", "make d"]
    [steps] = chains("START → retrieve_memory → [compact] → agent ⇄ tools → ltm_write → END")
    edges = {("__start__", "a"), ("a", "b"), ("b", "a"), ("b", "__end__")}
    assert (
        chain_problem([(["__start__"], False), (["a", "b"], False), (["__end__"], False)], edges)
        is None
    )
    assert chain_problem([(["__start__"], False), (["b"], False)], edges) is not None
    assert [nodes for nodes, _ in steps][2:4] == [["compact"], ["agent", "tools"]]
    assert skip_reason(["<!-- doc-test: skip (needs a provider key) -->", ""]) == (
        "needs a provider key"
    )
    assert skip_reason(["<!-- doc-test: skip -->"]) == "" and skip_reason(["text"]) is None
    routes = {"/threads": {"POST"}, "/threads/{thread_id}": {"GET"}}
    assert serves(routes, "/threads/t1", "GET") and not serves(routes, "/threads/t1", "POST")
    assert parse_json('"http": {"app": "x"},\n"auth": {"path": "y"}\n') == {
        "http": {"app": "x"},
        "auth": {"path": "y"},
    }
