"""What thinking buys, on the project's reasoning fake: a deceptive-set grid crossed with reasoning efforts, run
through the real CLI against the loopback OpenAI-compatible server (tests/support/loopback.py) playing a model
whose thinking grows with the effort asked and whose deceptive-set failure shrinks as it thinks more; then
``report thinking`` over the run.

    python bench/thinking_buys.py [--samples 12] [--levels low,medium,high,max] [--out DIR] [--anthropic]

``--anthropic``: the same against the Anthropic stand-in (tests/support/anthropic_standin.py) as
``anthropic/claude-opus-4-7``, which the Models API describes as taking adaptive thinking at low … max (the
default levels become low,medium,high,xhigh,max: every one sent as asked).

The simulated model (deterministic: a hash of the prompt and the effort decides each answer): right with
probability 0.9 on items as sampled, and on swapped items 0.35 / 0.55 / 0.75 / 0.85 from low to max; it thinks
400 characters per step of the scale. ``max`` is not an effort OpenAI-compatible servers take: it is sent as
``xhigh`` (the nearest, recorded with each call) — the levels shown are the ones asked. Prints the run's summary
line, the report's tables and the machine's load.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SWAPPED_RIGHT = {"off": 0.2, "minimal": 0.3, "low": 0.35, "medium": 0.55, "high": 0.75, "xhigh": 0.85, "max": 0.85}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--levels", default=None, help="default low,medium,high,max (--anthropic: … xhigh,max)")
    ap.add_argument("--anthropic", action="store_true", help="anthropic/claude-opus-4-7 on the Anthropic stand-in")
    ap.add_argument("--out", default=None, help="folder for the store and the report files (default: a temp one)")
    args = ap.parse_args()

    import yaml

    from core.cli import main as cli
    from core.models.reasoning import SCALE
    from core.tasks import setops
    from core.tasks.setops.scoring import solve
    from tests.support.loopback import LoopbackServer

    levels = [x.strip() for x in (args.levels or ("low,medium,high,xhigh,max" if args.anthropic else
                                                  "low,medium,high,max")).split(",") if x.strip()]
    config = {"task": "setops", "seed": 7, "samples": args.samples, "operations": ["union", "intersection"],
              "sizes": [4], "members": ["deceptive"], "conditions": ["not_swapped", "swapped"],
              "phrasings": ["formal", "plain"], "approaches": ["baseline"], "shots": [0],
              "reasoning": levels}
    items = {it["prompt"]: it for it in setops.items(setops.load_config(config))}

    def model(prompt: str, name: str, effort: str | None):
        it = items[prompt]
        level = effort or "off"
        p = 0.9 if it["condition"] == "not_swapped" else SWAPPED_RIGHT.get(level, 0.5)
        draw = int(hashlib.sha256(f"{prompt}|{level}".encode()).hexdigest()[:8], 16) / 16 ** 8
        answer = solve(it) if draw < p else "<answer>{}</answer>"
        steps = SCALE.index(level) if level in SCALE else 0
        return answer, "Checking each member. " * (20 * steps) + "First guess <answer>{0}</answer>; no."

    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="thinking-buys-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "grid.yaml").write_text(yaml.safe_dump(config))
    db = folder / "thinking.duckdb"
    if args.anthropic:
        from tests.support.anthropic_standin import AnthropicStandIn

        os.environ.setdefault("ANTHROPIC_API_KEY", "no-key-the-stand-in-checks-none")   # the SDK wants one; the stand-in ignores it
        def effort_of(params: dict) -> str | None:
            return (params.get("output_config") or {}).get("effort")

        srv = AnthropicStandIn(answer=lambda prompt, params: model(prompt, "claude", effort_of(params))[0],
                               thinking=lambda prompt, params: model(prompt, "claude", effort_of(params))[1]).start()
        spec = "anthropic/claude-opus-4-7"
    else:
        srv = LoopbackServer(0.001, by_effort=model).start()
        spec = "openai-compatible/thinker"
    try:
        code = cli(["run", "--config", str(folder / "grid.yaml"), "--model", spec, "--base-url", srv.base_url,
                    "--db", str(db), "--no-progress"])
    finally:
        srv.stop()
    if code:
        return code
    code = cli(["report", "thinking", "--run", "latest", "--db", str(db), "--scoring", "lenient",
                "--out", str(folder / "thinking.csv")])
    if args.anthropic:
        efforts = {}
        for b in srv.bodies:
            e = (b.get("output_config") or {}).get("effort")
            efforts[e] = efforts.get(e, 0) + 1
        print(f"efforts received by the stand-in: {efforts}; thinking {sorted({b['thinking']['type'] for b in srv.bodies})}")
    else:
        print(f"efforts received by the fake: {dict(srv.efforts)}")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
