"""`run --engine ray --model vllm/…` (issue 21): Ray Data's vLLM processor between our preprocess and postprocess.

On CPU: the request lines export-batch writes → engine rows → rows shaped as the vLLM stage of Ray 2.60 leaves them
(``sampling_params`` popped, ``vLLMOutputData`` columns added) → output lines → ``import-batch`` stores the right
verdicts and marks a truncated reply ``length``; the processor config built from our options; the whole pipeline on a
local Ray with Ray's own ``Processor`` and a stand-in engine stage; bad combinations of flags as one line. On a GPU
(``-m gpu``, skipped elsewhere): a tiny model end to end.
"""

from __future__ import annotations

import json

import pytest

from core import store
from core.config import run_spec
from core.errors import UserError

ray = pytest.importorskip("ray")

CONFIG = {"task": "setops", "seed": 2, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
          "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}   # 12 items
MODEL = "vllm/Qwen/Qwen2.5-0.5B-Instruct"


def _solutions(config=CONFIG) -> dict:
    spec = run_spec(config)
    return {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}


def vllm_engine_output(row: dict, text: str, n_out: int, n_in: int = 40) -> dict:
    """The row the vLLM stage of Ray 2.60 hands on for ``row`` (vllm_engine_stage.py): the prompt and sampling
    params popped off it, the ``vLLMOutputData`` fields and the stage's own columns added."""
    from ray.llm._internal.batch.stages.vllm_engine_stage import vLLMOutputData

    out = {k: v for k, v in row.items() if k not in ("prompt", "tokenized_prompt", "sampling_params")}
    data = vLLMOutputData(prompt=row["messages"][-1]["content"], prompt_token_ids=list(range(n_in)),
                          num_input_tokens=n_in, generated_tokens=list(range(n_out)), generated_text=text,
                          num_generated_tokens=n_out)
    return {**out, **data.model_dump(), "request_id": 0, "batch_uuid": "0" * 32, "time_taken_llm": 0.01,
            "params": "SamplingParams(...)", "__inference_error__": ""}


def test_round_trip_through_import_batch_with_verdicts_and_length(tmp_path, cli):
    """export-batch → engine rows → engine output rows → output lines → import-batch: every answer stored with its
    verdict; the reply cut at the cap is stored with finish reason ``length`` (and is wrong, as cut)."""
    from core.runner.ray_workers import LINE, REQUEST, as_line, vllm_postprocess, vllm_preprocess

    cfg, db, req = tmp_path / "c.yaml", tmp_path / "s.duckdb", tmp_path / "requests.jsonl"
    cfg.write_text(json.dumps(CONFIG))
    common = ("--config", cfg, "--model", MODEL, "--db", db, "--max-tokens", "24")
    assert cli("export-batch", *common, "--out", req).returncode == 0
    lines = [ln for ln in req.read_text().splitlines() if ln.strip()]
    assert len(lines) == 12
    solutions = _solutions()
    out_lines, cut_id = [], None
    for n, line in enumerate(lines):
        row = vllm_preprocess({REQUEST: line})
        assert row["sampling_params"]["max_tokens"] == row["reply_cap"] == 24
        assert row["sampling_params"]["stop"] == ["</answer>"]
        text = solutions[row["messages"][-1]["content"]]
        if n == 0:      # the engine stopped at the cap: 24 tokens of a reply cut short
            cut_id, engine = row["custom_id"], vllm_engine_output(row, text[: len(text) // 2], 24)
        else:
            engine = vllm_engine_output(row, text, 9)
        out_lines.append(as_line(vllm_postprocess(engine))[LINE])
    res = tmp_path / "results.jsonl"
    res.write_text("".join(f"{ln}\n" for ln in out_lines))
    out = cli("import-batch", res, *common)
    assert out.returncode == 0, out.stderr
    assert "12 item(s) answered, 0 failed" in out.stdout
    with store.connect(db) as con:
        run = con.execute("SELECT status, n_items, n_done, model FROM runs").fetchall()
        calls = dict(con.execute("SELECT cache_key, finish_reason FROM calls").fetchall())
        verdicts = dict(con.execute("SELECT cache_key, correct FROM results").fetchall())
    assert run == [("done", 12, 12, MODEL)]
    assert calls.pop(cut_id) == "length" and set(calls.values()) == {"stop"}
    assert verdicts.pop(cut_id) is False and all(verdicts.values())


def test_processor_config_from_our_options_builds_on_cpu():
    from ray.data import llm

    from core.runner.ray_engine import vllm_config_kwargs

    for name in ("build_processor", "vLLMEngineProcessorConfig"):      # the names we use (catches the next rename)
        assert hasattr(llm, name), name
    kwargs = vllm_config_kwargs("Qwen/Qwen2.5-0.5B-Instruct", replicas=3, tp=2, batch_size=32, max_model_len=4096,
                                accelerator_type="A100")
    assert kwargs == {"model_source": "Qwen/Qwen2.5-0.5B-Instruct",
                      "engine_kwargs": {"tensor_parallel_size": 2, "max_model_len": 4096}, "concurrency": 3,
                      "batch_size": 32, "should_continue_on_error": True, "detokenize_stage": False,
                      "accelerator_type": "A100"}
    config = llm.vLLMEngineProcessorConfig(**kwargs)
    assert config.engine_kwargs["tensor_parallel_size"] == 2 and config.engine_kwargs["max_model_len"] == 4096
    assert config.get_concurrency() == {"min_size": 1, "max_size": 3} and config.batch_size == 32
    assert config.should_continue_on_error and config.accelerator_type == "A100"
    for bad in ({"tp": 0}, {"replicas": -1}, {"batch_size": 2.5}, {"max_model_len": "long"}):
        with pytest.raises(UserError, match="must be a whole number"):
            vllm_config_kwargs("m", **bad)


# ---------------------------------------------------------------------------------------------- on a local Ray


class _StandInEngine:
    """Built lazily (Ray's stage classes are pydantic models): a stage that does to a row what Ray 2.60's vLLM stage
    does — pops prompt and sampling_params, answers from ``answers`` (prompt → reply) within ``max_tokens`` tokens
    (one word = one token), adds the vLLMOutputData columns, and fails the rows whose prompt is in ``fail`` the way
    ``should_continue_on_error`` reports them."""

    @staticmethod
    def builder(answers: dict, fail: set):
        from ray.llm._internal.batch.processor import Processor
        from ray.llm._internal.batch.stages.base import StatefulStage, StatefulStageUDF

        class EngineUDF(StatefulStageUDF):
            def __init__(self, data_column, expected_input_keys=None, answers=None, fail=()):
                super().__init__(data_column, expected_input_keys)
                self.answers, self.fail = answers or {}, set(fail)

            async def udf(self, rows):
                from ray.llm._internal.batch.stages.vllm_engine_stage import vLLMOutputData

                for row in rows:
                    idx = row[self.IDX_IN_BATCH_COLUMN]
                    prompt = row["messages"][-1]["content"]
                    row.pop("prompt", None)
                    sampling = row.pop("sampling_params")
                    extra = {self.IDX_IN_BATCH_COLUMN: idx, "batch_uuid": "0" * 32, "params": str(sampling)}
                    if prompt in self.fail:
                        data = vLLMOutputData(prompt=prompt, num_input_tokens=0)
                        yield {**data.model_dump(), **extra, "request_id": -1, "time_taken_llm": -1,
                               "__inference_error__": "ValueError: the prompt is longer than max_model_len"}
                        continue
                    words = self.answers[prompt].split(" ")[: int(sampling["max_tokens"])]
                    data = vLLMOutputData(prompt=prompt, prompt_token_ids=[1] * 30, num_input_tokens=30,
                                          generated_tokens=list(range(len(words))), generated_text=" ".join(words),
                                          num_generated_tokens=len(words))
                    yield {**data.model_dump(), **extra, "request_id": idx, "time_taken_llm": 0.0,
                           "__inference_error__": ""}

        class EngineStage(StatefulStage):
            fn: type = EngineUDF

        def build(config, preprocess=None, postprocess=None):
            stage = EngineStage(fn_constructor_kwargs={"answers": answers, "fail": sorted(fail)},
                                map_batches_kwargs={"concurrency": 1})
            return Processor(config, [stage], preprocess=preprocess, postprocess=postprocess)

        return build


@pytest.mark.slow
def test_the_vllm_pipeline_on_a_local_ray_with_a_stand_in_engine(local_ray, tmp_path):
    """run_vllm with Ray's own Processor (preprocess, stage plumbing, postprocess, error rows handed past it) and a
    stand-in for the engine: answers stored with their verdicts, the one cut at the cap marked length, the one the
    engine failed on recorded as failed; the same call again sends only that one."""
    from core.runner.ray_engine import run_vllm

    solutions = _solutions()
    prompts = sorted(solutions)
    # replies of the form '<answer>{a, b}</answer>': a cap of 2 words cuts those with more than two members
    long_prompt = next(p for p in prompts if len(solutions[p].split(" ")) > 2)
    failing = prompts[0] if prompts[0] != long_prompt else prompts[1]
    db = tmp_path / "s.duckdb"
    params = {"max_tokens": 2, "answer_cap": False}
    build = _StandInEngine.builder(solutions, {failing})
    c = run_vllm(CONFIG, MODEL, params=params, db_path=db, replicas=1, batch_size=4, block_size=4, builder=build)
    assert c["requests"] == 12 and c["blocks"] == 3 and (c["answered"], c["failed"]) == (11, 1)
    with store.connect(db) as con:
        run = con.execute("SELECT status, n_items, n_done, n_failed FROM runs").fetchall()
        err = con.execute("SELECT error FROM results WHERE error IS NOT NULL").fetchall()
        rows = con.execute("SELECT i.prompt, c.finish_reason, r.correct FROM results r JOIN items i USING (run_id, "
                           "idx) JOIN calls c USING (cache_key)").fetchall()
    assert run == [("incomplete", 12, 11, 1)]
    assert len(err) == 1 and "vLLM engine: ValueError" in err[0][0] and "max_model_len" in err[0][0]
    by_prompt = {p: (f, ok) for p, f, ok in rows}
    for p, (finish, correct) in by_prompt.items():
        words = len(solutions[p].split(" "))
        assert finish == ("length" if words >= 2 else "stop"), p     # the cap reached: length, never assumed stop
        assert correct is (words <= 2), p
    assert by_prompt[long_prompt] == ("length", False)
    again = run_vllm(CONFIG, MODEL, params=params, db_path=db, builder=_StandInEngine.builder(solutions, set()))
    assert again["requests"] == 1 and again["answered"] == 1
    with store.connect(db) as con:
        assert con.execute("SELECT status, n_done, n_failed FROM runs").fetchall() == [("done", 12, 0)]


@pytest.mark.slow
def test_a_vllm_run_on_a_ray_without_gpus_is_one_line(local_ray, tmp_path, cli):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    r = cli("run", "--config", cfg, "--model", MODEL, "--engine", "ray", "--db", tmp_path / "s.duckdb",
            "--no-progress")
    assert r.returncode != 0 and r.stderr.startswith("error:") and "GPU" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------------- CLI combinations


@pytest.mark.parametrize("extra, says", [
    ((), "--engine ray"),                                                              # vllm/ on the live runner
    (("--engine", "ray", "--base-url", "http://127.0.0.1:9/v1"), "--base-url does not apply"),
    (("--engine", "ray", "--ray-address", "not an address"), "Ray address"),
    (("--engine", "ray", "--ray-address", "ray://head:10001"), "Ray Client"),
    (("--engine", "ray", "--vllm-tp", "0"), "--vllm-tp must be"),
    (("--engine", "ray", "--fresh"), "--fresh"),
    (("--ray-address", "auto"), "--engine ray"),
])
def test_bad_combinations_are_one_line(tmp_path, cli, extra, says):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    db = tmp_path / "s.duckdb"
    r = cli("run", "--config", cfg, "--model", MODEL, "--db", db, *extra)
    assert r.returncode != 0 and r.stderr.startswith("error:") and says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not db.exists() or store.list_runs(db).empty


def test_vllm_flags_need_a_vllm_model(tmp_path, cli):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    r = cli("run", "--config", cfg, "--model", "openai-compatible/m", "--base-url", "http://127.0.0.1:9/v1",
            "--engine", "ray", "--vllm-replicas", "2", "--db", tmp_path / "s.duckdb")
    assert r.returncode != 0 and "--vllm-replicas go with" in r.stderr


def test_ray_addresses():
    from core.runner.ray_engine import check_ray_address

    ok = {"": None, "  ": None, "local": "local", "AUTO": "auto", "10.0.0.5:6379": "10.0.0.5:6379",
          "[::1]:6379": "[::1]:6379", " head-node.cluster.local:6379 ": "head-node.cluster.local:6379"}
    for text, want in ok.items():
        assert check_ray_address(text) == want, text
    assert check_ray_address(None) is None
    for bad in ("garbage", "head", "http://head:8265", "head:0", "head:65536", ":6379", "a b:1", 6379,
                "head:6379/path"):
        with pytest.raises(UserError, match="local, auto or host:6379"):
            check_ray_address(bad)
    # Ray Data 2.60 cannot run through Ray Client (its executor needs a driver's core worker): the way round instead
    with pytest.raises(UserError, match=r"Ray Client .* head:6379 .* auto"):
        check_ray_address("ray://head:10001")


# ---------------------------------------------------------------------------------------------- on a GPU


def _gpu_ready() -> bool:
    """vllm installed and a CUDA GPU visible. Asked while the tests are collected, so where vllm is not installed
    torch (seconds of import, in every test process) is not imported for this question."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return False
    try:
        import torch
        import vllm  # noqa: F401
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_ready(), reason="needs a CUDA GPU with vllm installed")
def test_a_tiny_model_end_to_end_on_the_gpu(tmp_path, cli):
    """The real vLLM engine (STUDIO_VLLM_TEST_MODEL, default Qwen/Qwen2.5-0.5B-Instruct) through the CLI: every item
    answered and stored once with a finish reason from the counts; the same command again sends nothing."""
    import os

    model = "vllm/" + os.environ.get("STUDIO_VLLM_TEST_MODEL", "Qwen/Qwen2.5-0.5B-Instruct")
    cfg, db = tmp_path / "c.yaml", tmp_path / "s.duckdb"
    cfg.write_text(json.dumps(CONFIG))
    args = ("run", "--config", cfg, "--model", model, "--engine", "ray", "--db", db, "--no-progress",
            "--vllm-max-model-len", "4096", "--ray-block-size", "4")
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    with store.connect(db) as con:
        assert con.execute("SELECT n_items, n_done FROM runs").fetchall() == [(12, 12)]
        finish = {f for (f,) in con.execute("SELECT finish_reason FROM calls").fetchall()}
    assert finish <= {"stop", "length"} and finish
    again = cli(*args)
    assert again.returncode == 0 and " 0 request(s)" in again.stdout
