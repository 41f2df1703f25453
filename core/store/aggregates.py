"""Aggregates that grow with configurations, not rows.

Every view of the dashboard and every ``report`` command counts per (run, configuration): per-configuration
accuracy (violins, robustness, findings, compare), the error table's sums, the run overview. Counting them from the
rows each time costs a scan of every stored result (seconds at 10 million). The store keeps the counts instead, in
four small tables maintained by the writers of ``items`` and ``results`` in the same transaction as the rows:

``agg_configs``  one row per (run, configuration): every item factor column (its value in the configuration —
                 for a column that varies inside one, such as a deceptive sample's hypernyms, its minimum) and the
                 number of items;
``agg_inside``   per run, the factor columns that vary inside a configuration (``kind`` = 'varies') or are NULL
                 for only some of its items ('partial_null'): views grouped or filtered by such a column read rows;
``agg_counts``   one row per (run, configuration, scoring) — 'lenient' (our parser) and 'strict' (the SetLexSem
                 reference's rule for set operations, ours for other tasks: ``core.analysis.queries.scored_expr``) —
                 with the counts every view is made of (answered, correct, failed, empty truths, made-up members,
                 answers that did not follow the instruction, sums of precision / recall / Jaccard, cost) — under
                 strict the metrics of the reference's parse for set operations (``strict_metric_sql``), the
                 answer its verdict judges;
``agg_lengths``  per (run, configuration, scoring, correct, truth length, answer length): how many answered
                 items — the error table's "G vs. L" lists;
``agg_runs``     per run, a version that grows with every write touching it (a cache key), drawn from one counter
                 for the store (its row ``HIGH_WATER``) so that no version is ever given twice.

Writers: ``rows.insert_items`` and ``rows.write_calls_results`` (runner merges, provider batches, imports of
OpenAI batch files), ``io`` (imports), ``runs.delete_run``, ``leftovers`` (orphan rows), the migrations that
change stored verdicts (a rebuild). ``rebuild(con)`` recomputes everything from the rows (migration 6 runs it
once on an existing store), ``rebuild_counts(con, scorings)`` the counts of some scorings (migration 11: the strict
metrics); ``check(con)`` compares the tables with a fresh computation (tests).
"""

from __future__ import annotations

from typing import Iterable, Sequence

SCORINGS = ("lenient", "strict")

# the counts of agg_counts, in order, with their SQL over one (run, configuration)'s rows (``a`` = answered under
# the scoring; the scored columns are s_correct, s_followed, s_answer_len, s_made_up)
_A = "s_correct IS NOT NULL"
COUNTS = (
    ("n_rows", "count(r_run)"),
    ("n", f"count(*) FILTER (WHERE {_A})"),
    ("n_failed", "count(*) FILTER (WHERE s_correct IS NULL AND r_error IS NOT NULL)"),
    ("n_correct", "count(*) FILTER (WHERE s_correct)"),
    ("n_followed", f"count(*) FILTER (WHERE {_A} AND coalesce(s_followed, FALSE))"),
    ("n_empty", f"count(*) FILTER (WHERE {_A} AND coalesce(r_empty, FALSE))"),
    ("empty_equal", "count(*) FILTER (WHERE s_correct AND coalesce(r_empty, FALSE))"),
    ("made_up_sum", f"coalesce(sum(coalesce(s_made_up, 0)) FILTER (WHERE {_A}), 0)"),
    ("n_unparsed", f"count(*) FILTER (WHERE {_A} AND s_answer_len IS NULL)"),
    ("answers_made_up", f"count(*) FILTER (WHERE {_A} AND coalesce(s_made_up, 0) > 0)"),
    ("answers_made_up_ref",
     f"count(*) FILTER (WHERE {_A} AND (coalesce(s_made_up, 0) > 0 OR s_answer_len IS NULL))"),
    ("precision_sum", f"sum(r_precision) FILTER (WHERE {_A})"),
    ("precision_n", f"count(r_precision) FILTER (WHERE {_A})"),
    ("recall_sum", f"sum(r_recall) FILTER (WHERE {_A})"),
    ("recall_n", f"count(r_recall) FILTER (WHERE {_A})"),
    ("jaccard_sum", f"sum(r_jaccard) FILTER (WHERE {_A})"),
    ("jaccard_n", f"count(r_jaccard) FILTER (WHERE {_A})"),
    ("cost_usd", "sum(c.cost_usd)"),
)
_COUNT_TYPES = {"precision_sum": "DOUBLE", "recall_sum": "DOUBLE", "jaccard_sum": "DOUBLE", "cost_usd": "DOUBLE"}


