"""Speed of the embedded model (local/smollm2: SmolLM2-135M-Instruct Q4_1, llama-cpp-python, in-process).

    python bench/local_model_speed.py [--calls 8] [--max-tokens 128] [--threads N]

Prints load time, then per call: prompt tokens, output tokens, latency; then totals:
  output tokens/s  = sum(output tokens) / sum(latency)      (end-to-end, includes prompt processing)
  decode tokens/s  = output tokens / (latency - prompt time) (prompt time = same prompt with max_tokens=1)
  prompt tokens/s  = prompt tokens / prompt time
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROMPTS = [
    "Set A: [4, 9, 12, 30]\nSet B: [9, 30, 51]\nWhat is the intersection of A and B? Answer with a JSON list only.",
    "Set A: [\"apple\", \"pear\", \"plum\"]\nSet B: [\"fig\", \"pear\"]\nWhat is A union B? Answer with a JSON list.",
    "Set A: [100, 200, 300]\nSet B: [200]\nWhat is the difference A minus B? Answer with a JSON list only.",
    "Set A: [\"cat\", \"dog\"]\nSet B: [\"dog\", \"owl\", \"eel\"]\nWhat is the symmetric difference of A and B?",
    "Is the following statement true or false? 'Most of the 9 apples are red' when 7 apples are red.",
    "List the members of the union of {1, 2, 3} and {3, 4, 5} as a JSON list.",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: half the cores, at least 1)")
    args = ap.parse_args()
    if args.threads:
        os.environ["STUDIO_LLAMA_THREADS"] = str(args.threads)

    from core.models import Request, SamplingParams, get_model
    from core.models.providers.local_llama import get_llama, n_threads

    t0 = time.perf_counter()
    llama = get_llama()
    print(f"model load: {time.perf_counter() - t0:.2f} s   threads={n_threads()}   cores={os.cpu_count()}   "
          f"load average before: {os.getloadavg()[0]:.1f}")
    model = get_model("local/smollm2")

    tot_in = tot_out = 0
    tot_lat = tot_prompt = 0.0
    for i in range(args.calls):
        prompt = PROMPTS[i % len(PROMPTS)] + f"\n(Question {i + 1}.)"
        # prompt-processing time alone (one output token); reset() empties llama.cpp's prefix cache each time
        llama.reset()
        first = model.complete_sync(Request(prompt=prompt, params=SamplingParams(max_tokens=1, seed=i)))
        llama.reset()
        full = model.complete_sync(Request(prompt=prompt, params=SamplingParams(max_tokens=args.max_tokens, seed=i)))
        tot_in += full.tokens_in
        tot_out += full.tokens_out
        tot_lat += full.latency_ms / 1000
        tot_prompt += first.latency_ms / 1000
        print(f"call {i + 1:2d}: prompt {full.tokens_in:4d} tok, output {full.tokens_out:4d} tok, "
              f"{full.latency_ms:7.0f} ms, {full.tokens_out / (full.latency_ms / 1000):6.1f} out-tok/s, "
              f"finish={full.finish_reason}")

    decode_time = max(1e-9, tot_lat - tot_prompt)
    print(f"\ncalls={args.calls} prompt_tokens={tot_in} output_tokens={tot_out} total_latency={tot_lat:.2f} s")
    print(f"output tokens/s (end to end): {tot_out / tot_lat:.1f}")
    print(f"decode tokens/s:              {tot_out / decode_time:.1f}")
    print(f"prompt tokens/s:              {tot_in / max(1e-9, tot_prompt):.1f}")
    print(f"load average after: {os.getloadavg()[0]:.1f} (figures shrink when other processes share the cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
