"""Recall cannot fall silently: every recall development set's held-out sample, measured again
with the default fused retrieval, is at least what bench/recall_floor.json pins, less one
question (bench/recall_floor.py says how the sample is drawn and how to pin a change)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from memory.retrieval.embedder import OfflineEncoder

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing"),
]
BENCH = Path(__file__).resolve().parents[2] / "bench"


def floor_module() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("recall_floor", BENCH / "recall_floor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_development_set_falls_below_its_pinned_held_out_recall() -> None:
    floor = floor_module()
    pinned = json.loads(floor.FLOOR.read_text(encoding="utf-8"))
    measured = floor.measure()
    # Every set with committed text is pinned, and every pinned set was measured: a set added
    # without a floor, or one that stopped loading, is not a silent pass.
    assert set(measured) == set(pinned["sets"])
    assert floor.falls(pinned, measured) == []


def test_a_lower_figure_is_reported_as_a_fall() -> None:
    floor = floor_module()
    pinned = {"sets": {"s": {"sample": {"n": 20, "fused@5": 0.60, "fused@10": 0.70}}}}
    within = {"s": {"n": 20, "fused@5": 0.55, "fused@10": 0.70}}  # one question: noise
    fallen = {"s": {"n": 20, "fused@5": 0.50, "fused@10": 0.70}}  # two questions
    assert floor.falls(pinned, within) == []
    assert floor.falls(pinned, fallen) == ["s fused@5: 0.500, pinned 0.600 (noise 0.050, n=20)"]
