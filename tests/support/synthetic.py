"""Synthetic set-operation results over the paper's factors, written straight into a store's tables with DuckDB SQL.

Used by ``bench/analysis_speed.py`` (a million rows) and by tests that need realistic distributions fast. Accuracy
depends on the factors the way the paper reports (union easy, size hurts, deceptive swapped hurts…), with
deterministic pseudo-randomness (``hash`` of DuckDB over integers — same on every machine for a given DuckDB
version), so analyses have something to find. Nothing here is used to produce results a user sees as real.
"""

from __future__ import annotations

SYNTH_FACTORS_SQL = """
    list_extract(['union','intersection','difference','symmetric_difference'], 1 + (c % 4)) AS operation,
    list_extract([2,4,8,16], 1 + ((c // 4) % 4)) AS size_a,
    list_extract([2,4,8,16], 1 + ((c // 4) % 4)) AS size_b,
    list_extract(['numbers','words','deceptive'], 1 + ((c // 16) % 3)) AS members,
    CASE WHEN (c // 48) % 5 = 0 THEN NULL ELSE (c // 48) % 5 END AS length,
    list_extract(['formal','plain'], 1 + ((c // 240) % 2)) AS phrasing,
    list_extract(['baseline','baseline_allow_empty','chain_of_thought','self_recitation','domain_expertise',
                  'composite','composite_allow_empty'], 1 + ((c // 480) % 7)) AS approach,
    list_extract([0,1,3,5], 1 + ((c // 3360) % 4)) AS shots,
    CASE WHEN (c // 16) % 3 = 2 THEN list_extract(['not_swapped','swapped','random'], CAST(1 + (hash(c * 3 + 5) % 3) AS BIGINT))
         ELSE NULL END AS condition
"""


