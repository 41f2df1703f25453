"""`python -m core export-batch --config CFG --model M --out requests.jsonl` — a run's uncached prompts as an OpenAI
batch file (what ``vllm run-batch`` reads); ``import-batch`` brings the results back."""

from __future__ import annotations

import argparse

from core.cli.commands.options import add_db_option
from core.tasks import REASONING_EFFORTS

SAMPLING = ("temperature", "top_p", "top_k", "max_tokens", "seed", "reasoning_effort")


def add_batch_arguments(p) -> None:
    p.add_argument("--config", required=True, help="task config YAML (setops or quantifiers)")
    p.add_argument("--model", required=True, help="openai-compatible/<name as the server knows it> (vLLM), e.g. "
                   "openai-compatible/meta-llama/Llama-3.1-8B-Instruct, or openai/<model>")
    add_db_option(p)
    p.add_argument("--limit", type=int, default=None, help="only the first N items (N >= 1)")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature, 0–2 (default 0.25)")
    p.add_argument("--top-p", type=float, default=None, help="nucleus sampling, 0–1 (default 0.25)")
    p.add_argument("--top-k", type=int, default=None, help="top-k sampling (default 20; in the body for vLLM)")
    p.add_argument("--max-tokens", type=int, default=None, help="reply length limit in tokens (default 512)")
    p.add_argument("--seed", type=int, default=None, help="sampling seed sent to the model")
    p.add_argument("--reasoning-effort", choices=list(REASONING_EFFORTS), default=None,
                   help="reasoning_effort in every body (default none: not sent; off: no reasoning; the levels the "
                        "server lacks go as the nearest it has: data/reasoning/efforts.yaml)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export-batch", help="write a run's uncached prompts as an OpenAI batch JSONL file (for vllm run-batch)",
        description="Writes one request line per distinct prompt not yet answered (cache and run consulted), "
                    "custom_id = the prompt's cache key, sampling parameters (top_k included) in each body. Run it "
                    "with: vllm run-batch -i requests.jsonl -o results.jsonl --model M; then import-batch.")
    add_batch_arguments(p)
    p.add_argument("--out", required=True, help="the requests file (.jsonl)")
    p.add_argument("--shards", type=int, default=1,
                   help="write N files of near-equal size instead of one (OUT-00001-of-0000N.jsonl …), one per "
                        "vllm run-batch process or Ray task")
    p.set_defaults(func=export_main)

def batch_run_spec(args):
    from core.config import RunOptions, read_run_spec

    RunOptions(limit=args.limit).checked(flags=True)
    return read_run_spec(args.config, model=args.model, params={n: getattr(args, n) for n in SAMPLING})


def export_main(args: argparse.Namespace) -> int:
    from core.errors import UserError
    from core.runner.batch_files import export_batch

    if args.shards < 1 or args.shards > 10_000:
        raise UserError(f"--shards must be between 1 and 10000 (got {args.shards})")
    spec = batch_run_spec(args)
    c = export_batch(spec.config_dict(), spec.model, args.out, params=spec.params, limit=args.limit, db_path=args.db,
                     shards=args.shards)
    where = args.out if args.shards == 1 else f"{len(c['files'])} files ({c['files'][0]} …)"
    print(f"wrote {c['requests']} request(s) to {where} for run {c['run_id']} ({c['items']} items: "
          f"{c['answered']} already answered, {c['cached']} prompt(s) in the cache)")
    if c["requests"]:
        name = spec.model.split("/", 1)[1]
        print(f"next: vllm run-batch -i {args.out} -o results.jsonl --model {name}   then: python -m core "
              f"import-batch results.jsonl --config {args.config} --model {spec.model}")
    return 0
