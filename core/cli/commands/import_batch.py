"""`python -m core import-batch results.jsonl --config CFG --model M` — a batch results file (``vllm run-batch``'s, or
OpenAI's output and error files) scored and stored as a run."""

from __future__ import annotations

import argparse

from core.cli.commands.export_batch import add_batch_arguments, batch_run_spec


def register(subparsers) -> None:
    q = subparsers.add_parser(
        "import-batch", help="score and store a batch results file (vllm run-batch, or OpenAI's output files)",
        description="Matches each line's custom_id to the items of (config, model, sampling parameters) — the same "
                    "flags export-batch was given — scores and stores the answers as a run; lines that did not "
                    "succeed record their items as failed. A file that matches nothing changes nothing.")
    q.add_argument("files", nargs="+",
                   help="results file(s): vLLM's results.jsonl, or OpenAI's output and error files")
    q.add_argument("--name", default=None, help="a label for the run")
    add_batch_arguments(q)
    q.set_defaults(func=import_main)


def import_main(args: argparse.Namespace) -> int:
    from core.runner.batch_files import import_batch, import_cached
    from core.store import writing

    spec = batch_run_spec(args)
    with writing(args.db, "an import of batch output"):   # restore waits for it (core/store/writers.py)
        c = import_batch(args.files, spec.config_dict(), spec.model, params=spec.params, limit=args.limit,
                         db_path=args.db, name=args.name)
        # the prompts export-batch left out because the cache answers them: scored into the run too
        cached = import_cached(spec.config_dict(), spec.model, params=spec.params, limit=args.limit,
                               db_path=args.db, name=args.name)
    print(f"imported {c['matched']} line(s) into run {c['run_id']}: {c['answered']} item(s) answered, "
          f"{c['failed']} failed" + (f"; {c['unmatched']} line(s) matched no item of this run" if c["unmatched"]
                                     else "") + (f"; {cached} item(s) answered from the cache" if cached else ""))
    return 0
