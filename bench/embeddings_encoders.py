"""Benchmark: embedding throughput of the offline encoders and the cost of criteria evaluation.

    python bench/embeddings_encoders.py [N_TEXTS]

Prints texts/s for MiniLM and the llama.cpp SmolLM2 encoder on N distinct demo sentences (no cache), and the time
to evaluate C1–C6 (five measures, 132-value ε grid) on the 639 demo samples. Figures depend on the machine's load.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from core.embeddings import criteria  # noqa: E402
from core.embeddings.encoders import get_encoder  # noqa: E402
from core.embeddings.samples import build_samples, load_demo  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    tuples = load_demo()
    samples = build_samples(tuples)
    texts = list(dict.fromkeys(t for s in samples for t in (s.a, s.b, s.target)))[:n]
    vectors = {}
    for name in ("minilm", "local"):
        enc = get_encoder(name)
        t0 = time.perf_counter()
        enc.encode(texts[:2])                      # load the model
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        v = enc.encode(texts)
        dt = time.perf_counter() - t0
        vectors[name] = v
        print(f"{name:<7} load+2 texts {load:6.2f} s   {len(texts)} texts in {dt:6.2f} s = {len(texts) / dt:7.1f} "
              f"texts/s   dim {v.shape[1]}")
    rng = np.random.default_rng(0)
    ops = [s.operator for s in samples]
    ea, eb, et = (rng.normal(size=(len(samples), 384)) for _ in range(3))
    t0 = time.perf_counter()
    criteria.evaluate(ops, ea, eb, et)
    print(f"criteria.evaluate on {len(samples)} samples × 384 dims, 5 measures, 5 ε values + 132-grid: "
          f"{time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
