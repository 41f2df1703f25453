"""`python -m core run --config CFG.yaml --model MODEL …` — run a config with a progress bar (resumes by default);
``--batch [--no-wait]`` through the provider's batch interface (re-attaches to batches in flight)."""

from __future__ import annotations

import argparse
import json
import socket
import sys
import urllib.request
from urllib.parse import urlsplit

from core.cli.commands.options import add_db_option
from core.config import RunOptions, read_run_spec
from core.errors import UserError
from core.models.providers import PROVIDERS
from core.tasks import REASONING_EFFORTS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run a config against a model (cached, concurrent, resumable)",
        description="Run every item of a task config against a model and store calls and scored results in DuckDB. "
                    "Running the same (config, model, params, base URL) again resumes it: finished items are "
                    "skipped, failed ones retried. Identical prompts already answered are served from the cache.")
    p.add_argument("--config", required=True, help="task config YAML (setops or quantifiers), or a SetLexSem reference "
                   "experiment YAML (configs/experiments/*.yaml) as it is")
    p.add_argument("--model", default=None, help="model spec, e.g. local/smollm2 (default), reference/solver, "
                   "openai/gpt-4o-mini, anthropic/claude-haiku-4-5, openai-compatible/NAME; vllm/HF-MODEL-OR-PATH "
                   "with --engine ray (Ray Data's vLLM processor on the cluster's GPUs)")
    p.add_argument("--base-url", default=None, help="endpoint of an openai-compatible server, e.g. "
                   "http://host:8000/v1; for openai/ and anthropic/ a proxy, gateway or compatible endpoint (live and "
                   "batch calls alike)")
    p.add_argument("--concurrency", type=int, default=None, help="calls in flight (default per provider: " + ", ".join(
        f"{p.provider} {p.default_concurrency}" for p in PROVIDERS.values() if p.live) + ")")
    add_db_option(p)
    p.add_argument("--fresh", action="store_true", help="new draws: ignore the cache and start a new run")
    p.add_argument("--limit", type=int, default=None, help="only N items (N >= 1), spread over the grid: every level of "
                   "every factor (operation, size, condition …) is represented when N allows")
    p.add_argument("--name", default=None, help="a label for the run (default: a reference YAML's STUDY_NAME)")
    p.add_argument("--rpm", type=float, default=None, help="requests per minute limit (default: none)")
    p.add_argument("--tpm", type=float, default=None, help="tokens per minute limit (default: none)")
    p.add_argument("--max-attempts", type=int, default=6, help="attempts per call before it is recorded as failed (default 6)")
    p.add_argument("--timeout", type=float, default=120.0, help="per-call timeout in seconds (default 120)")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature, 0–2 (default 0.25)")
    p.add_argument("--top-p", type=float, default=None, help="nucleus sampling, 0–1 (default 0.25)")
    p.add_argument("--top-k", type=int, default=None, help="top-k sampling (default 20; not sent to OpenAI)")
    p.add_argument("--max-tokens", type=int, default=None, help="reply length limit in tokens (default 512)")
    p.add_argument("--no-answer-cap", dest="answer_cap", action="store_const", const=False, default=None,
                   help="give answer-only approaches the full --max-tokens too (default: a cap sized to the answer)")
    p.add_argument("--no-stop", dest="stop", action="store_const", const=[], default=None,
                   help="send no stop sequence (default: the task's, e.g. </answer> for set operations)")
    p.add_argument("--answer-format", choices=["free", "constrained", "members"], default=None,
                   help="constrained: decode under the answer's form; members: and only members of A ∪ B (set "
                        "operations) — a llama.cpp grammar for the embedded models, guided decoding for "
                        "openai-compatible servers; default free")
    p.add_argument("--seed", type=int, default=None, help="sampling seed sent to the model (where supported)")
    p.add_argument("--reasoning-effort", choices=list(REASONING_EFFORTS), default=None,
                   help="how much a reasoning model thinks before it answers: reasoning_effort for openai/ and "
                        "openai-compatible/ (with the chat-template switch), adaptive thinking at this effort or a "
                        "thinking budget for anthropic/, as the model's own description says (default none: send "
                        "nothing, the provider's default; off: ask for no reasoning). A level a model lacks goes as "
                        "the nearest it has, recorded with each call (data/reasoning/efforts.yaml); a config's "
                        "'reasoning: [low, max]' crosses levels instead")
    p.add_argument("--estimate", action="store_true", help="only print the estimate (calls, tokens, cost; with "
                   "--batch at the batch price)")
    b = p.add_argument_group("provider batches (openai/ and anthropic/: half the list price, results within 24 h)")
    b.add_argument("--batch", action="store_true", help="submit the uncached prompts as provider batches instead "
                   "of live calls; the same command again re-attaches to batches in flight")
    b.add_argument("--no-wait", action="store_true", help="with --batch: submit (and collect what has ended), then "
                   "return; the run waits on its batches until the same command is run again")
    b.add_argument("--poll-interval", type=float, default=None,
                   help="with --batch: seconds between polls of the batches (default 60)")
    b.add_argument("--batch-max-requests", type=int, default=None,
                   help="requests per batch (default: the provider's limit, OpenAI 50,000, Anthropic 100,000)")
    b.add_argument("--batch-max-bytes", type=int, default=None,
                   help="bytes per batch (default: the provider's limit, OpenAI 200 MB, Anthropic 256 MB)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    r = p.add_argument_group("Ray Data (openai-compatible/ and vllm/ models; the same cache and run record)")
    r.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="ray: send the uncached requests through Ray Data — an HTTP actor pool for "
                        "openai-compatible/ models, the vLLM processor for vllm/ models (default: local)")
    r.add_argument("--ray-address", default=None, help="Ray cluster: auto (this machine is a node of it) or its GCS "
                   "address host:6379 (default, or local: a Ray started in this process; Ray Client ray:// cannot "
                   "run Ray Data)")
    r.add_argument("--ray-actors", type=int, default=2, help="HTTP actors in the pool (default 2)")
    r.add_argument("--ray-block-size", type=int, default=64,
                   help="requests per Ray block: the unit imported as it completes (default 64)")
    r.add_argument("--vllm-replicas", type=int, default=None, help="vllm/: vLLM engine replicas (data parallel; "
                   "default 1)")
    r.add_argument("--vllm-tp", type=int, default=None, help="vllm/: GPUs per replica (tensor-parallel size; "
                   "default 1)")
    r.add_argument("--vllm-batch-size", type=int, default=None,
                   help="vllm/: rows per batch sent to an engine (default 64)")
    r.add_argument("--vllm-max-model-len", type=int, default=None,
                   help="vllm/: context length the engine reserves (default: the model's)")
    r.add_argument("--vllm-accelerator", default=None, help="vllm/: GPU type the engines need, e.g. A100, H100 "
                   "(default: any)")
    # every connection, journal and session is closed when main returns: python -m core may skip the interpreter's
    # object-by-object teardown (core.cli.exit_fast)
    p.set_defaults(func=main, exit_fast=True)


