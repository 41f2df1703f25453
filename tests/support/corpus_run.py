"""A stored set-operation run whose responses are the parse corpus (tests/data/parse_corpus.yaml), scored by the real
scorer and written through the real store — for tests of strict vs lenient analyses and of the error table.

Each entry becomes one item. Its truth and sets are chosen so that every kind of row occurs: a third of the items
take the strict reading as their truth (strictly right), a third the lenient reading (leniently right), a third the
empty set (empty-truth rows); A and B hold the truth split in two plus members of their own, so answers with extra
members count made-up ones. Operations and the members factor cycle, so groups by them are small and varied.
"""

from __future__ import annotations

import yaml

from core import store
from core.tasks.setops.recheck import render_prompt
from core.tasks.setops.scoring import score_set_response
from tests.support import DATA

OPERATIONS = ("union", "intersection", "difference", "symmetric_difference")


def corpus_items() -> list[dict]:
    corpus = yaml.safe_load((DATA / "parse_corpus.yaml").read_text(encoding="utf-8"))
    items = []
    for i, e in enumerate(corpus):
        kind = e["kind"]
        choice = (e["strict"], e["expected"], [])[i % 3]
        truth = [m for m in (choice or []) if isinstance(m, int) == (kind == "numbers")]
        own = [1000 + i, 2000 + i] if kind == "numbers" else [f"own{i}a", f"own{i}b"]
        half = len(truth) // 2
        items.append({
            "idx": i, "config_id": f"cfg{i % 8}", "sample": i // 8, "seed": 0, "prompt": f"prompt {i}",
            "truth": truth, "set_a": truth[:half] + own[:1], "set_b": truth[half:] + own[1:],
            "operation": OPERATIONS[i % 4], "members": "numbers" if kind == "numbers" else "words",
            "size_a": 2, "size_b": 2, "phrasing": "formal", "approach": "baseline", "shots": 0,
            "response": e["response"],
        })
        items[-1]["prompt"] = render_prompt(items[-1])   # the prompt its item renders to: imports re-check it
    return items


def write_corpus_run(db_path, run_id: str = "corpus", model: str = "corpus/responses") -> list[dict]:
    """Store the corpus run (runs, items, calls, results) and return its items (with their responses)."""
    items = corpus_items()
    at = store.now_utc()
    calls, results = [], []
    for it in items:
        key = f"{run_id}:{it['idx']}"
        calls.append({"cache_key": key, "model": model, "response": it["response"], "at": at, "draw": 0})
        score = score_set_response(it, it["response"])
        results.append({"run_id": run_id, "idx": it["idx"], "cache_key": key, "cached": False, "at": at,
                        "error": None, "attempts": 1, **score})
    with store.connect(db_path) as con, store.transaction(con):
        con.execute("INSERT INTO runs (run_id, run_key, draw, created_at, updated_at, task, name, config_json, model, "
                    "status, n_items, source, schema_version) VALUES (?, ?, 0, ?, ?, 'setops', 'corpus', '{}', ?, "
                    "'done', ?, 'test', ?)", [run_id, run_id, at, at, model, len(items), store.SCHEMA_VERSION])
        store.insert_items(con, run_id, [{k: v for k, v in it.items() if k != "response"} for it in items])
        store.write_calls_results(con, calls, results)
        store.refresh_run_counts(con, run_id)
    return items
