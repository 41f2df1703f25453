"""The batch pieces that need no server: the OpenAI batch file format (requests and every kind of output line), the
split into batches within request and byte limits, the batch price, request bodies per provider, and the store
migration that adds the batch tables to a file written by earlier code."""

import pytest

from core import store
from core.errors import ImportFileError
from core.models import get_model
from core.models.batch import DEFAULT_LIMITS, BatchLimits, batch_backend, supports_batch
from core.models.batch.jsonl import line_bytes, outcome_of, parse_lines, request_line
from core.models.params import SamplingParams
from core.models.pricing import batch_factor, estimate_cost
from core.runner.batch import chunks


def _ok(cid, text="<answer>{1}</answer>"):
    return {"id": "x", "custom_id": cid, "error": None, "response": {"status_code": 200, "request_id": "r", "body": {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4}}}}


def test_output_lines_of_every_kind():
    ok = outcome_of(_ok("a"))
    assert (ok.kind, ok.text, ok.tokens_in, ok.tokens_out, ok.finish_reason) == (
        "succeeded", "<answer>{1}</answer>", 12, 4, "stop")
    http = outcome_of({"custom_id": "b", "response": {"status_code": 500, "body": {"error": {"message": "boom"}}}})
    assert http.kind == "errored" and "HTTP 500" in http.error and "boom" in http.error
    vllm = outcome_of({"custom_id": "c", "response": {"status_code": 400, "request_id": "r", "body": None},
                       "error": "bad request"})
    assert vllm.kind == "errored" and "bad request" in vllm.error
    expired = outcome_of({"custom_id": "d", "response": None, "error": {"code": "batch_expired", "message": "late"}})
    cancelled = outcome_of({"custom_id": "e", "response": None, "error": {"code": "batch_cancelled", "message": "x"}})
    assert (expired.kind, cancelled.kind) == ("expired", "cancelled")
    assert outcome_of(_ok("f", text="  ")).kind == "errored"           # an empty completion is no answer
    for bad in ({"response": None}, {"custom_id": "g"}, []):
        with pytest.raises(ValueError):
            outcome_of(bad)


def test_parse_lines_names_the_bad_line():
    good = b'{"custom_id": "a", "response": null, "error": {"code": "batch_expired"}}'
    assert [o.kind for o in parse_lines([good, b"", b"  "], "f")] == ["expired"]
    with pytest.raises(ImportFileError, match="f: line 2 is not JSON"):
        list(parse_lines([good, b"{nope"], "f"))
    with pytest.raises(ImportFileError, match="line 1 is not UTF-8"):
        list(parse_lines([b"\xff\xfe"], "f"))
    with pytest.raises(ImportFileError, match="line 1 is not an OpenAI batch output line"):
        list(parse_lines([b'{"a": 1}'], "f"))


def test_chunks_respect_request_and_byte_limits():
    entries = [(f"k{i}", {"i": i}, 10 + i % 3) for i in range(100)]
    by_count = list(chunks(iter(entries), BatchLimits(30, 10**6)))
    assert [len(c) for c in by_count] == [30, 30, 30, 10]
    by_bytes = list(chunks(iter(entries), BatchLimits(1000, 100)))
    assert all(sum(n for _, _, n in c) <= 100 for c in by_bytes)
    assert [k for c in by_bytes for k, _, _ in c] == [k for k, _, _ in entries]   # order kept, nothing lost
    with pytest.raises(Exception, match="more than the per-batch limit"):
        list(chunks(iter([("big", {}, 500)]), BatchLimits(10, 100)))
    with pytest.raises(Exception, match="whole number >= 1"):
        BatchLimits(0, 100)
    assert DEFAULT_LIMITS["openai"].max_requests == 50_000 and DEFAULT_LIMITS["anthropic"].max_requests == 100_000


def test_batch_price_is_half_for_both_providers():
    for spec in ("openai/gpt-4o-mini", "anthropic/claude-haiku-4-5"):
        assert batch_factor(spec) == 0.5
        assert estimate_cost(spec, 1000, 200, batch=True) == pytest.approx(estimate_cost(spec, 1000, 200) / 2)
    assert estimate_cost("openai-compatible/x", 10, 10, batch=True) is None
    assert estimate_cost("local/smollm2", 10, 10, batch=True) == 0.0
    assert supports_batch("anthropic/x") and not supports_batch("openai-compatible/x")


def test_request_bodies_follow_each_providers_rules(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    params = SamplingParams(temperature=0.25, top_p=0.25, top_k=20, max_tokens=64, seed=3)
    oa = batch_backend(get_model("openai/gpt-4o-mini"))
    body, dropped = oa.request_body(params)
    entry = oa.entry("k" * 64, "prompt", body)
    assert entry == request_line("k" * 64, "gpt-4o-mini", "prompt", body) and oa.entry_bytes(entry) == line_bytes(entry)
    assert body == {"temperature": 0.25, "top_p": 0.25, "max_completion_tokens": 64, "seed": 3}
    assert dropped == ["top_k"]
    an = batch_backend(get_model("anthropic/claude-3-5-haiku-latest"))
    body, dropped = an.request_body(params)
    assert body == {"max_tokens": 64, "temperature": 0.25, "top_p": 0.25, "top_k": 20} and dropped == ["seed"]
    entry = an.entry("k" * 64, "prompt", body)
    assert entry["params"]["model"] == "claude-3-5-haiku-latest" and entry["params"]["top_k"] == 20
    with pytest.raises(Exception, match="openai/ and anthropic/"):
        batch_backend(get_model("reference/solver"))


def test_migration_adds_batch_tables_to_an_older_file(tmp_path):
    from tests.support.old_db import write_v1_database

    db = tmp_path / "old.duckdb"
    write_v1_database(db)           # a file as version-1 code wrote it, with a run in it
    with store.connect(db) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        versions = {r[0] for r in con.execute("SELECT version FROM schema_version").fetchall()}
        runs = con.execute("SELECT run_id, status FROM runs").fetchall()
    assert {"batches", "batch_requests"} <= tables and 3 in versions and runs == [("r1", "done")]
