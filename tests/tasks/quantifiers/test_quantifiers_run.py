"""Quantifier configs through the real CLI, runner and DuckDB store; metrics (SQL) checked by hand-computed numbers."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from core import runner, store
from core.errors import UserError
from core.tasks import quantifiers as Q
from core.tasks.quantifiers import metrics as QM
from core.tasks.quantifiers.parse import parse_truth_gqg
from tests.support import ROOT

CONFIG_YAML = """\
task: quantifiers
quantifiers: [at least half, between 4 and 6, none, at least 40%]
noun_groups: [common, made_up]
nouns_per_group: 3
samples: 5
seed: 3
"""


@pytest.fixture()
def run_cli(cli, monkeypatch):
    """The CLI in-process (``cli``, tests/conftest.py) on the store ``db`` (STUDIO_DB)."""
    def call(*args, db):
        monkeypatch.setenv("STUDIO_DB", str(db))
        return cli(*args)

    return call


def test_cli_run_reference_solver_scores_100(tmp_path, run_cli):
    cfg_file = tmp_path / "q.yaml"
    cfg_file.write_text(CONFIG_YAML)
    db = tmp_path / "studio.duckdb"
    out = run_cli("run", "--config", str(cfg_file), "--model", "reference/solver", "--no-progress", db=db)
    assert out.returncode == 0, out.stderr
    assert "240/240 answered" in out.stdout and "accuracy 1.000" in out.stdout
    with store.connect(db) as con:
        runs = QM.quantifier_runs(con)
        assert len(runs) == 1
        rid = runs.run_id.iloc[0]
        overall = QM.quantifier_metrics(con, [rid], None)
        by_q = QM.quantifier_metrics(con, [rid], "quantifier")
        by_g = QM.quantifier_metrics(con, [rid], ["noun_group"])
        by_p = QM.quantifier_metrics(con, [rid], ["predicate"])
        by_c = QM.accuracy_by_count(con, [rid], ["quantifier"])
        stored = con.execute("SELECT count(*), count(DISTINCT config_id), min(count_asked), max(count_asked) "
                             "FROM v_results WHERE run_id = ?", [rid]).fetchone()
    cfg = Q.load_config(dict(__import__("yaml").safe_load(CONFIG_YAML)))
    info = Q.describe(cfg)
    assert stored[0] == Q.count(cfg) == 240 and stored[1] == info["n_configs"] == 48
    assert 0 <= stored[2] <= stored[3] <= 50
    row = overall.iloc[0]
    assert row["n"] == row["answered"] == 240 and row["unparsed"] == 0
    assert row["accuracy"] == row["accuracy_gqg"] == row["precision"] == row["recall"] == row["f1"] == 1.0
    assert row["tp"] == info["n_true"] and row["tn"] == info["n_false"]
    assert (by_q["accuracy"] == 1.0).all() and list(by_q["quantifier"]) == sorted(cfg.quantifiers)
    assert dict(zip(by_q["quantifier"], by_q["tp"])) == info["true_per_quantifier"]
    assert list(by_g["noun_group"]) == ["common", "made_up"] and (by_g["f1"] == 1.0).all()
    assert set(by_p["predicate"]) == {"large", "small"}
    # along the count the answers equal the truth exactly
    assert (by_c["pred_true"] == by_c["label_true"]).all()
    with store.connect(db) as con:
        binned = QM.accuracy_by_count(con, [rid], ["quantifier"], bin_width=5)
        with pytest.raises(UserError):
            QM.accuracy_by_count(con, [rid], bin_width=0)
    assert (binned["count_asked"] % 5 == 0).all() and binned["n"].sum() == 240
    assert binned.groupby("quantifier")["n"].sum().to_dict() == by_c.groupby("quantifier")["n"].sum().to_dict()


def test_cli_generate_preset_vanilla(tmp_path, run_cli):
    out_file = tmp_path / "gqg.jsonl"
    out = run_cli("generate", "quantifiers", "--preset", "gqg-vanilla", "--out", str(out_file), db=tmp_path / "x.db")
    assert out.returncode == 0, out.stderr
    lines = out_file.read_text().splitlines()
    assert len(lines) == 18360
    df = pd.read_json(out_file, lines=True)
    assert df["label"].value_counts().to_dict() == {"false": 9768, "true": 8592}
    for col in ("prompt", "label", "quantifier", "object", "total", "count_large", "count_small", "predicate"):
        assert col in df.columns


def test_cli_run_bad_config_is_one_line(tmp_path, run_cli):
    cfg_file = tmp_path / "bad.yaml"
    cfg_file.write_text("task: quantifiers\nquantifiers: [most]\n")
    out = run_cli("run", "--config", str(cfg_file), "--model", "reference/solver", "--no-progress",
               db=tmp_path / "s.duckdb")
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error: unknown quantifier 'most'")
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def _frame():
    # label, pred → tp 2, fp 1, fn 2 (one of them unparseable), tn 2 (one of them unparseable)
    rows = [("true", "true"), ("true", "true"), ("false", "true"), ("true", "false"), ("true", None),
            ("false", "false"), ("false", None)]
    df = pd.DataFrame(rows, columns=["label", "pred"])
    df["correct"] = df["label"] == df["pred"]
    df["correct_gqg"] = df["label"] == df["pred"].fillna("false")
    df["quantifier"] = ["all", "all", "all", "none", "none", "none", "none"]
    return df


def test_metrics_under_gqg_rule_use_its_prediction():
    # GQG's rule never leaves an answer unparsed: the prediction is the label when correct_gqg, else the other one
    m = QM.metrics_from_frame(_frame(), None, rule="gqg").iloc[0]
    assert m["rule"] == "gqg" and m["unparsed"] == 0 and m["answered"] == 7
    assert m["accuracy"] == pytest.approx(4 / 7) == pytest.approx(m["accuracy_gqg"])
    assert (m["tp"], m["fp"], m["fn"], m["tn"]) == (2, 1, 2, 2)   # the two unparsed answers read "false"
    ours = QM.metrics_from_frame(_frame(), None).iloc[0]
    assert ours["rule"] == "ours" and ours["unparsed"] == 2
    with pytest.raises(UserError, match="answer rule"):
        QM.metrics_from_frame(_frame(), None, rule="paper")


def test_metrics_definitions_by_hand():
    m = QM.metrics_from_frame(_frame(), None).iloc[0]
    assert (m["n"], m["answered"], m["unparsed"]) == (7, 7, 2)
    assert (m["tp"], m["fp"], m["fn"], m["tn"]) == (2, 1, 2, 2)
    assert m["accuracy"] == pytest.approx(3 / 7)       # unparseable answers are wrong
    assert m["accuracy_gqg"] == pytest.approx(4 / 7)   # … or "false", the GQG way
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 4)
    assert m["f1"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 2))
    assert m["unparsed_share"] == pytest.approx(2 / 7)
    by = QM.metrics_from_frame(_frame(), "quantifier").set_index("quantifier")
    assert by.loc["all", "accuracy"] == pytest.approx(2 / 3) and by.loc["none", "recall"] == 0.0
    assert pd.isna(by.loc["none", "precision"])  # nothing predicted true: undefined, not 0


def test_metrics_sql_matches_frame_on_store(tmp_path):
    """The same numbers from the store's v_results (a run with a made-up model answering badly)."""
    db = tmp_path / "s.duckdb"

    class Contrarian:
        """Answers the opposite on odd counts, nonsense when the count is a multiple of 7."""
        spec, provider, default_concurrency, supported_params = "test/contrarian", "test", 4, ()

        async def complete(self, request):
            from core.models import Completion

            it = request.item
            a = it["count_asked"]
            if a % 7 == 0:
                text = "I am not sure."
            elif a % 2:
                text = "false" if it["label"] == "true" else "TRUE."
            else:
                text = f"Answer: {it['label'].capitalize()}"
            return Completion(text, 1, 1, 0.1, 0.0, "stop", ())

    cfg = {"task": "quantifiers", "quantifiers": ["at least half", "more than 10"], "objects": ["boxes", "jars"],
           "total": 20}
    progress = runner.run(cfg, Contrarian(), db_path=db)
    assert progress.done == Q.count(Q.load_config(cfg)) == 2 * 2 * 2 * 21
    with store.connect(db) as con:
        rid = QM.quantifier_runs(con).run_id.iloc[0]
        sql = QM.quantifier_metrics(con, [rid], ["quantifier"])
        frame = con.execute("SELECT * FROM v_results WHERE run_id = ?", [rid]).df()
    by_hand = QM.metrics_from_frame(frame, ["quantifier"])
    pd.testing.assert_frame_equal(sql, by_hand, check_dtype=False)
    expected_unparsed = sum(1 for it in frame.itertuples() if it.count_asked % 7 == 0)
    assert sql["unparsed"].sum() == expected_unparsed > 0
    n_correct = sum(1 for it in frame.itertuples() if it.count_asked % 7 and it.count_asked % 2 == 0)
    assert sql["accuracy"].mul(sql["answered"]).sum() == pytest.approx(n_correct)