def ddl(factors: Sequence[tuple[str, str]]) -> list[str]:
    """CREATE statements of the aggregate tables (migration 6; new tables only: safe on any earlier file);
    ``factors`` = (name, SQL type) of the item factor columns."""
    factors = ",\n  ".join(f'"{c}" {t}' for c, t in factors)
    counts = ",\n  ".join(f'"{c}" {_COUNT_TYPES.get(c, "BIGINT")}' for c, _ in COUNTS)
    return [
        f"CREATE TABLE IF NOT EXISTS agg_configs (\n  run_id VARCHAR, config_id VARCHAR,\n  {factors},\n  "
        "n_items BIGINT)",
        "CREATE TABLE IF NOT EXISTS agg_inside (run_id VARCHAR, \"column\" VARCHAR, kind VARCHAR)",
        f"CREATE TABLE IF NOT EXISTS agg_counts (\n  run_id VARCHAR, config_id VARCHAR, scoring VARCHAR,\n  {counts})",
        "CREATE TABLE IF NOT EXISTS agg_lengths (run_id VARCHAR, config_id VARCHAR, scoring VARCHAR, "
        "correct BOOLEAN, truth_len BIGINT, answer_len BIGINT, k BIGINT)",
        "CREATE TABLE IF NOT EXISTS agg_runs (run_id VARCHAR PRIMARY KEY, version BIGINT)",
        # results of slow analyses (the findings report), keyed by the runs' versions: core/analysis/memo.py
        "CREATE TABLE IF NOT EXISTS analysis_cache (key VARCHAR PRIMARY KEY, value VARCHAR, stored_at TIMESTAMP)",
    ]


TABLES = ("agg_configs", "agg_inside", "agg_counts", "agg_lengths", "agg_runs")


def factor_columns(con) -> list[str]:
    """The item factor columns agg_configs holds (its own columns: a later migration may append some)."""
    rows = con.execute("SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND "
                       "table_name = 'agg_configs' ORDER BY column_index").fetchall()
    return [r[0] for r in rows if r[0] not in ("run_id", "config_id", "n_items")]


def present(con) -> bool:
    """Whether the open store has the aggregate tables (schema version 6 or later)."""
    rows = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND "
                       "table_name IN ('agg_configs', 'agg_counts', 'agg_lengths', 'agg_inside', 'agg_runs')"
                       ).fetchall()
    return rows[0][0] == len(TABLES)


# ---------------------------------------------------------------------------------------------------- the SQL

_SETOPS = "coalesce(ru.task, 'setops') = 'setops'"


def _scored(column: str, scoring: str) -> str:
    """One verdict column of ``results r`` under ``scoring`` (strict: the reference's columns for set operations)."""
    if scoring == "lenient":
        return f"r.{column}"
    return f"CASE WHEN {_SETOPS} THEN r.{column}_strict ELSE r.{column} END"


def _truth_len(scoring: str) -> str:
    if scoring == "lenient":
        return "r.truth_len"
    # strict "G": the stored truth's own size (ours lower-cases members), as core.analysis.sql.scored
    return (f"CASE WHEN {_SETOPS} AND json_valid(i.truth) AND json_type(i.truth) = 'ARRAY' "
            "THEN CAST(json_array_length(i.truth) AS BIGINT) ELSE r.truth_len END")


def _json_members_sql(text: str) -> str:
    """The members of the JSON list ``text`` (an SQL expression) as a list of their JSON texts ("4" the string and 4
    the number differ, as they do in Python); NULL when it is not a JSON list."""
    return (f"CASE WHEN json_valid({text}) AND json_type({text}) = 'ARRAY' "
            f"THEN CAST(json_extract({text}, '$[*]') AS VARCHAR[]) END")


