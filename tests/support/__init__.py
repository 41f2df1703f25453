"""Test support shared by the test tree (and the benchmarks): paths, a loopback OpenAI-compatible endpoint with
injectable faults (``loopback``), synthetic result rows written through the real store (``synthetic``)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # the checkout
DATA = ROOT / "tests" / "data"               # test fixtures (parse corpus, replayed API payloads, …)

# a small set-operations grid of 24 items over numbers and words (pages' tests run the reference solver on it)
SMALL_GRID = {"task": "setops", "seed": 0, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
              "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