def test_group_by_whitelist():
    with pytest.raises(UserError):
        QM.metrics_from_frame(_frame(), ["quantifier; DROP TABLE runs"])


@pytest.mark.slow
def test_embedded_model_end_to_end(tmp_path):
    """The real embedded model (SmolLM2 via llama.cpp) on a tiny sampled variation: every item answered, parsed or
    kept as unparseable, scored and aggregated."""
    pytest.importorskip("llama_cpp")
    db = tmp_path / "s.duckdb"
    cfg = {"task": "quantifiers", "quantifiers": ["at least half"], "noun_groups": ["made_up"],
           "nouns_per_group": 1, "samples": 3, "seed": 2}
    progress = runner.run(cfg, "local/smollm2", params={"max_tokens": 8}, db_path=db)
    assert progress.status == "done" and progress.done == 6 and progress.failed == 0
    with store.connect(db) as con:
        rid = QM.quantifier_runs(con).run_id.iloc[0]
        rows = con.execute("SELECT response, pred, followed, correct, correct_gqg, label FROM v_results "
                           "WHERE run_id = ?", [rid]).df()
        m = QM.quantifier_metrics(con, [rid], None).iloc[0]
    assert len(rows) == 6 and rows["response"].notna().all()
    for r in rows.itertuples():
        assert r.pred in ("true", "false", None) and r.followed == (r.pred is not None)
        assert r.correct == (r.pred == r.label)
        assert r.correct_gqg == (parse_truth_gqg(r.response) == r.label)   # GQG's own rule, stored
    assert m["answered"] == 6 and 0.0 <= m["accuracy"] <= 1.0


