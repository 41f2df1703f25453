"""A Ray engine run as the live runner's run: the same plan, run id, cache keys and claims, so either engine
continues the other's run from the cache and identical runs on both share their calls.

``RayRun`` registers the run up front (one transaction: found or inserted, status 'running', the live runner's
run record — so the Runs page resumes it live), then works in rounds. A round claims the keys of its unanswered
items (``core.store.claims``, the live runner's table): keys this run now holds become request lines for the Ray
stage; keys already in the cache are scored from it; keys another live run holds (a live run, another Ray run) are
waited for and taken from the cache once their owner has merged them, or claimed and sent here once their claim
lapses. Each block the Ray stage hands back is imported with its claims released in the same transaction;
whatever ends the run, its remaining claims are released and its status set.
"""

from __future__ import annotations

import logging

from core import store
from core.errors import UserError
from core.models.batch.jsonl import request_line
from core.runner.batch_files import BatchImporter, item_params, prepare_file_run, request_body
from core.runner.plan import find_run, register_run, result_rows, run_items
from core.store import claims
from core.store.journal import delete_journals, owner_tag, recover_into

log = logging.getLogger(__name__)

POLL = 0.5   # seconds between looks at keys another run is answering


def ray_run_id(config: dict, model: str, base_url, *, params=None, limit=None, db_path=None) -> str:
    """The run id a Ray run of (config, model, base URL, params, limit) continues or starts: the live runner's."""
    plan = prepare_file_run(config, model, params, limit, None, "ray", base_url)[0]
    with store.connect(db_path) as con:
        return find_run(con, plan, False)[0]


class RayRun:
    def __init__(self, config: dict, model: str, *, params=None, limit=None, db_path=None, base_url=None,
                 name: str | None = None, source: str = "ray", settings: dict | None = None, lease_s: float = 3600.0):
        plan, body, dropped = prepare_file_run(config, model, params, limit, name, source, base_url)
        if plan.params.answer_format != "free":   # a request line carries no grammar: the run would claim one
            raise UserError(f"batch files (and --engine ray) send free-form requests; answer format "
                            f"{plan.params.answer_format!r} is for live runs")
        self.plan, self.db_path, self.limit, self.lease_s = plan, db_path, limit, float(lease_s)
        self.owner = owner_tag()
        self.items = run_items(plan)
        # request bodies by parameters (a reply cap may be an item's); a dict keyed by value rather than an
        # lru_cache: it starts with the body ``prepare_file_run`` built already
        self._bodies: dict = {plan.params: body}
        self.run_id, self.draw = self._register(settings or {})
        self.importer = BatchImporter.for_run(plan, dropped, self.items, self.run_id, self.draw, limit=limit,
                                              db_path=db_path, owner=self.owner)
        self.by_key = self.importer.by_key
        self.waiting: set[str] = set()    # keys another live run holds
        self.ended = False

    # -- registration
    def _register(self, settings: dict) -> tuple[str, int]:
        import duckdb

        plan = self.plan

        def register() -> tuple[str, int]:
            with store.connect(self.db_path) as con, store.transaction(con):
                run_id, draw, exists = find_run(con, plan, False)
                run_json = store.canonical_json({
                    "config": plan.config_dict, "model": plan.model_spec, "base_url": plan.base_url,
                    "params": plan.params.to_dict(), "limit": self.limit,
                    "limit_pick": plan.limit_pick if self.limit is not None else None, "draw": draw,
                    "owner": self.owner, "engine": "ray", **settings})
                register_run(con, plan, run_id, draw, exists, run_json)
                store.update_run(con, run_id, n_items=len(self.items))
            return run_id, draw

        # an identical run may register it meanwhile (its row is there then): found as existing on the next try
        return store.retry_conflicts(register, errors=(duckdb.ConstraintException, duckdb.TransactionException))

    # -- one round
    def request(self, key: str) -> dict:
        """The request line (OpenAI batch format) of ``key``'s call."""
        item = self.by_key[key][0]
        params = item_params(self.plan, item)
        body = self._bodies.get(params)
        if body is None:
            body = self._bodies[params] = request_body(self.plan.model_spec, params)[0]
        return request_line(key, self.plan.model_spec.split("/", 1)[1], item["prompt"], body)

    def claim(self, keys: list[str] | None = None) -> tuple[list[str], int]:
        """Claim ``keys`` (None: every key with an item still unanswered in the run): returns (keys to send here,
        items scored from the cache); the keys another live run holds are in ``waiting``."""
        with store.connect(self.db_path) as con:
            recovered = []
            with store.transaction(con):
                if keys is None:
                    done = {r[0] for r in con.execute("SELECT idx FROM results WHERE run_id = ? AND error IS NULL",
                                                      [self.run_id]).fetchall()}
                    keys = [k for k, its in self.by_key.items() if any(it["idx"] not in done for it in its)]
                got = claims.claim(con, keys, self.owner, self.run_id, self.lease_s)
                if got.orphaned:   # their owner died: its journal may hold answers never merged — merge them first
                    _, recovered = recover_into(con, self.db_path)
                    if recovered:
                        claims.release(con, got.orphaned, self.owner, self.run_id)
                        got = claims.claim(con, keys, self.owner, self.run_id, self.lease_s)
            delete_journals(recovered)   # only after the COMMIT
        self.waiting = set(got.others)
        scored = self.score_cached(got.cached) if got.cached else 0
        return sorted(got.mine), scored

    def score_cached(self, keys) -> int:
        """Score the items of ``keys`` (answered in the cache) into the run; returns the items written."""
        with store.connect(self.db_path) as con:
            cached = store.lookup_calls(con, keys)
            done = {r[0] for r in con.execute("SELECT idx FROM results WHERE run_id = ? AND error IS NULL",
                                              [self.run_id]).fetchall()}
        w = self.importer.writer
        for key, call in cached.items():
            todo = [it for it in self.by_key[key] if it["idx"] not in done]
            w.results.extend(result_rows(self.plan.task, self.run_id, todo, key, call["response"], 0, True))
        n = len(w.results)
        if n:
            w.flush()
        return n

    # -- the end
    def finish(self, status: str | None = None) -> dict:
        """Release the run's claims and set its final status (None: done when every item is answered, else
        incomplete); returns its counts."""
        self.ended = True
        with store.connect(self.db_path, timeout=60.0) as con, store.transaction(con):
            claims.release_run(con, self.owner, self.run_id)
            c = store.refresh_run_counts(con, self.run_id)
            if status is None:
                status = "done" if c["n_done"] >= len(self.items) else "incomplete"
            return store.refresh_run_counts(con, self.run_id, status=status, finished=True)

    def release(self) -> None:
        """Best effort, on an error: the run's claims go (an identical run need not wait out their lease) and it
        is not left 'running'."""
        if self.ended:
            return
        try:
            self.finish("error")
        except store.STORE_ERRORS as exc:   # the DB may be what failed; the lease and liveness test free the claims
            log.info("Ray run %s: its claims and status could not be written (%s)", self.run_id,
                     type(exc).__name__)