def _unreachable(base_url: str, timeout: float = 5.0) -> str | None:
    """Why nothing answers at ``base_url`` (DNS or TCP connect), or None when something listens (or a proxy is
    in the way: then only a real request can tell)."""
    parts = urlsplit(base_url)
    host = parts.hostname
    if not host or urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(host):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return f"unknown host {host!r}"
    except TimeoutError:
        return f"no answer from {host}:{port} within {timeout:g} s"
    except OSError as exc:
        return f"{host}:{port}: {(exc.strerror or str(exc)).lower()}"


def _batch_limits(args, provider: str):
    """The per-batch limits: the provider's, with --batch-max-requests / --batch-max-bytes applied."""
    from core.models.batch import DEFAULT_LIMITS, BatchLimits, supports_batch

    if not supports_batch(provider):
        raise UserError(f"--batch is for openai/ and anthropic/ models, not {provider}/; for a vLLM box use "
                        "export-batch / import-batch, or the live openai-compatible/ path")
    base = DEFAULT_LIMITS[provider]
    return BatchLimits(base.max_requests if args.batch_max_requests is None else args.batch_max_requests,
                       base.max_bytes if args.batch_max_bytes is None else args.batch_max_bytes)


def _first_error(db_path, run_id: str) -> str | None:
    """The commonest error among a run's failed items (what to fix before retrying)."""
    from core import store

    try:
        with store.connect(db_path) as con:
            row = con.execute("SELECT error, count(*) AS n FROM results WHERE run_id = ? AND error IS NOT NULL "
                              "GROUP BY error ORDER BY n DESC, error LIMIT 1", [run_id]).fetchall()
    except UserError:
        return None
    return row[0][0] if row else None


