"""`python -m core run --config CFG.yaml --model MODEL …` — run a batch with a progress bar (resumes by default)."""

from __future__ import annotations

import argparse
import sys

from core.config_files import read_yaml_file
from core.errors import ConfigError, UserError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run a config against a model (cached, concurrent, resumable)",
        description="Run every item of a task config against a model and store calls and scored results in DuckDB. "
                    "Running the same (config, model, params, base URL) again resumes it: finished items are "
                    "skipped, failed ones retried. Identical prompts already answered are served from the cache.")
    p.add_argument("--config", required=True, help="task config YAML (setops or quantifiers)")
    p.add_argument("--model", default=None, help="model spec, e.g. local/smollm2 (default), reference/solver, "
                   "openai/gpt-4o-mini, anthropic/claude-haiku-4-5, openai-compatible/NAME")
    p.add_argument("--base-url", default=None, help="endpoint of an openai-compatible server, e.g. http://host:8000/v1")
    p.add_argument("--concurrency", type=int, default=None, help="calls in flight (default: per provider)")
    p.add_argument("--db", default=None, help="DuckDB file (default: $STUDIO_DB or .studio/studio.duckdb)")
    p.add_argument("--fresh", action="store_true", help="new draws: ignore the cache and start a new run")
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--name", default=None, help="a label for the run")
    p.add_argument("--rpm", type=float, default=None, help="requests per minute limit")
    p.add_argument("--tpm", type=float, default=None, help="tokens per minute limit")
    p.add_argument("--max-attempts", type=int, default=6, help="attempts per call before it is recorded as failed")
    p.add_argument("--timeout", type=float, default=120.0, help="per-call timeout in seconds")
    p.add_argument("--temperature", type=float, default=None)
    p.add_argument("--top-p", type=float, default=None)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--max-tokens", type=int, default=None)
    p.add_argument("--seed", type=int, default=None, help="sampling seed sent to the model (where supported)")
    p.add_argument("--estimate", action="store_true", help="only print the estimate (calls, tokens, cost)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=main)


def _params(args, config: dict) -> dict:
    params = dict(config.pop("params", None) or {}) if isinstance(config.get("params"), dict) else {}
    for name in ("temperature", "top_p", "top_k", "max_tokens", "seed"):
        value = getattr(args, name)
        if value is not None:
            params[name] = value
    return params


def main(args: argparse.Namespace) -> int:
    from core import runner
    from core.models import DEFAULT_MODEL

    config = read_yaml_file(args.config)
    if "params" in config and not isinstance(config["params"], dict):
        raise ConfigError("'params' in the config must be a mapping of sampling parameters")
    params = _params(args, config)
    model = args.model or config.pop("model", None) or DEFAULT_MODEL
    config.pop("model", None)
    base_url = args.base_url or config.pop("base_url", None)
    config.pop("base_url", None)

    if args.estimate:
        est = runner.estimate(config, model, params=params, base_url=base_url, db_path=args.db, fresh=args.fresh,
                              limit=args.limit)
        cost = "unknown" if est.cost_usd is None else f"${est.cost_usd:.4f}"
        print(f"{est.run_id}: {est.n_items} items, {est.n_cached} cached/done, {est.n_calls} calls to make, "
              f"~{est.tokens_in} tokens in, ~{est.tokens_out} tokens out, estimated cost {cost}")
        return 0

    bar = None

    def on_progress(p) -> None:
        nonlocal bar
        if args.no_progress:
            return
        if bar is None:  # created on the first report, i.e. after the run was validated and started
            from tqdm import tqdm

            bar = tqdm(total=p.total, unit="item", dynamic_ncols=True, file=sys.stderr, mininterval=0.2)
        if bar.total != p.total:
            bar.total = p.total
        bar.n = p.done + p.failed
        acc = "-" if p.accuracy is None else f"{p.accuracy:.3f}"
        bar.set_postfix_str(f"cached={p.cached} failed={p.failed} acc={acc} cost=${p.cost_usd:.4f}", refresh=False)
        bar.refresh()

    try:
        progress = runner.run(config, model, params=params, base_url=base_url, db_path=args.db,
                              concurrency=args.concurrency, fresh=args.fresh, name=args.name, limit=args.limit,
                              rpm=args.rpm, tpm=args.tpm, max_attempts=args.max_attempts, call_timeout=args.timeout,
                              on_progress=on_progress)
    finally:
        if bar is not None:
            bar.close()
    acc = "-" if progress.accuracy is None else f"{progress.accuracy:.3f}"
    print(f"run {progress.run_id}: {progress.status}; {progress.done}/{progress.total} answered "
          f"({progress.cached} cached, {progress.calls} calls this time), {progress.failed} failed, "
          f"accuracy {acc}, cost ${progress.cost_usd:.4f}, {progress.elapsed:.1f} s")
    if progress.status == "error":
        raise UserError(progress.error or "the run failed")
    if progress.failed:
        print(f"{progress.failed} item(s) failed; run the same command again to retry them", file=sys.stderr)
        return 1
    return 0