def fill_synthetic(con, n_rows: int = 1_000_000, samples: int = 50, models=("synthetic/a", "synthetic/b"),
                   table: str | None = None) -> list[str]:
    """Create one run per model with ``n_rows`` items in total. With ``table`` given, write a flat table of
    that name holding the v_results columns (no store needed); otherwise write the store's runs/items/results
    tables through core.store's schema. Returns the run ids."""
    per_model = n_rows // len(models)
    run_ids = [f"synth{i}" for i in range(len(models))]
    selects = []
    for m_i, (rid, model) in enumerate(zip(run_ids, models)):
        selects.append(f"""
            SELECT '{rid}' AS run_id, '{model}' AS model, 'setops' AS task, 'synthetic' AS name,
                   i AS idx, c, s, {m_i} AS m
            FROM (SELECT range AS i, range // {samples} AS c, range % {samples} AS s FROM range({per_model}))""")
    base = " UNION ALL ".join(selects)
    rows_sql = f"""
        WITH b AS ({base}),
        f AS (SELECT *, {SYNTH_FACTORS_SQL} FROM b),
        p AS (SELECT *,
                 greatest(0.02, least(0.995,
                   0.97 - 0.06 * log2(size_a) - 0.05 * m
                   - CASE operation WHEN 'union' THEN 0 WHEN 'intersection' THEN 0.18 WHEN 'difference' THEN 0.12
                                    ELSE 0.2 END
                   - CASE WHEN condition = 'swapped' THEN 0.2 ELSE 0 END
                   - CASE WHEN members = 'numbers' THEN 0.02 * coalesce(length, 0) ELSE 0 END
                   + 0.15 * ((hash(c * 7919 + m) % 1000) / 1000.0 - 0.5))) AS p_ok,
                 (hash(idx * 104729 + m * 13 + 1) % 100000) / 100000.0 AS u,
                 (hash(idx * 31 + m * 7 + 2) % 100000) / 100000.0 AS u2
              FROM f)
        SELECT run_id, idx, 'cfg' || lpad(CAST(c AS VARCHAR), 6, '0') AS config_id, s AS sample, model, task, name,
               operation, size_a, size_b, members, length, CAST(NULL AS INTEGER) AS decile,
               CAST(NULL AS VARCHAR) AS decile_mode, condition, phrasing, approach, shots,
               'Prompt for config ' || c || ' sample ' || s AS prompt,
               u < p_ok AS correct,
               u2 > 0.004 AS followed,
               u2 > 0.08 AS strict_ok,
               CASE WHEN operation = 'intersection' AND u2 < 0.5 THEN 0
                    WHEN operation = 'union' THEN 2 * size_a - CAST(u2 * 2 AS INTEGER)
                    ELSE greatest(0, size_a - CAST(u2 * 3 AS INTEGER)) END AS truth_len,
               CASE WHEN u2 <= 0.004 THEN NULL ELSE CAST(u * 3 AS INTEGER) END AS ans_delta,
               CASE WHEN u > 0.97 THEN 1 ELSE 0 END AS made_up,
               'answer ' || s AS response, 10.0 + 40 * u2 AS latency_ms, 120 AS tokens_in, 12 AS tokens_out,
               0.0 AS cost_usd, run_id || ':' || idx AS cache_key, 0 AS draw
        FROM p"""
    # strict verdicts (the reference's rule): a stricter parser — about 8 % of the answers it leniently reads are
    # not followed under strict (no tags, two blocks …), the rest keep the lenient verdict
    final = f"""
        SELECT * EXCLUDE (ans_delta, correct, followed, strict_ok),
               followed AND correct AS correct, followed,
               CASE WHEN NOT followed THEN NULL WHEN followed AND correct THEN truth_len
                    ELSE truth_len + 1 + ans_delta END AS answer_len,
               truth_len = 0 AS empty_truth,
               strict_ok AS followed_strict,
               strict_ok AND correct AS correct_strict,
               CASE WHEN NOT strict_ok THEN NULL WHEN correct THEN truth_len
                    ELSE truth_len + 1 + ans_delta END AS answer_len_strict,
               CASE WHEN strict_ok THEN made_up ELSE 0 END AS made_up_strict
        FROM ({rows_sql})"""
    if table:
        con.execute(f"CREATE OR REPLACE TABLE {table} AS {final}")
        return run_ids
    from core import store  # real store schema

    return store.insert_synthetic(con, final, run_ids) if hasattr(store, "insert_synthetic") else \
        _insert_into_store(con, final, run_ids)


def _insert_into_store(con, rows_sql: str, run_ids: list[str]) -> list[str]:
    """Write rows into the store's runs / items / results tables (columns matched by name)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE _synth AS {rows_sql}")

    def cols(table):
        return [r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main'",
            [table]).fetchall()]

    synth_cols = set(cols("_synth") or [r[0] for r in con.execute("DESCRIBE _synth").fetchall()])
    run_cols = cols("runs")
    for rid in run_ids:
        model = con.execute("SELECT any_value(model) FROM _synth WHERE run_id = ?", [rid]).fetchone()[0]
        n = con.execute("SELECT count(*) FROM _synth WHERE run_id = ?", [rid]).fetchone()[0]
        values = {"run_id": rid, "task": "setops", "name": "synthetic", "model": model, "status": "done",
                  "n_items": n, "config_json": "{}", "params_json": "{}", "source": "synthetic"}
        use = [c for c in run_cols if c in values]
        con.execute(f"INSERT INTO runs ({', '.join(use)}) VALUES ({', '.join('?' * len(use))})",
                    [values[c] for c in use])
    for table in ("items", "results", "calls"):
        tcols = [c for c in cols(table) if c in synth_cols]
        sel = ", ".join(tcols)
        con.execute(f"INSERT INTO {table} ({sel}) SELECT {sel} FROM _synth")
    con.execute("DROP TABLE _synth")
    from core.store import aggregates

    aggregates.refresh_runs(con, run_ids)   # written around the store's writers: count them as a migration would
    return run_ids