def effort_notes(db_path, run_id: str) -> list[str]:
    """One line per reasoning effort of the run that some calls could not send as asked: sent as the nearest level
    the model has, or dropped (data/reasoning/efforts.yaml) — recorded with each call, said here too."""
    from core import store

    sql = ("SELECT v.reasoning, c.dropped_params, count(*) FROM v_results v JOIN calls c USING (cache_key) "
           "WHERE v.run_id = ? AND c.dropped_params LIKE '%reasoning_effort%' GROUP BY 1, 2 ORDER BY 1, 2")
    try:
        with store.connect(db_path) as con:
            rows = con.execute(sql, [run_id]).fetchall()
    except (UserError, *store.STORE_ERRORS):
        return []
    lines = []
    for asked, dropped, n in rows:
        sent = [d.split("=", 1)[1] for d in json.loads(dropped or "[]") if d.startswith("reasoning_effort=")]
        what = f"sent as {sent[0]} (the nearest level the model takes)" if sent else "dropped (the model takes none)"
        lines.append(f"note: reasoning effort {asked} was {what} on {n} call(s); recorded with each call")
    return lines


def _accuracy_text(db_path, progress, task: str | None = None) -> str:
    """The run's accuracy as every view shows it by default: the strict verdict (the reference's answer rule) for
    set operations, with the lenient one beside; a quantifier run's own verdict. From the run's final counts when
    the runner has them (``progress.scored_strict``: the same numbers ``run_overview`` reads, without opening the
    database again or importing the analysis), else from the store."""
    lenient = "-" if progress.accuracy is None else f"{progress.accuracy:.3f}"
    if progress.scored_strict is not None and task is not None:
        if task != "setops" or not progress.scored_strict:
            return lenient
        # the percentage run_overview computes, back to a fraction: the same digits to the last one
        accuracy = 100.0 * (progress.correct_strict / progress.scored_strict)
        return f"{accuracy / 100:.3f} strict (lenient {lenient})"
    try:
        from core import store
        from core.analysis import run_overview

        with store.connect(db_path) as con:
            ov = run_overview(con, [progress.run_id], scoring="strict")
    except UserError:
        return lenient
    if ov.empty or ov["task"].iloc[0] != "setops" or ov["accuracy"].isna().iloc[0]:
        return lenient
    return f"{ov['accuracy'].iloc[0] / 100:.3f} strict (lenient {lenient})"


VLLM_FLAGS = ("vllm_replicas", "vllm_tp", "vllm_batch_size", "vllm_max_model_len", "vllm_accelerator")


def _check_engine(args, model: str, provider: str, base_url) -> None:
    """Engine, model and Ray flags that do not go together: one line each, before anything runs."""
    from core.runner.ray_engine import check_ray_address

    given = [f"--{f.replace('_', '-')}" for f in VLLM_FLAGS if getattr(args, f) is not None]
    if provider == "vllm":
        if args.engine != "ray":
            raise UserError(f"{model} runs on the GPUs of a Ray cluster through Ray Data's vLLM processor: add "
                            f"--engine ray [--ray-address auto|head:6379] (a vLLM server is "
                            f"openai-compatible/{model.split('/', 1)[1]} with --base-url)")
        if base_url:
            raise UserError(f"--base-url does not apply to {model} (the engines run on the Ray cluster); a vLLM "
                            "server is openai-compatible/<model> with --base-url")
    elif given:
        raise UserError(f"{', '.join(given)} go with --engine ray and a vllm/<model>")
    if args.engine != "ray":
        if args.ray_address is not None:
            raise UserError("--ray-address goes with --engine ray")
        return
    check_ray_address(args.ray_address)
    for flag, value in (("--ray-actors", args.ray_actors), ("--ray-block-size", args.ray_block_size)):
        if value < 1:
            raise UserError(f"{flag} must be a whole number >= 1, got {value}")
    if args.batch:
        raise UserError("--engine ray and --batch do not go together")
    if args.fresh:
        raise UserError("--engine ray continues the run and its cache; --fresh (new draws) is for the live runner")
    if provider not in ("openai-compatible", "vllm") or (provider == "openai-compatible" and not base_url):
        raise UserError("--engine ray runs openai-compatible/<model> with --base-url (the endpoint every Ray actor "
                        f"calls) or vllm/<model> on the cluster's GPUs; not {model}"
                        + ("" if provider != "openai-compatible" else " without --base-url"))


def _cluster_lost() -> None:
    """The Ray cluster stopped answering mid-run (watch thread): one line, and the process ends before Ray's own
    reconnection attempts fill the terminal (what was imported is stored; the same command continues)."""
    import os

    from core.cli import error_line
    from core.runner.ray_connect import cleanup_local

    error_line("error: the Ray cluster stopped answering (its processes were stopped or killed); the items "
               "answered so far are stored: run the same command again to continue")
    cleanup_local()
    sys.stdout.flush()
    os._exit(1)


