"""The quickstart notebook runs top to bottom on the offline model (so it never rots)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"

pytestmark = pytest.mark.slow


def test_quickstart_notebook_executes_and_recalls(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # jupyter_client swaps a bare "python" for sys.executable, so the kernel is this venv's.
    command = KernelSpecManager().get_kernel_spec("python3").argv[0]
    assert command in ("python", "python3", sys.executable), command
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=120,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    outputs = [
        out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    ]
    joined = "\n".join(outputs)
    assert "User lives in Lisbon" in joined  # the memory file and the recall
    assert "bot> [offline model]" in joined
    # The fact was written before its call returned (the deployment settings the notebook sets);
    # the question was skipped by the admission scorer, and the notebook shows why.
    assert joined.count("memory write: written") == 1, joined  # feature: admission
    assert "memory write: skipped (" in joined and "question" in joined  # feature: admission
