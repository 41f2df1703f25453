"""Schema version 2 (strict scoring): a database written at version 1 migrates, and its stored results get their
strict verdicts (and GQG's own verdict for quantifiers) from the stored responses — no model call.

The version-1 file is written the way version-1 code wrote it: the DDL of migration 1 (append-only, so it is still
exactly what version 1 ran), then rows with only version-1 result columns, scored by the lenient scorer.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from core import store
from core.store import backfill, schema
from core.tasks.quantifiers.parse import parse_truth_gqg
from core.tasks.setops.scoring import STRICT_COLUMNS, score_set_response, strict_fields

V1_RESULTS = [name for name, _ in schema._RESULT_COLUMNS_V1]
SETOPS = [  # (response, truth, set_a, set_b)
    ("<answer>{1, 2}</answer>", [1, 2], [1], [2]),
    ("The union is {1, 2}.", [1, 2], [1], [2]),                                  # lenient right, strict: no tags
    ("<answer>{1}</answer> or <answer>{1, 2}</answer>", [1, 2], [1], [2]),        # two blocks
    ("<answer>{'Cat', 'dog'}</answer>", ["cat", "dog"], ["cat"], ["dog"]),       # case kept by strict
    ("<answer>{3, 99}</answer>", [3], [3], [4]),                                  # a made-up member
    ("<answer>set()</answer>", [], [5], [6]),
]


def _v1_database(path) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute(schema._VERSION_TABLE)
        for sql in schema.MIGRATIONS[0][1]:
            con.execute(sql)
        con.execute("INSERT INTO schema_version (version) VALUES (1)")
        at = store.now_utc()

        def run(run_id, task, config):
            con.execute("INSERT INTO runs (run_id, run_key, draw, created_at, updated_at, task, name, config_json, "
                        "model, status, n_items, source, schema_version) VALUES (?, ?, 0, ?, ?, ?, ?, ?, 'm', 'done',"
                        " 0, 'test', 1)", [run_id, run_id, at, at, task, run_id, json.dumps(config)])

        def row(run_id, idx, item, response, score, error=None):
            con.execute("INSERT INTO items (run_id, idx, config_id, sample, seed, prompt, truth, members, set_a, "
                        "set_b, label, extra_json) VALUES (?, ?, 'c', ?, 0, ?, ?, ?, ?, ?, ?, ?)",
                        [run_id, idx, idx, f"p{idx}", json.dumps(item.get("truth")), item.get("members"),
                         json.dumps(item.get("set_a")), json.dumps(item.get("set_b")), item.get("label"),
                         json.dumps(item["extra"]) if item.get("extra") else None])
            key = None if response is None else f"{run_id}:{idx}"
            if key:
                con.execute("INSERT INTO calls (cache_key, model, response, draw, \"at\") VALUES (?, 'm', ?, 0, ?)",
                            [key, response, at])
            values = {"run_id": run_id, "idx": idx, "cache_key": key, "error": error, "at": at,
                      **{k: v for k, v in (score or {}).items() if k in V1_RESULTS}}
            cols = list(values)
            names = ", ".join(f'"{c}"' for c in cols)
            con.execute(f"INSERT INTO results ({names}) VALUES ({', '.join('?' * len(cols))})",
                        [values[c] for c in cols])

        run("ours", "setops", {"task": "setops"})
        for i, (response, truth, a, b) in enumerate(SETOPS):
            item = {"truth": truth, "set_a": a, "set_b": b, "members": "numbers" if isinstance(a[0], int) else
                    "words"}
            row("ours", i, item, response, score_set_response(item, response))
        row("ours", len(SETOPS), {"truth": [1], "set_a": [1], "set_b": [2], "members": "numbers"}, None, None,
            error="HTTP 500")
        # a reference CSV imported by version 1: its response is the reference's own parse, its verdict in extra
        run("refcsv", "setops", {"task": "setops", "kind": "reference"})
        for i, (result_obj, verdict) in enumerate([("{1, 2}", True), ("{-1}", False), ("{'Cat'}", False)]):
            item = {"truth": [1, 2], "set_a": [1], "set_b": [2], "members": "numbers",
                    "extra": {"llm_vs_gt": verdict}}
            row("refcsv", i, item, result_obj, {"correct": verdict, "followed": result_obj != "{-1}"})
        run("quant", "quantifiers", {"task": "quantifiers"})
        for i, (response, label) in enumerate([("**true**", "true"), ("False.", "false"), ("no idea", "false")]):
            pred = {"**true**": "true", "False.": "false"}.get(response)
            row("quant", i, {"label": label}, response,
                {"pred": pred, "correct": pred == label, "followed": pred is not None,
                 "correct_gqg": (pred or "false") == label})   # version 1's approximation of GQG
    finally:
        con.close()


def _strict(con, run_id):
    cols = ", ".join(STRICT_COLUMNS)
    rows = con.execute(f"SELECT idx, {cols} FROM results WHERE run_id = ? ORDER BY idx", [run_id]).fetchall()
    return {r[0]: dict(zip(STRICT_COLUMNS, r[1:])) for r in rows}


def test_version_1_file_migrates_and_is_rescored_from_stored_responses(tmp_path):
    db = tmp_path / "v1.duckdb"
    _v1_database(db)
    with store.connect(db) as con:
        assert con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] == schema.SCHEMA_VERSION
        got = _strict(con, "ours")
        for i, (response, truth, a, b) in enumerate(SETOPS):
            assert got[i] == strict_fields(truth, a, b, response), response
        assert got[len(SETOPS)] == dict.fromkeys(STRICT_COLUMNS)          # the failed call: nothing to judge
        assert [got[i]["correct_strict"] for i in range(len(SETOPS))] == [True, False, False, False, False, True]
        # lenient columns untouched
        assert con.execute("SELECT count(*) FROM results WHERE run_id = 'ours' AND correct").fetchall()[0][0] == 5
        ref = _strict(con, "refcsv")
        assert ref[0] == {"parsed_strict": "[1, 2]", "followed_strict": True, "correct_strict": True,
                          "answer_len_strict": 2, "made_up_strict": 0}
        assert ref[1]["followed_strict"] is False and ref[1]["correct_strict"] is False
        assert ref[2]["parsed_strict"] == '["Cat"]' and ref[2]["made_up_strict"] == 1
        quant = dict(con.execute("SELECT r.idx, r.correct_gqg FROM results r WHERE run_id = 'quant'").fetchall())
        assert quant == {0: parse_truth_gqg("**true**") == "true", 1: True, 2: True}
        assert quant[0] is False   # GQG's script skips the 8-character "**true**"; version 1 had said right
        assert con.execute("SELECT count(*) FROM v_results WHERE correct_strict IS NOT NULL").fetchall()[0][0] == 9
    with store.connect(db) as con:   # opened again: nothing to do
        assert con.execute("SELECT count(*) FROM schema_version").fetchall()[0][0] == len(schema.MIGRATIONS)


def test_a_failing_backfill_leaves_the_version_1_file_as_it_was(tmp_path, monkeypatch):
    db = tmp_path / "v1.duckdb"
    _v1_database(db)

    def broken(con):
        raise RuntimeError("simulated failure while re-scoring")

    monkeypatch.setitem(backfill.BACKFILLS, 2, broken)
    with pytest.raises(RuntimeError, match="simulated"), store.connect(db):
        pass
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] == 1
        assert "correct_strict" not in {r[0] for r in con.execute("DESCRIBE results").fetchall()}
        assert con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 13
    finally:
        con.close()