def _run_ray(args, config, model, params, base_url, provider, name) -> int:
    from core.runner.ray_connect import quiet_terminal
    from core.runner.ray_engine import run_ray, run_vllm

    quiet_terminal()   # the terminal shows this command's lines, not Ray's log lines

    def shown(t):
        if args.no_progress:
            return
        if t["blocks"] == 0:
            print(f"ray: {t['requests']} request(s) to send ({t['items']} item(s), {t['cached']} from the cache)",
                  file=sys.stderr)
        else:
            print(f"ray: {t['blocks']} block(s) imported, {t['answered']} answered, {t['failed']} failed",
                  file=sys.stderr)

    common = {"params": params, "limit": args.limit, "db_path": args.db, "address": args.ray_address,
              "block_size": args.ray_block_size, "on_block": shown, "name": name, "on_lost": _cluster_lost}
    if provider == "vllm":
        c = run_vllm(config, model, replicas=1 if args.vllm_replicas is None else args.vllm_replicas,
                     tp=1 if args.vllm_tp is None else args.vllm_tp,
                     batch_size=64 if args.vllm_batch_size is None else args.vllm_batch_size,
                     max_model_len=args.vllm_max_model_len, accelerator_type=args.vllm_accelerator, **common)
        how = "Ray Data's vLLM processor"
    else:
        c = run_ray(config, model, base_url, concurrency=args.concurrency or 32, actors=args.ray_actors,
                    timeout=args.timeout, max_attempts=args.max_attempts, **common)
        how = "Ray"
    print(f"{c['run_id']}: {c['requests']} request(s) sent through {how} in {c['blocks']} block(s): "
          f"{c['answered']} item(s) answered, {c['failed']} failed")
    return 0 if c["failed"] == 0 else 1


def _checked_spec(args: argparse.Namespace):
    """The run spec of the command line (config file and flags), checked: (spec, model, provider, batch limits);
    UserError on a flag that does not go with the others."""
    from core.models import DEFAULT_MODEL
    from core.models.registry import check_base_url, parse_spec

    RunOptions(concurrency=args.concurrency, rpm=args.rpm, tpm=args.tpm, max_attempts=args.max_attempts,
               call_timeout=args.timeout, limit=args.limit).checked(flags=True)
    spec = read_run_spec(args.config, model=args.model, base_url=args.base_url,
                         params={n: getattr(args, n) for n in ("temperature", "top_p", "top_k", "max_tokens", "seed",
                                                               "answer_cap", "stop", "answer_format",
                                                               "reasoning_effort")})
    for line in spec.notes:   # what a reference experiment YAML asks that is not honoured exactly
        print(f"note: {line}", file=sys.stderr)
    model = spec.model or DEFAULT_MODEL
    provider = parse_spec(model)[0]
    _check_engine(args, model, provider, spec.base_url)
    if spec.base_url and provider in ("local", "reference"):
        raise UserError(f"--base-url does not apply to {model} (it runs in this process); it is for "
                        "openai-compatible/<model> (or a proxy in front of openai/ or anthropic/)")
    if spec.base_url:
        check_base_url(spec.base_url)
    if (args.no_wait or args.poll_interval is not None or args.batch_max_requests is not None
            or args.batch_max_bytes is not None) and not args.batch:
        raise UserError("--no-wait, --poll-interval and --batch-max-* go with --batch")
    limits = _batch_limits(args, provider) if args.batch else None
    if args.batch and args.poll_interval is not None and not args.poll_interval >= 0:
        raise UserError(f"--poll-interval must be a number of seconds >= 0, got {args.poll_interval:g}")
    return spec, model, provider, limits


def _print_estimate(args: argparse.Namespace, config: dict, model: str, params, base_url) -> int:
    from core import runner

    est = runner.estimate(config, model, params=params, base_url=base_url, db_path=args.db, fresh=args.fresh,
                          limit=args.limit, batch=args.batch)
    cost = "unknown" if est.cost_usd is None else f"${est.cost_usd:.4f}"
    price = " at the batch price (half the list price)" if args.batch else ""
    print(f"{est.run_id}: {est.n_items} items, {est.n_cached} cached/done, {est.n_calls} calls to make, "
          f"~{est.tokens_in} tokens in, ~{est.tokens_out} tokens out, estimated cost {cost}{price}")
    if (params or {}).get("reasoning_effort") not in (None, "none") or any(
            e not in (None, "none") for e in config.get("reasoning") or ()):
        print("note: reasoning tokens are not in this estimate (how long a model thinks is not known before it "
              "does); each reply may use up to its effort's allowance more, billed as output tokens",
              file=sys.stderr)
    return 0