def test_generate_is_byte_identical_across_processes(tmp_path):
    cfg_file = tmp_path / "q.yaml"
    cfg_file.write_text(CONFIG_YAML + "predicates: [[large, small], [heavy, light]]\ntemplate: statement\n")
    digests = set()
    for hash_seed in ("0", "4242"):
        out_file = tmp_path / f"items_{hash_seed}.csv"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-m", "core", "generate", "quantifiers", "--config", str(cfg_file),
                              "--out", str(out_file)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        digests.add(__import__("hashlib").sha256(out_file.read_bytes()).hexdigest())
    assert len(digests) == 1
    df = pd.read_csv(tmp_path / "items_0.csv")
    assert len(df) == 480 and set(df["predicate"]) == {"large", "small", "heavy", "light"}


def test_gold_and_predicted_true_shares_use_the_same_items_when_calls_fail(tmp_path):
    """Failed calls (no answer) must not skew the gold line of the count chart: with a model that is always right
    but fails on every 'true' item of odd count, pred_true and label_true still agree at every count."""
    db = tmp_path / "f.duckdb"

    class RightButFlaky:
        spec, provider, default_concurrency, supported_params = "test/right-but-flaky", "test", 4, ()

        async def complete(self, request):
            from core.models import Completion, ModelError

            it = request.item
            if it["label"] == "true" and it["count_asked"] % 2:
                raise ModelError("refused")
            return Completion(it["label"], 1, 1, 0.1, 0.0, "stop", ())

    cfg = {"task": "quantifiers", "quantifiers": ["at least half"], "objects": ["boxes"], "total": 10}
    progress = runner.run(cfg, RightButFlaky(), db_path=db, max_attempts=1)
    assert progress.failed > 0
    with store.connect(db) as con:
        rid = QM.quantifier_runs(con).run_id.iloc[0]
        by_c = QM.accuracy_by_count(con, [rid], ["quantifier"])
        overall = QM.quantifier_metrics(con, [rid], None).iloc[0]
    assert overall["answered"] < overall["n"] and overall["accuracy"] == 1.0
    answered = by_c[by_c["answered"] > 0]
    assert (answered["pred_true"] == answered["label_true"]).all(), by_c[["count_asked", "pred_true", "label_true"]]