# the parts of one item the strict metrics are made of (``with_strict_parts``), computed once per item
STRICT_PARTS = ("_s_parsed", "_s_same", "_s_nt", "_s_na", "_s_k")
METRICS = ("precision", "recall", "jaccard")


def with_strict_parts(relation: str, truth: str, parsed: str) -> str:
    """The FROM-clause ``relation`` with the columns ``STRICT_PARTS`` of each row, from its columns ``truth`` and
    ``parsed`` (JSON list text, as stored: ``items.truth``, ``results.parsed_strict``, the reference's parse, which its
    verdict judges), each computed once per row: whether the answer has a parse; whether it is the truth's very list
    (the same JSON, spacing aside: then every metric is 1 and nothing else is computed — most right answers); else
    the numbers of distinct members of the truth and of the answer and how many they share, members compared by
    their JSON text. ``strict_metric_sql`` turns them into the metrics."""
    t, a = f"coalesce({_json_members_sql(truth)}, [])", _json_members_sql(parsed)
    same = (f"CASE WHEN json_valid({truth}) AND json_valid({parsed}) THEN json({truth}) = json({parsed}) "
            "ELSE FALSE END")
    is_list = f"CASE WHEN json_valid({parsed}) THEN json_type({parsed}) = 'ARRAY' ELSE FALSE END"
    first = f"(SELECT *, {is_list} AS _s_parsed, {same} AS _s_same FROM {relation}) AS _s_first"
    # the member lists only where they are counted (a CASE evaluates a branch for its own rows only)
    skip = "WHEN NOT _s_parsed OR _s_same THEN 0"   # no parse, or the truth itself: nothing to count
    return (f"(SELECT *, CASE {skip} ELSE list_unique({t}) END AS _s_nt, "
            f"CASE {skip} ELSE list_unique({a}) END AS _s_na, "
            f"CASE {skip} ELSE len(list_intersect({t}, {a})) END AS _s_k FROM {first}) AS _s_parts")


def strict_metric_sql(name: str) -> str:
    """One item's strict ``name`` (of ``METRICS``) over the columns of ``with_strict_parts``: an answer that did not
    follow the rule (no parse) scores 0; the truth itself, or an empty answer to an empty truth, scores 1; else the
    share of the answer's members in the truth (precision), of the truth's in the answer (recall), of both in either
    (Jaccard) (``core.tasks.setops.scoring.strict_scores`` is the same in Python)."""
    head = "WHEN NOT _s_parsed THEN 0 WHEN _s_same OR (_s_nt = 0 AND _s_na = 0) THEN 1"
    return {"precision": f"CASE {head} WHEN _s_na = 0 THEN 0 ELSE _s_k / _s_na END",
            "recall": f"CASE {head} WHEN _s_nt = 0 THEN 0 ELSE _s_k / _s_nt END",
            "jaccard": f"CASE {head} ELSE _s_k / (_s_nt + _s_na - _s_k) END"}[name]


def metric_sql(name: str, scoring: str, *, stored: str, setops: str) -> str:
    """One item's ``name`` (of ``METRICS``) under ``scoring``, over a relation that has the columns of
    ``with_strict_parts`` under strict: lenient the ``stored`` value (our parse's); strict, where ``setops`` holds,
    ``strict_metric_sql`` — other tasks keep the stored value, as they keep their verdict. What agg_counts sums
    (``precision_sum`` …) and what the rows path of the views counts (core/analysis/aggregated.py)."""
    if scoring == "lenient":
        return stored
    return f"CASE WHEN {setops} THEN {strict_metric_sql(name)} ELSE {stored} END"


