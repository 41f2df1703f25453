"""`python -m core generate …`: files in three formats, byte-identical across processes, every invariant of S1–S8
checked from the output file alone, clear one-line errors."""

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest
import yaml

from tests.support import ROOT

REQUIRED = ("config_id", "idx", "operation", "size_a", "size_b", "members", "length", "decile", "condition",
            "hypernym_a", "hypernym_b", "member_hypernyms", "swap_count", "phrasing", "approach", "shots", "seed",
            "set_a", "set_b", "truth", "prompt")
PY = {"union": set.union, "intersection": set.intersection, "difference": set.difference,
      "symmetric_difference": set.symmetric_difference}

BROAD = {
    "task": "setops",
    "seed": 11,
    "samples": 4,
    "operations": ["union", "intersection", "difference", "symmetric_difference"],
    "sizes_a": [2, 5, 16],
    "sizes_b": [3, 16],
    "members": ["numbers", "words", "deciles", "deceptive"],
    "lengths": [None, 1, 3],
    "deciles": [1, 5, 10],
    "decile_mode": ["log_width", "rank"],
    "conditions": ["not_swapped", "swapped", "random"],
    "swap_count": [None, 1],
    "overlap": [None, 1],
    "phrasings": ["formal", "iterative"],
    "approaches": ["composite_allow_empty"],
    "shots": [0, 2],
    "fixed_shots": False,
}


def _generate(tmp_path, cfg, name, *extra, env=None):
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / name
    proc = subprocess.run([sys.executable, "-m", "core", "generate", cfg.get("task", "setops"), "--config",
                           str(cfg_path), "--out", str(out), *extra],
                          cwd=ROOT, capture_output=True, text=True, env=env)
    return proc, out


def _env(hash_seed):
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = str(hash_seed)
    return env


def _read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def broad_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broad")
    proc, out = _generate(tmp, BROAD, "broad.jsonl")
    assert proc.returncode == 0, proc.stderr
    return out, proc.stderr


@pytest.mark.slow
def test_broad_grid_invariants_from_the_file_alone(broad_file):
    import wordfreq

    path, stderr = broad_file
    rows = _read_jsonl(path)
    assert rows and all(set(REQUIRED) <= set(r) for r in rows)
    assert [r["idx"] for r in rows] == list(range(len(rows)))
    assert "warning: skipped" in stderr and "numbers of length 1" in stderr  # 16 one-digit numbers
    seen_members = set()
    decile_words = defaultdict(set)
    cells = defaultdict(set)
    for r in rows:
        a, b = r["set_a"], r["set_b"]
        sa, sb = set(a), set(b)
        seen_members.add(r["members"])
        # sizes exact, members distinct
        assert len(a) == len(sa) == r["size_a"] and len(b) == len(sb) == r["size_b"]
        # truth correct for the operation, canonical order
        assert r["truth"] == sorted(PY[r["operation"]](sa, sb))
        if r["members"] == "numbers":
            assert all(isinstance(x, int) for x in a + b)
            if r["length"]:
                assert all(len(str(x)) == r["length"] for x in a + b)
        else:
            assert all(isinstance(x, str) and x == x.lower() for x in a + b)
            if r["length"]:
                assert all(len(x) == r["length"] for x in a + b)
        if r["overlap"] is not None:
            assert len(sa & sb) == r["overlap"]
        if r["members"] == "deciles":
            decile_words[(r["decile_mode"], r["decile"])].update(a + b)
        if r["members"] == "deceptive":
            hyp = r["member_hypernyms"]
            assert r["hypernym_a"] and r["hypernym_b"] and r["hypernym_a"] != r["hypernym_b"]
            assert set(hyp) == sa | sb
            if r["condition"] == "not_swapped":
                assert {hyp[w] for w in a} == {r["hypernym_a"]} and {hyp[w] for w in b} == {r["hypernym_b"]}
            elif r["condition"] == "swapped":
                assert sum(hyp[w] == r["hypernym_b"] for w in a) == r["swap_count"]
                assert sum(hyp[w] == r["hypernym_a"] for w in b) == r["swap_count"]
                assert sum(hyp[w] == r["hypernym_a"] for w in a) == r["size_a"] - r["swap_count"]
            else:
                assert r["condition"] == "random" and not sa & sb
        else:
            assert r["hypernym_a"] is None and r["member_hypernyms"] is None
        # the prompt shows the sets in the recorded order and asks for <answer> tags
        shown = ", ".join(map(str, a))   # bare members in parentheses, as the reference shows them
        assert "Set A is (" + shown + ")" in r["prompt"] and "<answer></answer>" in r["prompt"]
        cells[r["config_id"]].add((tuple(a), tuple(b)))
    assert seen_members == {"numbers", "words", "deciles", "deceptive"}
    assert all(len(pairs) == BROAD["samples"] for pairs in cells.values())  # distinct samples per configuration
    assert len({r["prompt"] for r in rows}) == len(rows)
    # decile 10 words are commoner than decile 1 words (both modes), checked with wordfreq itself
    for mode in ("log_width", "rank"):
        rare = max(wordfreq.word_frequency(w, "en") for w in decile_words[(mode, 1)])
        common = min(wordfreq.word_frequency(w, "en") for w in decile_words[(mode, 10)])
        mid = decile_words[(mode, 5)]
        assert common > rare
        assert min(wordfreq.word_frequency(w, "en") for w in mid) >= rare
        assert max(wordfreq.word_frequency(w, "en") for w in mid) <= common


@pytest.mark.slow
@pytest.mark.parametrize("fmt, members", [("jsonl", ["numbers", "words", "deciles", "deceptive"]),
                                          ("csv", ["numbers", "words", "deceptive"]),
                                          ("parquet", ["numbers", "words", "deceptive"])])
