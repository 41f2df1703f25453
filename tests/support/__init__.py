"""Test support shared by the test tree (and the benchmarks): paths, a loopback OpenAI-compatible endpoint with
injectable faults (``loopback``), synthetic result rows written through the real store (``synthetic``)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # the checkout
DATA = ROOT / "tests" / "data"               # test fixtures (parse corpus, replayed API payloads, …)