def _rows(scoring: str, restrict: str) -> str:
    """Every item of the restricted configurations with its result under ``scoring`` (NULLs when unanswered)."""
    rows = ("SELECT i.run_id, i.config_id, r.run_id AS r_run, r.error AS r_error, r.empty_truth AS r_empty, "
            'r."precision" AS r_precision, r.recall AS r_recall, r.jaccard AS r_jaccard, r.cache_key AS r_key, '
            f"{_scored('correct', scoring)} AS s_correct, "
            f"{_scored('followed', scoring)} AS s_followed, {_scored('answer_len', scoring)} AS s_answer_len, "
            f"{_scored('made_up', scoring)} AS s_made_up, {_truth_len(scoring)} AS s_truth_len"
            + ("" if scoring == "lenient" else f", {_SETOPS} AS _s_setops, i.truth AS _s_truth, "
               "r.parsed_strict AS _s_parsed_strict")
            + f" FROM items i {restrict} JOIN runs ru ON ru.run_id = i.run_id "
            "LEFT JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx")
    if scoring == "lenient":
        return rows
    # the strict metrics of set operations from the parts, computed once per item
    metrics = ", ".join(f"{metric_sql(m, scoring, stored=f'r_{m}', setops='_s_setops')} AS r_{m}" for m in METRICS)
    return (f"SELECT * EXCLUDE (_s_setops, _s_truth, _s_parsed_strict, {', '.join(STRICT_PARTS)}) "
            f"REPLACE ({metrics}) FROM {with_strict_parts(f'({rows})', '_s_truth', '_s_parsed_strict')}")


def _insert_counts(con, restrict: str, params: list, scorings: Sequence[str] = SCORINGS,
                   lengths: bool = True) -> None:
    sums = ", ".join(expr for _, expr in COUNTS)
    for scoring in scorings:
        con.execute(f"INSERT INTO agg_counts SELECT r.run_id, r.config_id, '{scoring}', {sums} "
                    f"FROM ({_rows(scoring, restrict)}) AS r LEFT JOIN calls c ON c.cache_key = r.r_key "
                    "GROUP BY r.run_id, r.config_id", params)
        if lengths:
            con.execute(f"INSERT INTO agg_lengths SELECT run_id, config_id, '{scoring}', s_correct, "
                        f"s_truth_len, s_answer_len, count(*) FROM ({_rows(scoring, restrict)}) AS r "
                        "WHERE s_correct IS NOT NULL GROUP BY ALL", params)


def _refresh_configs(con, run_ids: Sequence[str]) -> None:
    """agg_configs and agg_inside of whole runs, from their items."""
    if not run_ids:
        return
    FACTOR_COLUMNS = factor_columns(con)
    ph = ", ".join("?" * len(run_ids))
    for table in ("agg_configs", "agg_inside"):
        con.execute(f"DELETE FROM {table} WHERE run_id IN ({ph})", list(run_ids))
    cols = ", ".join(f'min("{c}")' for c in FACTOR_COLUMNS)
    names = ", ".join(f'"{c}"' for c in FACTOR_COLUMNS)   # by name: a later migration appends factor columns
    con.execute(f"INSERT INTO agg_configs (run_id, config_id, {names}, n_items) "
                f"SELECT run_id, config_id, {cols}, count(*) FROM items "
                f"WHERE run_id IN ({ph}) GROUP BY run_id, config_id", list(run_ids))
    # which columns vary inside a configuration (or are NULL for only part of it), per run
    flags = ", ".join(f'bool_or(lo{i} IS DISTINCT FROM hi{i}), bool_or(nn{i} > 0 AND nn{i} < n)'
                      for i in range(len(FACTOR_COLUMNS)))
    inner = ", ".join(f'min("{c}") AS lo{i}, max("{c}") AS hi{i}, count("{c}") AS nn{i}'
                      for i, c in enumerate(FACTOR_COLUMNS))
    rows = con.execute(f"SELECT run_id, {flags} FROM (SELECT run_id, count(*) AS n, {inner} FROM items "
                       f"WHERE run_id IN ({ph}) GROUP BY run_id, config_id) GROUP BY run_id", list(run_ids)
                       ).fetchall()
    inside = []
    for row in rows:
        for i, c in enumerate(FACTOR_COLUMNS):
            if row[1 + 2 * i]:
                inside.append((row[0], c, "varies"))
            if row[2 + 2 * i]:
                inside.append((row[0], c, "partial_null"))
    if inside:
        con.executemany("INSERT INTO agg_inside VALUES (?, ?, ?)", inside)