class _ProgressBar:
    """A tqdm bar on stderr fed by the runner's progress reports (none with --no-progress)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.bar = None

    def __call__(self, p) -> None:
        if self.args.no_progress:
            return
        if self.bar is None:  # created on the first report, i.e. after the run was validated and started
            from tqdm import tqdm

            self.bar = tqdm(total=p.total, unit="item", dynamic_ncols=True, file=sys.stderr, mininterval=0.2)
        bar = self.bar
        if bar.total != p.total:
            bar.total = p.total
        bar.n = p.done + p.failed
        acc = "-" if p.accuracy is None else f"{p.accuracy:.3f}"
        batches = ""
        if self.args.batch:
            states = ", ".join(f"{n} {state}" for state, n in sorted(p.batches.items()))
            batches = f" batches: {states or 'none yet'}; waiting={p.waiting}"
        bar.set_postfix_str(f"cached={p.cached} failed={p.failed} acc={acc} cost=${p.cost_usd:.4f}{batches}",
                            refresh=False)
        bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _follow(handle, args: argparse.Namespace, bar: _ProgressBar) -> int | None:
    """Wait for the run to finish; on Ctrl-C cancel it, say where it stopped and return 130."""
    from core.cli import error_line

    try:
        while not handle.done:
            handle.wait(0.2)
    except KeyboardInterrupt:   # Ctrl-C: no new calls; finished ones are durable and kept
        handle.cancel()
        handle.wait()
        bar.close()
        p = handle.progress()
        again = "the same command without --fresh" if args.fresh else "the same command again"
        if p.waiting:
            error_line(f"interrupted: run {p.run_id} stopped following its batches at {p.done}/{p.total} answered "
                       f"({p.waiting} waiting in batches at the provider); {again} re-attaches and collects them")
        else:
            error_line(f"interrupted: run {p.run_id} stopped at {p.done}/{p.total} answered, every answer kept; "
                       f"{again} continues it")
        return 130
    finally:
        bar.close()
    return None


def _report(args: argparse.Namespace, progress, task: str | None) -> int:
    """The closing line of a finished run (and what is left to do); the command's exit code."""
    from core.cli import error_line

    acc = _accuracy_text(args.db, progress, task)
    print(f"run {progress.run_id}: {progress.status}; {progress.done}/{progress.total} answered "
          f"({progress.cached} cached, {progress.calls} calls this time), {progress.failed} failed, "
          f"accuracy {acc}, cost ${progress.cost_usd:.4f}, {progress.elapsed:.1f} s")
    for line in effort_notes(args.db, progress.run_id):
        print(line, file=sys.stderr)
    if progress.error and progress.status in ("error", "waiting"):
        raise UserError(progress.error)
    if progress.status == "waiting":
        states = ", ".join(f"{n} {state}" for state, n in sorted(progress.batches.items()))
        print(f"{progress.waiting} item(s) wait in provider batches ({states}); run the same command again to "
              f"collect them (python -m core batches --run {progress.run_id} shows them)", file=sys.stderr)
        return 0
    if progress.failed:
        error = _first_error(args.db, progress.run_id)
        because = f" (e.g. {error})" if error else ""
        error_line(f"{progress.failed} item(s) failed{because}; run the same command again to retry them")
        return 1
    return 0


def main(args: argparse.Namespace) -> int:
    from core import runner

    spec, model, provider, limits = _checked_spec(args)
    config, params, base_url = spec.config_dict(), spec.params, spec.base_url
    if args.estimate:
        return _print_estimate(args, config, model, params, base_url)
    if args.engine == "ray":
        return _run_ray(args, config, model, params, base_url, provider, args.name or spec.name)
    if base_url:
        why = _unreachable(base_url)
        # a down server only matters when there is something to ask it (cached / finished runs need no call)
        if why and runner.estimate(config, model, params=params, base_url=base_url, db_path=args.db,
                                   fresh=args.fresh, limit=args.limit).n_calls:
            raise UserError(f"cannot reach {base_url}: {why} (is the server running? the embedded model serves "
                            "with: python -m core serve-local --port 8080)")
    bar = _ProgressBar(args)
    handle = runner.start_run(config, model, params=params, base_url=base_url, db_path=args.db,
                              concurrency=args.concurrency, fresh=args.fresh, name=args.name or spec.name, limit=args.limit,
                              rpm=args.rpm, tpm=args.tpm, max_attempts=args.max_attempts, call_timeout=args.timeout,
                              on_progress=bar, source="cli", batch=args.batch, wait=not args.no_wait,
                              poll_interval=args.poll_interval, batch_limits=limits)
    interrupted = _follow(handle, args, bar)
    if interrupted is not None:
        return interrupted
    return _report(args, handle.progress(), config.get("task"))
