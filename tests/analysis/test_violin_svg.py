"""The static violins (core/analysis/violin_svg.py) of a big selection: a well-formed SVG with one outline per
violin of analysis.violin_view's summary, the numbers a reader hovers for, N under each label, the published
references, every text escaped; and the density it draws: Silverman's Gaussian kernel, cut at the data's range."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from core import analysis as A, runner, store
from core.analysis import violin_svg
from core.analysis.violin_svg import density
from tests.analysis.test_aggregates_equal_rows import SETOPS

NS = "{http://www.w3.org/2000/svg}"


def _parse(text: str) -> ET.Element:
    assert "\n" not in text            # one line: Markdown passes it through as one raw HTML block
    return ET.fromstring(text)


def _summary(groups: dict, by=("operation",)) -> pd.DataFrame:
    rows = []
    for key, values in groups.items():
        v = np.sort(np.asarray(values, dtype=float))
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), "mean": v.mean(), "std": v.std(ddof=1) if len(v) > 1 else np.nan,
                     "min": v.min(), "max": v.max(), "N": len(v), "items": 10 * len(v), "min_items": 10,
                     "shape": v})
    return pd.DataFrame(rows)


def test_density_is_silvermans_gaussian_kernel_over_the_data_range():
    rng = np.random.default_rng(3)
    v = rng.normal(60, 10, 400).clip(0, 100)
    ys, d = density(v, grid=50)
    assert ys[0] == v.min() and ys[-1] == v.max()          # spanmode "hard": from the smallest to the largest
    assert d.max() == pytest.approx(1.0)
    q1, q3 = np.quantile(v, [0.25, 0.75])
    bw = 1.059 * min(v.std(ddof=1), (q3 - q1) / 1.349) * len(v) ** -0.2
    expected = np.exp(-0.5 * ((ys[:, None] - v[None, :]) / bw) ** 2).sum(axis=1)
    assert np.allclose(d, expected / expected.max())
    # symmetric data: a symmetric outline
    ys, d = density([10, 20, 20, 30, 30, 30, 40, 40, 50], grid=41)
    assert np.allclose(d, d[::-1])
    assert ys[np.argmax(d)] == pytest.approx(30)


def test_density_of_one_value_or_none():
    assert [a.tolist() for a in density([70, 70, 70])] == [[70.0], [1.0]]
    assert [a.tolist() for a in density([np.nan])] == [[], []]


def test_one_outline_per_violin_with_its_numbers():
    summ = _summary({"union": [50, 60, 70, 80, 90], "intersection": [10, 20, 20, 30, 40, 50]})
    root = _parse(violin_svg.violin_svg(summ, "operation", x_title="Operation"))
    assert len(root.findall(f".//{NS}polygon")) == 2
    tips = [t.text for t in root.iter(f"{NS}title")]
    assert any(t.startswith("Union: 5 configurations, 50 items; mean 70.0 %, std 15.8, median 70.0, quartiles "
                            "60.0–80.0, min 50.0, max 90.0") for t in tips), tips
    texts = "".join(root.itertext())
    # union before intersection (the paper's order), N under each label, μ · σ · N above without a colour
    assert texts.index("Union") < texts.index("Intersection")
    assert "N=5" in texts and "N=6" in texts and "μ 70.0 · σ 15.8 · N 5" in texts
    assert "Operation" in texts and "Accuracy per configuration (%)" in texts


def test_colours_side_by_side_with_a_legend_and_references():
    summ = _summary({("union", "m1"): [40, 50, 60], ("union", "m2"): [70, 80, 95],
                     ("difference", "m1"): [20, 30, 35]}, by=("operation", "model"))
    ref = pd.DataFrame({"operation": ["union", "difference", "intersection"], "mean": [75.0, 50.0, 40.0],
                        "std": [10.0, np.nan, 5.0]})
    root = _parse(violin_svg.violin_svg(summ, "operation", "model", reference=ref, reference_name="paper"))
    polys = root.findall(f".//{NS}polygon")
    assert len(polys) == 3
    # the two colours of one level sit side by side: m1 left of m2
    xs = {p.get("fill"): float(p.get("points").split()[0].split(",")[0]) for p in polys[:1] + polys[2:]}
    assert len(xs) == 2
    texts = "".join(root.itertext())
    assert "Model:" in texts and "m1" in texts and "m2" in texts and "paper" in texts
    assert "N=3 · 3" in texts and "N=3" in texts
    assert "μ" not in texts                                   # no μ line when coloured
    # only the references of drawn levels (intersection is not drawn): two diamonds, plus the legend's
    tips = [t.text for t in root.iter(f"{NS}title") if t.text.startswith("paper")]
    assert sorted(tips) == ["paper: Difference mean 50.0 ± 0.0", "paper: Union mean 75.0 ± 10.0"]


def test_every_text_escaped():
    hostile = '<script>alert(1)</script> :red[x] $y$ & "q"'
    summ = _summary({(hostile, hostile): [10, 20, 30]}, by=("members", "model"))
    text = violin_svg.violin_svg(summ, "members", "model", x_title=hostile)
    assert "<script" not in text and ":red[" not in text and "$y$" not in text
    root = _parse(text)
    assert hostile in "".join(root.itertext())               # shown as written


def test_empty_and_flat():
    root = _parse(violin_svg.violin_svg(pd.DataFrame(), "operation", empty_message="Nothing here"))
    assert "Nothing here" in "".join(root.itertext())
    flat = _parse(violin_svg.violin_svg(_summary({"union": [100, 100, 100]}), "operation"))
    assert not flat.findall(f".//{NS}polygon") and len(flat.findall(f".//{NS}rect")) >= 2


def test_draws_violin_view_of_a_store(tmp_path):
    db = str(tmp_path / "s.duckdb")
    rid = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    with store.connect(db) as con:
        _, summ = A.violin_view(con, [rid], "operation", "members", max_points=0)
    assert len(summ) > 1
    root = _parse(violin_svg.violin_svg(summ, "operation", "members"))
    assert len(root.findall(f"./{NS}g")) == len(summ)        # one hoverable group per violin


def test_long_labels_wrap_instead_of_overlapping():
    names = ["baseline", "baseline_allow_empty", "chain_of_thought", "composite", "composite_allow_empty",
             "domain_expertise", "self_recitation"]
    summ = _summary({n: [40, 50, 60, 70] for n in names}, by=("approach",))
    root = _parse(violin_svg.violin_svg(summ, "approach"))
    labels = {"".join(t.itertext()): [s.text for s in t.findall(f"{NS}tspan")] for t in root.iter(f"{NS}text")
              if t.findall(f"{NS}tspan") and "N 4" not in "".join(t.itertext())}
    assert labels["baseline_allow_empty"] == ["baseline_", "allow_empty"]
    assert labels["composite_allow_empty"] == ["composite_", "allow_empty"]
    assert labels["baseline"] == ["baseline"]
    # four wide categories: one line each, the numbers above on one line too
    wide = _parse(violin_svg.violin_svg(_summary({n: [40, 50, 60] for n in names[:4]}, by=("approach",)),
                                        "approach"))
    assert all(len(t.findall(f"{NS}tspan")) <= 1 for t in wide.iter(f"{NS}text"))
    assert "μ 50.0 · σ 10.0 · N 3" in "".join(wide.itertext())
