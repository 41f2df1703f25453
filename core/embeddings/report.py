"""REPORT.json and SAMPLES.csv: everything one scoring of one encoder produced.

REPORT.json (flat metric keys at the top level, next to metadata):
  encoder, encoder_label, encoder_cache_id, dim, data{...}, settings{...}, embedding{texts, cached, embedded},
  C1_{TT,TF,FT,FF,both}_{measure}_eps{ε}, C3_…, C4_{measure}_eps{ε}, the same with ``_grid`` (paper-style average over
  an ε grid), C2_between_tol{t}, C5_near_a_theta{θ}, C6_case_*, C6_met_theta{θ}, C6_between_tol{t},
  margin means/stds, angle/norm means per operator, histograms{operator: {angle_b, angle_a, norm_ratio}},
  paper{…} (the published figures of the matching encoder, if any).
Percentages are 0–100; undefined values (e.g. no sample of an operator) are null.
"""

from __future__ import annotations

import json
import math
import os
from typing import Iterable, Sequence

import numpy as np

from core.embeddings import paper
from core.embeddings.criteria import Evaluation
from core.embeddings.measures import MEASURES
from core.embeddings.projection import histogram
from core.embeddings.samples import Sample
from core.files import write_csv

SCHEMA = "setlike-report/1"
HIST_BINS = 40
ANGLE_RANGE = (0.0, 2.5)
RATIO_RANGE = (0.5, 1.5)
SAMPLE_TEXT_COLUMNS = ("sample_id", "tuple_id", "topic", "operator", "variant", "a", "b", "target")


def _clean(x):
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def histograms(ev: Evaluation, operators: Sequence[str]) -> dict:
    ops = np.asarray(operators)
    out = {}
    for op in ("overlap", "difference", "union"):
        m = ops == op
        if not m.any():
            continue
        out[op] = {
            "angle_b": histogram(ev.per_sample["angle_b"][m], HIST_BINS, ANGLE_RANGE),
            "angle_a": histogram(ev.per_sample["angle_a"][m], HIST_BINS, ANGLE_RANGE),
            "norm_ratio": histogram(ev.per_sample["norm_ratio"][m], HIST_BINS, RATIO_RANGE),
        }
    return out


def paper_reference(encoder_name: str) -> dict:
    ref = {"note": "paper figures are averages over its epsilon grid (compare with *_grid keys)",
           "llm_range": {k: list(paper.llm_range(k)) for k in ("C1_TT", "C3_TT", "C4_cosine")}}
    twin = paper.COUNTERPART.get(encoder_name)
    if twin:
        row = next(r for r in paper.rows() if r["encoder"] == twin)
        ref["counterpart"] = twin
        ref["C1_both_cosine"], ref["C3_both_cosine"], ref["C4_cosine"] = row["C1_TT"], row["C3_TT"], row["C4_cosine"]
    return ref


def build_report(ev: Evaluation, samples: Sequence[Sample], *, encoder_name: str, encoder_label: str,
                 encoder_cache_id: str, dim: int, data: dict, embedding: dict, extra: dict | None = None) -> dict:
    report = {"schema": SCHEMA, "encoder": encoder_name, "encoder_label": encoder_label,
              "encoder_cache_id": encoder_cache_id, "dim": int(dim),
              "data": {**data, "n_samples": len(samples), "counts": ev.counts},
              "settings": ev.settings, "embedding": embedding}
    report.update(ev.metrics)
    report["histograms"] = histograms(ev, [s.operator for s in samples])
    report["paper"] = paper_reference(encoder_name)
    if extra:
        report.update(extra)
    return _clean(report)


def sample_rows(ev: Evaluation, samples: Sequence[Sample]) -> list[dict]:
    """One dict per sample: texts, the three pairwise values of every measure, criterion margins, geometry."""
    cols = ev.per_sample
    names = [n for n in MEASURES if f"{n}_ab" in cols]
    keys = [f"{n}_{p}" for n in names for p in ("ab", "at", "bt")]
    keys = [k.replace("cosine_", "cos_") for k in keys]
    crit = [c for c in cols if c.startswith(("c1_", "c3_", "c4_"))]
    geo = ["angle_a", "angle_b", "position", "angle_ab_deg", "in_plane", "norm_ratio", "norm_case"]
    rows = []
    for i, s in enumerate(samples):
        r = {k: getattr(s, k) for k in SAMPLE_TEXT_COLUMNS}
        for n in names:
            for p in ("ab", "at", "bt"):
                r[f"{'cos' if n == 'cosine' else n}_{p}"] = _num(cols[f"{n}_{p}"][i])
        for c in crit:
            r[c] = _num(cols[c][i])
        for g in geo:
            r[g] = _num(cols[g][i]) if g != "norm_case" else str(cols[g][i])
        rows.append(r)
    return rows


def _num(x):
    x = float(x)
    return None if not math.isfinite(x) else round(x, 6)


def write_report(report: dict, path) -> None:
    _parent(path)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1, ensure_ascii=False, allow_nan=False)
        fh.write("\n")


def write_samples_csv(rows: Iterable[dict], path) -> None:
    rows = list(rows)
    _parent(path)
    write_csv(rows, path)   # the one CSV writer: a sentence starting with "=" is neutralised


def _parent(path) -> None:
    d = os.path.dirname(os.fspath(path))
    if d:
        os.makedirs(d, exist_ok=True)
