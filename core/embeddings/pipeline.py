"""One call from samples to a report: embed (through the cache), evaluate C1–C6, build REPORT/SAMPLES.

    result = score(samples, "minilm", tuples=tuples, source="demo")
    result.report["C1_both_cosine_eps0"], result.rows[0]["cos_ab"]
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from core.embeddings import criteria
from core.embeddings.cache import embed_texts
from core.embeddings.criteria import Evaluation
from core.embeddings.encoders import Encoder, get_encoder
from core.embeddings.measures import cosine
from core.embeddings.report import build_report, sample_rows
from core.embeddings.samples import Sample, SentenceTuple
from core.errors import UserError


@dataclass
class Scored:
    report: dict
    rows: list[dict]
    evaluation: Evaluation
    samples: list[Sample]
    vectors: dict[str, np.ndarray]


def filter_difference(samples: Sequence[Sample], tuples: Sequence[SentenceTuple], vectors: dict, max_cos: float
                      ) -> tuple[list[Sample], dict]:
    """The paper's filter: keep S1-side difference samples only if cos(S_prev, S_curr) < max_cos, and S2-side ones
    only if cos(S_curr, S_next) < max_cos (so the two fused sentences share little)."""
    by_id = {t.tuple_id: t for t in tuples}
    kept, dropped = [], 0
    for s in samples:
        t = by_id.get(s.tuple_id)
        if s.operator != "difference" or t is None:
            kept.append(s)
            continue
        x, y = (t.s_prev, t.s_curr) if s.variant.startswith("(S1") else (t.s_curr, t.s_next)
        if float(cosine(vectors[x], vectors[y])[0]) < max_cos:
            kept.append(s)
        else:
            dropped += 1
    return kept, {"max_cos": max_cos, "dropped": dropped}


def score(samples: Sequence[Sample], encoder: Encoder | str, *, tuples: Sequence[SentenceTuple] = (),
          source: str = "", db_path=None, use_cache: bool = True, diff_max_cos: float | None = None,
          eps=criteria.DEFAULT_EPS, grid_size: int = criteria.DEFAULT_GRID,
          progress: Callable[[int, int], None] | None = None, api_key: str | None = None) -> Scored:
    samples = list(samples)
    if not samples:
        raise UserError("no samples to score")
    enc = get_encoder(encoder, api_key=api_key) if isinstance(encoder, str) else encoder
    texts = [t for s in samples for t in (s.a, s.b, s.target)]
    if diff_max_cos is not None:
        texts += [x for t in tuples for x in (t.s_prev, t.s_curr, t.s_next)]
    t0 = time.perf_counter()
    vectors, stats = embed_texts(enc, texts, db_path=db_path, use_cache=use_cache, progress=progress)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    extra = {}
    if diff_max_cos is not None:
        samples, extra["difference_filter"] = filter_difference(samples, tuples, vectors, diff_max_cos)
    ea = np.stack([vectors[s.a] for s in samples])
    eb = np.stack([vectors[s.b] for s in samples])
    et = np.stack([vectors[s.target] for s in samples])
    ev = criteria.evaluate([s.operator for s in samples], ea, eb, et, eps=eps, grid_size=grid_size)
    data = {"source": source, "n_tuples": len(tuples) or None}
    report = build_report(ev, samples, encoder_name=enc.name, encoder_label=enc.label,
                          encoder_cache_id=enc.cache_id, dim=ea.shape[1], data=data, embedding=stats, extra=extra)
    return Scored(report, sample_rows(ev, samples), ev, samples, vectors)
