"""Pipeline, report, cache (real DuckDB file) and the OpenAI encoder (official SDK over an httpx replay)."""

import csv
import json
import re

import numpy as np
import pytest

from core.embeddings.encoders import Encoder, EncoderError, get_encoder
from core.embeddings.pipeline import score
from core.embeddings.report import write_report, write_samples_csv
from core.embeddings.samples import build_samples, load_demo


class BagOfWords(Encoder):
    """A transparent encoder for tests: word counts over a fixed vocabulary (+1 bias dim)."""
    name, label, cache_id = "bow", "bag of words", "test/bow"

    def __init__(self, texts):
        self.vocab = {w: i for i, w in enumerate(sorted({w for t in texts for w in self.words(t)}))}
        self.calls = 0

    @staticmethod
    def words(t):
        return re.findall(r"[a-z0-9]+", t.lower())

    def encode(self, texts, progress=None):
        self.calls += 1
        out = np.zeros((len(texts), len(self.vocab) + 1), np.float32)
        for i, t in enumerate(texts):
            out[i, -1] = 1.0
            for w in self.words(t):
                out[i, self.vocab[w]] += 1
        if progress:
            progress(len(texts), len(texts))
        return out


@pytest.fixture(scope="module")
def demo():
    tuples = load_demo()
    return tuples, build_samples(tuples)


def test_score_report_and_rows(demo, tmp_path):
    tuples, samples = demo
    enc = BagOfWords([t for s in samples for t in (s.a, s.b, s.target)])
    res = score(samples, enc, tuples=tuples, source="demo", use_cache=False, grid_size=20)
    r = res.report
    for key in ("C1_both_cosine_eps0", "C3_both_cosine_eps0", "C4_cosine_eps0", "C1_both_ned_grid",
                "C2_between_tol0.05", "C5_near_a_theta0.25", "C6_met_theta0.25"):
        assert 0.0 <= r[key] <= 100.0, key
    for m in ("cosine", "dot", "l1", "l2", "ned"):
        for c in ("C1", "C3"):
            total = sum(r[f"{c}_{q}_{m}_eps0"] for q in ("TT", "TF", "FT", "FF"))
            assert total == pytest.approx(100.0)
    assert r["data"]["counts"] == {"overlap": 71, "difference": 426, "union": 142}
    # bag of words: a fusion shares words with both of its sources, so the overlap target is closer to each
    # input than they are to each other far more often than chance
    assert r["C1_both_cosine_eps0"] > 25
    assert len(res.rows) == len(samples) == 639
    row = res.rows[0]
    assert {"operator", "a", "b", "target", "cos_ab", "cos_at", "cos_bt"} <= set(row)
    v = res.vectors
    s = samples[0]
    def cos(x, y):
        return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))
    assert row["cos_ab"] == pytest.approx(cos(v[s.a], v[s.b]), abs=1e-6)
    assert row["cos_bt"] == pytest.approx(cos(v[s.b], v[s.target]), abs=1e-6)
    write_report(r, tmp_path / "out" / "REPORT.json")
    write_samples_csv(res.rows, tmp_path / "out" / "SAMPLES.csv")
    back = json.loads((tmp_path / "out" / "REPORT.json").read_text())
    assert back["C1_both_cosine_eps0"] == r["C1_both_cosine_eps0"]
    with open(tmp_path / "out" / "SAMPLES.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 639 and rows[0]["operator"] == "overlap"


def test_difference_filter_drops_similar_pairs(demo):
    tuples, samples = demo
    enc = BagOfWords([t for s in samples for t in (s.a, s.b, s.target)])
    full = score(samples, enc, tuples=tuples, use_cache=False, grid_size=5)
    kept = score(samples, enc, tuples=tuples, use_cache=False, grid_size=5, diff_max_cos=0.25)
    f = kept.report["difference_filter"]
    assert f["dropped"] > 0
    assert kept.report["data"]["counts"]["difference"] == 426 - f["dropped"]
    assert kept.report["data"]["counts"]["overlap"] == full.report["data"]["counts"]["overlap"]


def test_cache_round_trip_real_duckdb(demo, tmp_path):
    from core.embeddings import cache

    db = tmp_path / "studio.duckdb"
    texts = [s.a for s in demo[1][:30]]
    enc = BagOfWords(texts)
    first, st1 = cache.embed_texts(enc, texts + texts[:5], db_path=db)
    assert st1 == {"texts": len(set(texts)), "cached": 0, "embedded": len(set(texts))}
    second, st2 = cache.embed_texts(enc, texts, db_path=db)
    assert st2["embedded"] == 0 and st2["cached"] == len(set(texts)) and enc.calls == 1
    for t in texts:
        np.testing.assert_array_equal(first[t], second[t])
    assert cache.lookup("other/encoder", texts, db) == {}
    assert cache.clear("test/bow", db) == len(set(texts))


# ---------------------------------------------------------------- OpenAI over a replayed transport
def _openai_transport(seen, status=200):
    import httpx

    def handler(request):
        body = json.loads(request.content)
        seen.append((request.url.path, body, request.headers.get("authorization")))
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "Incorrect API key provided: sk-t***", "type":
                                                          "invalid_request_error", "code": "invalid_api_key"}})
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, float(i)]}
                for i, t in reversed(list(enumerate(body["input"])))]     # out of order on purpose
        return httpx.Response(200, json={"object": "list", "data": data, "model": body["model"],
                                         "usage": {"prompt_tokens": 5, "total_tokens": 5}})
    return httpx.MockTransport(handler)


def test_openai_encoder_replay():
    import httpx

    seen = []
    enc = get_encoder("openai:text-embedding-3-small", api_key="sk-test-123",
                      http_client=httpx.Client(transport=_openai_transport(seen)))
    vecs = enc.encode(["ab", "abcd", "x"])
    np.testing.assert_allclose(vecs, [[2, 1, 0], [4, 1, 1], [1, 1, 2]])
    path, body, auth = seen[0]
    assert path.endswith("/embeddings") and body["model"] == "text-embedding-3-small"
    assert body["input"] == ["ab", "abcd", "x"] and auth == "Bearer sk-test-123"
    assert enc.cache_id == "openai/text-embedding-3-small" and "sk-test" not in repr(enc)


def test_openai_encoder_errors_are_clear_and_keyless(monkeypatch):
    import httpx

    enc = get_encoder("openai", api_key="sk-test-123",
                      http_client=httpx.Client(transport=_openai_transport([], status=401)))
    with pytest.raises(EncoderError) as exc:
        enc.encode(["a"])
    assert "401" in str(exc.value) and "sk-test" not in str(exc.value)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EncoderError, match="OPENAI_API_KEY"):
        get_encoder("openai")
    with pytest.raises(EncoderError, match="unknown encoder"):
        get_encoder("bert")