def test_byte_identical_across_processes_and_hash_seeds(tmp_path, fmt, members):
    cfg = dict(BROAD, samples=2, sizes_a=[2, 4], sizes_b=[3], lengths=[None, 2], deciles=[2, 9],
               decile_mode=["rank"], approaches=["cot"], fixed_shots=True, members=members)
    first = tmp_path / "a"
    second = tmp_path / "b"
    first.mkdir()
    second.mkdir()
    p1, out1 = _generate(first, cfg, f"items.{fmt}", env=_env(1))
    p2, out2 = _generate(second, cfg, f"items.{fmt}", env=_env(98765))
    assert p1.returncode == 0 and p2.returncode == 0, p1.stderr + p2.stderr
    assert out1.read_bytes() == out2.read_bytes()
    assert out1.stat().st_size > 1000


@pytest.mark.slow
def test_csv_and_parquet_hold_the_same_records_as_jsonl(tmp_path):
    import pyarrow.parquet as pq

    cfg = dict(BROAD, samples=2, sizes_a=[2], sizes_b=[3], members=["numbers", "deceptive"], lengths=[None],
               overlap=[None], phrasings=["plain"], approaches=["baseline"], shots=[1])
    p, jl = _generate(tmp_path, cfg, "x.jsonl")
    assert p.returncode == 0, p.stderr
    _generate(tmp_path, cfg, "x.csv")
    _generate(tmp_path, cfg, "x.parquet")
    rows = _read_jsonl(jl)
    with open(tmp_path / "x.csv", newline="", encoding="utf-8") as fh:
        crows = list(csv.DictReader(fh))
    table = pq.read_table(tmp_path / "x.parquet").to_pylist()
    assert len(rows) == len(crows) == len(table)
    assert list(crows[0]) == list(rows[0]) == list(table[0])
    for r, c, t in zip(rows, crows, table):
        assert json.loads(c["set_a"]) == r["set_a"] == json.loads(t["set_a"])
        assert json.loads(c["truth"]) == r["truth"] == json.loads(t["truth"])
        assert c["prompt"] == r["prompt"] == t["prompt"]
        assert int(c["size_a"]) == r["size_a"] == t["size_a"]
        assert (json.loads(c["member_hypernyms"]) if c["member_hypernyms"] else None) == r["member_hypernyms"]


@pytest.mark.parametrize(
    "cfg, words",
    [
        ({"task": "setops", "sizez": [2]}, "unknown config key 'sizez'"),
        ({"task": "setops", "sizes": [0]}, "sizes: 0 is out of range"),
        ({"task": "setops", "members": "numbers", "sizes": [16], "lengths": [1]}, "yields no items"),
        ({"task": "quantifiers"}, "not 'setops'"),
    ],
)
def test_bad_configs_exit_nonzero_with_one_line(tmp_path, cfg, words):
    cfg_path = tmp_path / "bad.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "core", "generate", "setops", "--config", str(cfg_path),
                           "--out", str(tmp_path / "o.jsonl")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], proc.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_cli_usage_errors(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "core", "generate", *args], cwd=ROOT, capture_output=True,
                              text=True)

    p = run("setops", "--preset", "demo-small", "--out", str(tmp_path / "x.txt"))
    assert p.returncode != 0 and "cannot tell the format" in p.stderr and "Traceback" not in p.stderr
    p = run("setops", "--config", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "x.jsonl"))
    assert p.returncode != 0 and "not found" in p.stderr and "Traceback" not in p.stderr
    p = run("bogus", "--out", str(tmp_path / "x.jsonl"))
    assert p.returncode != 0 and "unknown task" in p.stderr
    p = run("setops", "--list-presets")
    assert p.returncode == 0 and "paper-main" in p.stdout


def test_preset_and_limit(tmp_path):
    out = tmp_path / "demo.jsonl"
    p = subprocess.run([sys.executable, "-m", "core", "generate", "setops", "--preset", "demo-small", "--limit", "7",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 7
    assert "wrote 7 setops items" in p.stderr


def test_quantifiers_dispatch_with_the_gqg_preset(tmp_path):
    out = tmp_path / "gqg.jsonl"
    p = subprocess.run([sys.executable, "-m", "core", "generate", "quantifiers", "--preset", "gqg-vanilla",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 18360
    assert sum(r["label"] == "true" for r in rows) == 8592


REFERENCE_CONFIGS = ROOT / "tests" / "data" / "reference_configs"


def test_generate_and_run_accept_a_reference_experiment_yaml_as_it_is(tmp_path, cli):
    out = tmp_path / "haiku.jsonl"
    r = cli("generate", "setops", "--config", REFERENCE_CONFIGS / "anthr_haiku.yaml", "--out", out, "--limit", "60")
    assert r.returncode == 0, r.stderr
    assert "note: LOAD_GENERATED_DATA" in r.stderr and "warning: skipped 128 of 4096 grid cells" in r.stderr
    rows = _read_jsonl(out)
    assert len(rows) == 60 and rows[0]["seed"] == 292 and rows[0]["phrasing"] == "formal"
    db = tmp_path / "c.duckdb"
    r = cli("run", "--config", REFERENCE_CONFIGS / "test_config.yaml", "--model", "reference/solver", "--db", db,
            "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "5/5 answered" in r.stdout and "accuracy 1.000" in r.stdout and "note: LOAD_GENERATED_DATA" in r.stderr
    from core import store

    runs = store.list_runs(db)
    assert runs.loc[0, "name"] == "TEST"   # the reference's STUDY_NAME labels the run
