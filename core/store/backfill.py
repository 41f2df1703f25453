"""Re-scoring rows already stored when a migration adds derived result columns (no model calls: from the stored
responses). ``BACKFILLS[version](con)`` runs inside that version's migration transaction.

Version 2 (strict scoring):
- set-operation results get ``parsed_strict``, ``followed_strict``, ``correct_strict``, ``answer_len_strict`` and
  ``made_up_strict`` from their stored response (core/tasks/setops/scoring.strict_fields). Results imported from a
  SetLexSem reference CSV stored the reference's own parse (``result_obj``) as their response: their strict fields
  are that parse, and ``correct_strict`` is the file's ``llm_vs_gt`` (the reference's verdict), kept in the item's
  extra fields. Results with no stored response (an import without one) stay NULL: there is nothing to judge.
- quantifier results get ``correct_gqg`` by GQG's own answer rule (core/tasks/quantifiers/parse.parse_truth_gqg),
  which replaces the earlier approximation ("false" when our parser found nothing).
Failed calls (``error`` set) are left alone.

Version 6 builds the per-configuration aggregates (core/store/aggregates.py) from the rows; version 11 recounts their
strict rows, whose precision, recall and Jaccard are now the strict ones.
"""

from __future__ import annotations

import json

import pyarrow as pa

from core.tasks.quantifiers.parse import parse_truth_gqg
from core.tasks.setops.scoring import STRICT_COLUMNS, strict_fields, strict_from_reference

BATCH = 20_000

_SOURCE = """
SELECT r.run_id, r.idx, ru.task, json_extract_string(ru.config_json, '$.kind') AS kind, i.truth, i.set_a, i.set_b,
       i.label, i.extra_json, c.response
FROM results r
JOIN runs ru ON ru.run_id = r.run_id
JOIN items i ON i.run_id = r.run_id AND i.idx = r.idx
LEFT JOIN calls c ON c.cache_key = r.cache_key
WHERE r.error IS NULL AND c.response IS NOT NULL
ORDER BY r.run_id, r.idx
"""

_TYPES = {"parsed_strict": pa.string(), "followed_strict": pa.bool_(), "correct_strict": pa.bool_(),
          "answer_len_strict": pa.int64(), "made_up_strict": pa.int64()}


def _as_list(value) -> list:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [m for m in (value or []) if isinstance(m, (int, str)) and not isinstance(m, bool)]


def _strict_row(row: dict) -> dict | None:
    try:
        if row["kind"] == "reference":
            extra = json.loads(row["extra_json"]) if row["extra_json"] else {}
            verdict = extra.get("llm_vs_gt")
            if verdict is None:
                return None
            return strict_from_reference(row["response"], verdict, _as_list(row["set_a"]), _as_list(row["set_b"]))
        return strict_fields(_as_list(row["truth"]), _as_list(row["set_a"]), _as_list(row["set_b"]),
                             row["response"])
    except (TypeError, ValueError):   # a malformed stored row: leave its strict fields NULL
        return None


def _update(con, name: str, rows: list[dict], columns: dict) -> None:
    if not rows:
        return
    arrays = [pa.array([r["run_id"] for r in rows], pa.string()), pa.array([r["idx"] for r in rows], pa.int64())]
    arrays += [pa.array([r[c] for r in rows], t) for c, t in columns.items()]
    table = pa.Table.from_arrays(arrays, names=["run_id", "idx", *columns])
    con.register(name, table)
    try:
        sets = ", ".join(f'"{c}" = {name}."{c}"' for c in columns)
        con.execute(f"UPDATE results SET {sets} FROM {name} "
                    f"WHERE results.run_id = {name}.run_id AND results.idx = {name}.idx")
    finally:
        con.unregister(name)


def rescore_v2(con) -> int:
    """Fill the strict columns (set operations) and GQG's verdict (quantifiers) from stored responses.
    Returns the number of results re-scored. Pages through a numbered temporary copy of the rows to score (the
    migration's own connection and transaction: a cursor would be another connection)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE _bf_src AS SELECT row_number() OVER () AS rn, * FROM ({_SOURCE})")
    try:
        total = con.execute("SELECT count(*) FROM _bf_src").fetchall()[0][0]
        n = 0
        for start in range(0, total, BATCH):
            cur = con.execute("SELECT * EXCLUDE (rn) FROM _bf_src WHERE rn > ? AND rn <= ?", [start, start + BATCH])
            names = [d[0] for d in cur.description]
            setops, quant = [], []
            for values in cur.fetchall():
                row = dict(zip(names, values))
                if row["task"] == "quantifiers":
                    if row["label"] in ("true", "false"):
                        quant.append({"run_id": row["run_id"], "idx": row["idx"],
                                      "correct_gqg": parse_truth_gqg(row["response"]) == row["label"]})
                elif row["task"] in (None, "setops"):
                    fields = _strict_row(row)
                    if fields is not None:
                        setops.append({"run_id": row["run_id"], "idx": row["idx"],
                                       **{c: fields[c] for c in STRICT_COLUMNS}})
            _update(con, "_bf_strict", setops, _TYPES)
            _update(con, "_bf_gqg", quant, {"correct_gqg": pa.bool_()})
            n += len(setops) + len(quant)
        return n
    finally:
        con.execute("DROP TABLE IF EXISTS _bf_src")


def aggregates_v6(con) -> int:
    from core.store.aggregates import rebuild

    return rebuild(con)


def strict_metrics_v11(con) -> int:
    """The strict rows of agg_counts recounted: their precision, recall and Jaccard become the strict ones (views
    computed those from the rows until now, with the same definition: nothing any view shows changes, so the runs'
    versions, the analysis caches' keys, stay)."""
    from core.store.aggregates import rebuild_counts

    return rebuild_counts(con, ["strict"])


BACKFILLS = {2: rescore_v2, 6: aggregates_v6, 11: strict_metrics_v11}


def fill_strict(row: dict) -> None:
    """A set-operation row of an export that predates strict scoring (no strict verdict) but holds the raw
    response, its truth and sets: judge it now with the reference's rule."""
    from core.tasks.setops.scoring import strict_fields

    if row.get("correct_strict") is not None or row.get("task") not in (None, "setops"):
        return
    if not isinstance(row.get("response"), str) or row.get("error") is not None or row.get("correct") is None:
        return
    if not all(isinstance(row.get(k), list) for k in ("truth", "set_a", "set_b")):
        return
    try:
        row.update(strict_fields(row["truth"], row["set_a"], row["set_b"], row["response"]))
    except TypeError:   # members that are not numbers or words: leave the row without a strict verdict
        pass
