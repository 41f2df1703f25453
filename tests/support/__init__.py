"""Test support shared by the test tree (and the benchmarks): paths, a loopback OpenAI-compatible endpoint with
injectable faults (``loopback``), synthetic result rows written through the real store (``synthetic``), a blocklist
that remembers its verdicts (``lexicon``)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # the checkout
DATA = ROOT / "tests" / "data"               # test fixtures (parse corpus, replayed API payloads, …)

# a small set-operations grid of 24 items over numbers and words (pages' tests run the reference solver on it)
SMALL_GRID = {"task": "setops", "seed": 0, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
              "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


def version_1_store(path):
    """An open DuckDB connection on a new file at ``path`` laid out as the store's first schema version (before any
    later migration), for tests and benchmarks of the migrations. The caller closes it."""
    import duckdb

    from core.store import schema

    con = duckdb.connect(str(path))
    con.execute(schema._VERSION_TABLE)
    for sql in schema.MIGRATIONS[0][1]:
        con.execute(sql)
    con.execute("INSERT INTO schema_version (version) VALUES (1)")
    return con
