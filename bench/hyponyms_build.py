"""Benchmark: build the WordNet 3.0 hyponym groups for real and check the output is reproducible.

    python bench/hyponyms_build.py [--wordnet-dir /usr/share/wordnet]

Runs the build in this process with stage timings (wall clock and CPU seconds — the CPU figure is what to compare
on a shared machine), then once more through the CLI in a subprocess with a different PYTHONHASHSEED, and checks
that both outputs and the shipped data/hyponyms/groups.json.gz are byte-identical. The SetLexSem reference code
needs ~100 s for this and its output changes with PYTHONHASHSEED.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.lexicon import wordnet_build as wb  # noqa: E402
from core.lexicon.hyponyms import DEFAULT_PATH, serialize_groups  # noqa: E402


class Stage:
    def __init__(self, name: str, rows: list):
        self.name, self.rows = name, rows

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc):
        self.rows.append((self.name, time.perf_counter() - self.wall, time.process_time() - self.cpu))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet-dir", default="/usr/share/wordnet")
    args = ap.parse_args()

    rows: list = []
    with Stage("open NLTK WordNet reader", rows):
        reader, close = wb.open_nltk_wordnet(args.wordnet_dir, tuple(wb.POS_FILES.values()))
    try:
        with Stage("read the synset graph (all parts of speech)", rows):
            graph = wb.graph_of(reader, "all")
        with Stage("clean lemmas + closures + filter", rows):
            groups, counts = wb.build(graph)
        source = wb.nltk_source_info(reader, args.wordnet_dir)
    finally:
        close()
    meta = {"source": source, "rules": wb.rules("all", wb.DEFAULT_MIN_SIZE, wb.DEFAULT_MAX_SIZE,
                                                 wb.DEFAULT_MIN_EDIT_DISTANCE), "counts": counts}
    with Stage("serialise (deterministic gzip JSON)", rows):
        data = serialize_groups(groups, meta)

    print(f"{'stage':44s} {'wall s':>8s} {'cpu s':>8s}")
    for name, wall, cpu in rows:
        print(f"{name:44s} {wall:8.2f} {cpu:8.2f}")
    print(f"{'TOTAL (in process)':44s} {sum(r[1] for r in rows):8.2f} {sum(r[2] for r in rows):8.2f}")
    print(f"groups: {counts['groups']}  vocabulary: {counts['vocabulary']}  members: {counts['members_total']}  "
          f">=8: {counts['groups_by_min_size']['8']}  >=16: {counts['groups_by_min_size']['16']}  "
          f"by part of speech {counts['groups_by_pos']}  "
          f"(synsets {counts['synsets']}, with hyponyms {counts['hypernyms_with_hyponyms']}, "
          f"too generic {counts['dropped_too_generic']}, too small {counts['dropped_too_small']}, "
          f"duplicate member sets {counts['dropped_duplicate_member_sets']})")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "groups.json.gz")
        env = dict(os.environ, PYTHONHASHSEED="9876")
        started = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "core", "build-hyponyms", "--wordnet-dir", args.wordnet_dir,
                            "--out", out], cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return 1
        other = Path(out).read_bytes()
    print(f"CLI run in a subprocess (PYTHONHASHSEED=9876, process start included): {wall:.2f} s wall")
    same = other == data
    shipped = DEFAULT_PATH.exists() and DEFAULT_PATH.read_bytes() == data
    print(f"byte-identical across runs/hash seeds: {same}; identical to shipped {DEFAULT_PATH.relative_to(ROOT)}: "
          f"{shipped}; size {len(data):,} bytes")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
