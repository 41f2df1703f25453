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
    # the two colours of one level sit side by side: m1 (first colour) left of m2, both left of difference's
    def centre(poly):
        xs = [float(pt.split(",")[0]) for pt in poly.get("points").split()]
        return (min(xs) + max(xs)) / 2

    from core.analysis.figures import PALETTE

    union_m1, diff_m1, union_m2 = polys
    assert union_m1.get("fill") == diff_m1.get("fill") == PALETTE[0] and union_m2.get("fill") == PALETTE[1]
    assert centre(union_m1) < centre(union_m2) < centre(diff_m1)
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


def test_a_line_break_in_a_name_keeps_the_drawing_on_one_line():
    name = "two\nlines\r\n- not a list\n\n---"
    summ = _summary({(name, name): [10, 20, 30]}, by=("members", "model"))
    text = violin_svg.violin_svg(summ, "members", "model", x_title=name)
    root = _parse(text)                                       # one line, and well-formed
    assert "\r" not in text and "\t" not in text
    assert name.replace("\r\n", "\n") in "".join(root.itertext()).replace("\r\n", "\n")


def test_a_level_named_none_and_a_missing_level_are_two_violins():
    summ = _summary({"none": [10, 20, 30], None: [60, 70, 80, 90]}, by=("quantifier",))
    root = _parse(violin_svg.violin_svg(summ, "quantifier"))
    tips = sorted(t.text.split(";")[0] for t in root.iter(f"{NS}title"))
    assert tips == ["none: 3 configurations, 30 items", "none: 4 configurations, 40 items"]
    texts = "".join(root.itertext())
    assert "N=3" in texts and "N=4" in texts and "N=3 · " not in texts and "N=4 · " not in texts
    one = _parse(violin_svg.violin_svg(_summary({None: [10, 20, 30]}, by=("quantifier",)).drop(
        columns="quantifier"), None))                                  # no split at all: one violin
    assert len(one.findall(f".//{NS}polygon")) == 1


def test_a_long_legend_wraps_inside_the_drawing():
    models = [f"anthropic/claude-model-number-{i}-long-name" for i in range(5)]
    summ = _summary({("union", m): [40, 50, 60] for m in models}, by=("operation", "model"))
    root = _parse(violin_svg.violin_svg(summ, "operation", "model", width=1000))
    swatches = [r for r in root.iter(f"{NS}rect") if r.get("width") == "14"]
    assert len(swatches) == 5
    assert all(float(r.get("x")) + 14 < 1000 for r in swatches)          # every entry inside
    rows = sorted({float(r.get("y")) for r in swatches})
    assert len(rows) >= 2                                               # on more than one row
    names = [t.text for t in root.iter(f"{NS}text")]
    assert all(m in names for m in models)
    # the plot starts below the legend: the top grid line (100 %) is under the last legend row
    top_grid = min(float(line.get("y1")) for line in root.iter(f"{NS}line") if line.get("stroke") == "#ebebeb")
    assert top_grid > rows[-1] + 14