# agg_runs' row of no run: the highest version ever given in this store. Versions are drawn from one counter for
# the whole store and never given twice, even after a run is deleted and run again under the same id (run ids are
# deterministic) or the aggregates are rebuilt: a (run, version) pair names one state of one run's results for the
# store's lifetime, which is what the analysis caches keyed on it need (core/analysis/memo.py).
HIGH_WATER = ""


def _bump(con, run_ids: Iterable[str]) -> None:
    run_ids = sorted(set(run_ids))
    if not run_ids:
        return
    ph = ", ".join("?" * len(run_ids))
    con.execute(f"""INSERT INTO agg_runs
        SELECT run_id, (SELECT coalesce(max(version), 0) FROM agg_runs) + 1
        FROM (SELECT unnest([?, {ph}]) AS run_id)
        ON CONFLICT (run_id) DO UPDATE SET version = excluded.version""", [HIGH_WATER, *run_ids])


# ------------------------------------------------------------------------------------------------- maintenance

def after_items(con, run_id: str) -> None:
    """Items of a run were added: its configurations (their factor values, item counts) and its counts."""
    if not present(con):
        return
    _refresh_configs(con, [run_id])
    refresh_runs(con, [run_id], configs=False)


def after_results(con, staged: str) -> None:
    """Results were written for the (run_id, idx) pairs of the registered relation ``staged``: recount the
    configurations they belong to (every scoring), in the caller's transaction."""
    if not present(con):
        return
    con.execute("CREATE OR REPLACE TEMP TABLE _agg_touch AS SELECT DISTINCT i.run_id, i.config_id "
                f"FROM (SELECT DISTINCT run_id, idx FROM {staged}) s "
                "JOIN items i ON i.run_id = s.run_id AND i.idx = s.idx")
    try:
        for table in ("agg_counts", "agg_lengths"):
            con.execute(f"DELETE FROM {table} USING _agg_touch t "
                        f"WHERE {table}.run_id = t.run_id AND {table}.config_id = t.config_id")
        _insert_counts(con, "SEMI JOIN _agg_touch t ON t.run_id = i.run_id AND t.config_id = i.config_id", [])
        _bump(con, [r[0] for r in con.execute("SELECT DISTINCT run_id FROM _agg_touch").fetchall()])
    finally:
        con.execute("DROP TABLE IF EXISTS _agg_touch")


def refresh_runs(con, run_ids: Sequence[str], configs: bool = True) -> None:
    """Recount whole runs (an import, a re-score, orphan rows): every table, or the counts only."""
    run_ids = sorted(set(run_ids))
    if not run_ids or not present(con):
        return
    if configs:
        _refresh_configs(con, run_ids)
    ph = ", ".join("?" * len(run_ids))
    for table in ("agg_counts", "agg_lengths"):
        con.execute(f"DELETE FROM {table} WHERE run_id IN ({ph})", run_ids)
    _insert_counts(con, f"SEMI JOIN (SELECT unnest([{ph}]) AS run_id) t ON t.run_id = i.run_id", run_ids)
    _bump(con, run_ids)


def drop_runs(con, run_ids: Sequence[str]) -> None:
    """A run was deleted: its aggregates go with it."""
    run_ids = sorted(set(run_ids))
    if not run_ids or not present(con):
        return
    ph = ", ".join("?" * len(run_ids))
    for table in TABLES:   # agg_runs' high-water row stays: a version is never given twice
        con.execute(f"DELETE FROM {table} WHERE run_id IN ({ph})", run_ids)


def rebuild(con) -> int:
    """Recompute every aggregate from the rows (migration 6 on an existing store; the synthetic filler).
    Returns the number of runs."""
    high = con.execute("SELECT coalesce(max(version), 0) FROM agg_runs").fetchone()[0]
    for table in TABLES:
        con.execute(f"DELETE FROM {table}")
    con.execute("INSERT INTO agg_runs VALUES (?, ?)", [HIGH_WATER, high])   # the counter goes on from there
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    if not run_ids:
        return 0
    _refresh_configs(con, run_ids)
    _insert_counts(con, "", [])
    _bump(con, run_ids)
    return len(run_ids)


