"""export-batch → a results file in vLLM's run-batch format (and OpenAI's output/error files) → import-batch, through
the CLI: custom_ids map back to their items, sampling parameters (top_k included) are in every body, what is
answered is not exported again, a file for another config or model changes nothing."""

import json

import pytest

from core import store
from core.config import run_spec

CFG_YAML = "task: setops\nsamples: 6\nsizes: [2, 4]\nmembers: [numbers, words]\nseed: 4\n"   # 96 items
MODEL = "openai-compatible/meta-llama/Llama-3.1-8B-Instruct"


def _solutions():
    import yaml

    spec = run_spec(yaml.safe_load(CFG_YAML))
    return {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}


def vllm_results(requests, answer, fail=()):
    """What ``vllm run-batch`` writes for these request lines (its BatchRequestOutput lines)."""
    lines = []
    for n, req in enumerate(requests):
        if req["custom_id"] in fail:
            lines.append({"id": f"vllm-{n}", "custom_id": req["custom_id"], "error": "request failed",
                          "response": {"status_code": 400, "request_id": f"vllm-batch-{n}", "body": None}})
            continue
        text = answer(req["body"]["messages"][0]["content"])
        lines.append({"id": f"vllm-{n}", "custom_id": req["custom_id"], "error": None, "response": {
            "status_code": 200, "request_id": f"vllm-batch-{n}", "body": {
                "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": req["body"]["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                             "finish_reason": "stop", "stop_reason": None}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}}}})
    return "".join(json.dumps(x) + "\n" for x in lines)


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_export_vllm_results_import_round_trip(tmp_path, cli):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    db, req, res = tmp_path / "r.duckdb", tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    common = ("--config", cfg, "--model", MODEL, "--db", db, "--top-k", "7", "--max-tokens", "64")
    out = cli("export-batch", *common, "--out", req)
    assert out.returncode == 0, out.stderr
    requests = read_jsonl(req)
    assert len(requests) == 96 and len({r["custom_id"] for r in requests}) == 96
    body = requests[0]["body"]
    assert requests[0]["url"] == "/v1/chat/completions" and requests[0]["method"] == "POST"
    assert body["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert (body["top_k"], body["max_tokens"], body["temperature"], body["top_p"]) == (7, 64, 0.25, 0.25)

    solutions = _solutions()
    failed = {requests[5]["custom_id"], requests[17]["custom_id"]}
    res.write_text(vllm_results(requests, solutions.__getitem__, fail=failed))
    out = cli("import-batch", res, *common)
    assert out.returncode == 0, out.stderr
    assert "94 item(s) answered, 2 failed" in out.stdout
    with store.connect(db) as con:
        run = con.execute("SELECT run_id, status, n_items, n_done, n_failed, source FROM runs").fetchall()
        correct = con.execute("SELECT count(*) FILTER (WHERE correct), count(*) FROM results "
                              "WHERE error IS NULL").fetchall()[0]
        params = json.loads(con.execute("SELECT params_json FROM calls LIMIT 1").fetchall()[0][0])
    assert len(run) == 1 and run[0][1:5] == ("incomplete", 96, 94, 2) and run[0][5].startswith("import-batch")
    assert correct == (94, 94)                      # every answer scored against its own item
    assert params["top_k"] == 7

    # only the two failed prompts are exported again; their results complete the run; a second import is a no-op
    again = tmp_path / "again.jsonl"
    assert cli("export-batch", *common, "--out", again).returncode == 0
    rest = read_jsonl(again)
    assert {r["custom_id"] for r in rest} == failed
    (tmp_path / "rest.jsonl").write_text(vllm_results(rest, solutions.__getitem__))
    assert cli("import-batch", tmp_path / "rest.jsonl", *common).returncode == 0
    assert cli("import-batch", tmp_path / "rest.jsonl", *common).returncode == 0
    with store.connect(db) as con:
        assert con.execute("SELECT status, n_done, n_failed FROM runs").fetchall() == [("done", 96, 0)]
        assert con.execute("SELECT count(*) FROM calls").fetchall()[0][0] == 96


def test_import_refuses_a_file_for_another_model_or_a_broken_file(tmp_path, cli):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    db, req = tmp_path / "r.duckdb", tmp_path / "requests.jsonl"
    assert cli("export-batch", "--config", cfg, "--model", MODEL, "--db", db, "--out", req).returncode == 0
    requests = read_jsonl(req)
    res = tmp_path / "results.jsonl"
    res.write_text(vllm_results(requests, lambda p: "<answer>{1}</answer>"))
    other = cli("import-batch", res, "--config", cfg, "--model", "openai-compatible/other-model", "--db", db)
    assert other.returncode == 2 and other.stderr.startswith("error:") and "matches an item" in other.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text(res.read_text().splitlines()[0] + "\n{not json\n")
    bad = cli("import-batch", broken, "--config", cfg, "--model", MODEL, "--db", db)
    assert bad.returncode == 2 and "line 2 is not JSON" in bad.stderr
    anth = cli("export-batch", "--config", cfg, "--model", "anthropic/claude-haiku-4-5", "--db", db, "--out", req)
    assert anth.returncode == 2 and "run --batch" in anth.stderr
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0   # nothing was written


def test_openai_output_and_error_files_import(tmp_path, cli):
    """An ``openai/`` export follows OpenAI's rules (no top_k, max_completion_tokens); OpenAI's output and error
    files (expired requests in the error file) import at the batch price."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    db, req = tmp_path / "o.duckdb", tmp_path / "requests.jsonl"
    common = ("--config", cfg, "--model", "openai/gpt-4o-mini", "--db", db)
    assert cli("export-batch", *common, "--out", req).returncode == 0
    requests = read_jsonl(req)
    assert "top_k" not in requests[0]["body"] and requests[0]["body"]["max_completion_tokens"] == 512
    out_lines = vllm_results(requests[1:], lambda p: "<answer>{}</answer>")
    err_line = json.dumps({"id": "batch_req_0", "custom_id": requests[0]["custom_id"], "response": None,
                           "error": {"code": "batch_expired", "message": "not run before the window expired"}})
    (tmp_path / "out.jsonl").write_text(out_lines)
    (tmp_path / "err.jsonl").write_text(err_line + "\n")
    done = cli("import-batch", tmp_path / "out.jsonl", tmp_path / "err.jsonl", *common)
    assert done.returncode == 0, done.stderr
    with store.connect(db) as con:
        costs = con.execute("SELECT min(cost_usd), max(cost_usd) FROM calls").fetchall()[0]
        failed = con.execute("SELECT error FROM results WHERE error IS NOT NULL").fetchall()
    assert costs[0] > 0 and costs[0] == costs[1]
    assert costs[0] == pytest.approx((50 * 0.15 + 9 * 0.60) / 1e6 / 2)   # gpt-4o-mini list price, halved
    assert len(failed) == 1 and "expired" in failed[0][0]


def test_export_in_shards_then_import_each(tmp_path, cli):
    """`export-batch --shards 4`: four files of near-equal size that together hold every request once (the same
    files the Ray engine sends, one per actor); each shard's results imported on its own completes the run."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    db, req = tmp_path / "r.duckdb", tmp_path / "requests.jsonl"
    common = ("--config", cfg, "--model", MODEL, "--db", db)
    out = cli("export-batch", *common, "--out", req, "--shards", "4")
    assert out.returncode == 0, out.stderr
    files = sorted(tmp_path.glob("requests-*-of-00004.jsonl"))
    assert [f.name for f in files] == [f"requests-{i:05d}-of-00004.jsonl" for i in range(1, 5)]
    shards = [read_jsonl(f) for f in files]
    assert [len(s) for s in shards] == [24, 24, 24, 24]
    ids = [r["custom_id"] for s in shards for r in s]
    assert len(ids) == len(set(ids)) == 96
    solutions = _solutions()
    for i, s in enumerate(shards):
        res = tmp_path / f"results-{i}.jsonl"
        res.write_text(vllm_results(s, solutions.__getitem__))
        assert cli("import-batch", res, *common).returncode == 0
    with store.connect(db) as con:
        assert con.execute("SELECT n_items, n_done FROM runs").fetchone() == (96, 96)
    again = cli("export-batch", *common, "--out", req, "--shards", "4")
    assert again.returncode == 0 and "wrote 0 request(s)" in again.stdout
    assert cli("export-batch", *common, "--out", req, "--shards", "0").returncode != 0


def test_prompts_the_cache_answers_are_scored_into_the_run(tmp_path, cli):
    """export-batch leaves out the prompts the cache answers (here: those of a limited run first); import-batch scores
    them into the run from the cache, so the full run ends done (it stayed incomplete for good, with nothing left to
    export). The run's stop sequence is in every request body."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    db = tmp_path / "r.duckdb"
    common = ("--config", cfg, "--model", MODEL, "--db", db)
    solutions = _solutions()
    small, small_res = tmp_path / "small.jsonl", tmp_path / "small-res.jsonl"
    assert cli("export-batch", *common, "--limit", "8", "--out", small).returncode == 0
    small_res.write_text(vllm_results(read_jsonl(small), solutions.__getitem__))
    assert cli("import-batch", small_res, *common, "--limit", "8").returncode == 0
    full, full_res = tmp_path / "full.jsonl", tmp_path / "full-res.jsonl"
    assert cli("export-batch", *common, "--out", full).returncode == 0
    rest = read_jsonl(full)
    assert len(rest) == 96 - 8 and rest[0]["body"]["stop"] == ["</answer>"]
    full_res.write_text(vllm_results(rest, solutions.__getitem__))
    out = cli("import-batch", full_res, *common)
    assert out.returncode == 0, out.stderr
    assert "88 item(s) answered" in out.stdout and "8 item(s) answered from the cache" in out.stdout
    with store.connect(db) as con:
        runs = con.execute("SELECT status, n_done, n_cached FROM runs WHERE n_items = 96").fetchall()
        correct = con.execute("SELECT count(*) FILTER (WHERE r.correct) FROM results r JOIN runs USING (run_id) "
                              "WHERE runs.n_items = 96").fetchall()[0][0]
    assert runs == [("done", 96, 8)] and correct == 96
    again = cli("import-batch", full_res, *common)                 # a second import changes nothing
    assert again.returncode == 0 and "from the cache" not in again.stdout


def test_a_constrained_answer_format_is_not_exported_as_free_requests(tmp_path):
    from core.errors import UserError
    from core.runner.batch_files import export_batch

    cfg = run_spec({"task": "setops", "samples": 1, "sizes": [2], "members": ["numbers"]}).config_dict()
    with pytest.raises(UserError, match="free-form"):
        export_batch(cfg, MODEL, tmp_path / "r.jsonl", params={"answer_format": "constrained"},
                     db_path=tmp_path / "s.duckdb")
    assert not (tmp_path / "r.jsonl").exists()
