"""How the paper's main grid goes out through the providers' batch interfaces: for two models of each provider, the
number of batches (split at the providers' per-batch request and byte limits), the bytes per batch, and the
estimated cost of the whole grid live vs batch (the price table's batch discount).

    python bench/batch_plan.py [--preset paper-main] [--max-requests N] [--max-bytes B]

Nothing is sent anywhere: the requests are built exactly as a --batch run builds them (same bodies, same custom_ids)
and only measured. Token counts are the runner's estimate from prompt length (no tokenizer), so the costs are
estimates of the kind ``python -m core run --estimate [--batch]`` prints.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import runner, store  # noqa: E402
from core.config import preset_run_spec  # noqa: E402
from core.models import get_model  # noqa: E402
from core.models.batch import DEFAULT_LIMITS, BatchLimits, batch_backend  # noqa: E402
from core.runner.batch import chunks  # noqa: E402
from core.runner.plan import make_plan, run_items  # noqa: E402

MODELS = ("openai/gpt-4o-mini", "openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5")


def plan_batches(config: dict, spec: str, limits: BatchLimits) -> tuple[int, list[tuple[int, int]]]:
    """(distinct prompts, [(requests, bytes) per batch]) of ``config`` on ``spec`` as a fresh --batch run sends it."""
    plan = make_plan(config, spec, None, None, None, None, "bench")
    backend = batch_backend(get_model(spec), limits)
    body, _ = backend.request_body(plan.params)
    params = plan.params.to_dict()
    keys: dict[str, str] = {}
    for it in run_items(plan):
        keys.setdefault(store.cache_key(spec, None, params, it["prompt"], 0), it["prompt"])

    def entries():
        for key, prompt in keys.items():
            entry = backend.entry(key, prompt, body)
            yield key, None, backend.entry_bytes(entry)   # the entry itself is not kept: only its size counts

    return len(keys), [(len(c), sum(n for _, _, n in c)) for c in chunks(entries(), limits)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="paper-main")
    ap.add_argument("--max-requests", type=int, default=None, help="override the providers' per-batch request limit")
    ap.add_argument("--max-bytes", type=int, default=None, help="override the providers' per-batch byte limit")
    args = ap.parse_args(argv)
    config = preset_run_spec("setops", args.preset).config_dict()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.duckdb")
        print(f"setops preset {args.preset!r}; limits per batch: " + "; ".join(
            f"{p} {lim.max_requests:,} requests / {lim.max_bytes / 2**20:.0f} MiB"
            for p, lim in DEFAULT_LIMITS.items()))
        head = (f"{'model':30} {'items':>8} {'requests':>8} {'batches':>7} {'MiB/batch (min–max)':>20} "
                f"{'MiB total':>9} {'tokens in/out (est.)':>21} {'live $':>9} {'batch $':>9}")
        print(head)
        print("-" * len(head))
        for spec in MODELS:
            provider = spec.split("/")[0]
            base = DEFAULT_LIMITS[provider]
            limits = BatchLimits(args.max_requests or base.max_requests, args.max_bytes or base.max_bytes)
            t = time.perf_counter()
            n_prompts, batches = plan_batches(config, spec, limits)
            live = runner.estimate(config, spec, db_path=db)
            batch = runner.estimate(config, spec, db_path=db, batch=True)
            sizes = [b / 2**20 for _, b in batches]
            span = f"{min(sizes):.1f}–{max(sizes):.1f}"
            tokens = f"{live.tokens_in / 1e6:.1f}M / {live.tokens_out / 1e6:.1f}M"
            print(f"{spec:30} {live.n_items:>8,} {n_prompts:>8,} {len(batches):>7} {span:>20} {sum(sizes):>9.1f} "
                  f"{tokens:>21} {live.cost_usd:>9.2f} {batch.cost_usd:>9.2f}   ({time.perf_counter() - t:.1f} s)")
            print(f"{'':30} requests per batch: {', '.join(f'{n:,}' for n, _ in batches)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