def rebuild_counts(con, scorings: Sequence[str]) -> int:
    """Recompute agg_counts' rows of ``scorings`` of every run from the rows, leaving every other table (and the
    runs' versions) as they are: a migration that changes what those counts mean, not what any view shows (migration
    11: the strict rows' precision, recall and Jaccard, which views computed from the rows before). Returns the
    number of runs."""
    if not present(con):
        return 0
    scorings = [s for s in SCORINGS if s in scorings]
    if not scorings:
        return 0
    con.execute("DELETE FROM agg_counts WHERE scoring IN (SELECT unnest(?))", [scorings])
    _insert_counts(con, "", [], scorings, lengths=False)
    return con.execute("SELECT count(*) FROM runs").fetchone()[0]


def versions(con, run_ids: Sequence[str] | None = None) -> tuple:
    """((run_id, version), …) of some runs (all when None): a cache key that changes with every write to them."""
    if not present(con):
        return ()
    if run_ids is None:
        return tuple(con.execute("SELECT run_id, version FROM agg_runs WHERE run_id <> ? ORDER BY run_id",
                                 [HIGH_WATER]).fetchall())
    run_ids = sorted(set(run_ids))
    if not run_ids:
        return ()
    ph = ", ".join("?" * len(run_ids))
    return tuple(con.execute(f"SELECT run_id, version FROM agg_runs WHERE run_id IN ({ph}) ORDER BY run_id",
                             run_ids).fetchall())


LIVE = ("running", "pending")   # statuses of a run still being written: its results are not kept in the store


def states(con, run_ids: Sequence[str] | None = None) -> tuple:
    """((run_id, version, status, row), …) of some runs (every stored run when None), by run id: what any view of
    these runs reads changes only when this does. ``version`` grows with every write of the run's items or results
    (inserts, merges, imports, re-scores, rebuilds; None where the run has no aggregates); ``row`` is a digest of
    its ``runs`` row (status, counts, name, settings …), which changes without a version when only the run's
    record does (a status change). A run asked for that the store does not hold is (run_id, None, None, None): a
    deleted run's state differs from every state it had, and a run stored later under that id is new again."""
    where, params = "", []
    if run_ids is not None:
        run_ids = sorted(set(run_ids))
        if not run_ids:
            return ()
        where, params = "WHERE ru.run_id IN (SELECT unnest(?))", [run_ids]
    agg = "(SELECT run_id, version FROM agg_runs)" if present(con) else \
        "(SELECT NULL::VARCHAR AS run_id, NULL::BIGINT AS version)"
    rows = con.execute(f"SELECT ru.run_id, a.version, ru.status, md5(CAST(ru AS VARCHAR)) FROM runs ru "
                       f"LEFT JOIN {agg} a ON a.run_id = ru.run_id {where} ORDER BY ru.run_id", params).fetchall()
    got = {r[0]: tuple(r) for r in rows}
    if run_ids is None:
        return tuple(got.values())
    return tuple(got.get(r, (r, None, None, None)) for r in run_ids)


def _snapshot(con) -> dict:
    out = {}
    for t in TABLES:
        rows = con.execute(f"SELECT * EXCLUDE (version) FROM {t} WHERE run_id <> ?" if t == "agg_runs" else
                           f"SELECT * FROM {t}", [HIGH_WATER] if t == "agg_runs" else []).fetchall()
        # sums of doubles may differ in their last bits with the order DuckDB adds them in
        out[t] = sorted((tuple(round(v, 9) if isinstance(v, float) else v for v in row) for row in rows), key=repr)
    return out


def check(con) -> list[str]:
    """Differences between the stored aggregates and a fresh computation from the rows ([] = consistent).
    Recomputes inside a transaction it rolls back: nothing is changed."""
    con.execute("BEGIN TRANSACTION")
    try:
        before = _snapshot(con)
        rebuild(con)
        after = _snapshot(con)
    finally:
        con.execute("ROLLBACK")
    problems = []
    for t in TABLES:
        if before[t] != after[t]:
            diff = len(set(before[t]) ^ set(after[t]))
            problems.append(f"{t}: {len(before[t])} stored rows, {len(after[t])} recomputed, {diff} differ")
    return problems
