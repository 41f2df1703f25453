"""Quantifier figures are built from the metrics frames: order of noun groups, one facet per quantifier, empty data."""

import pandas as pd

from core.analysis import quantifier_figures as QF
from core.tasks.quantifiers import metrics as QM


def _results():
    rows = []
    for group, good in (("rarest", 0.5), ("common", 1.0), ("made_up", 0.25)):
        for k in range(8):
            label = "true" if k % 2 else "false"
            right = k < 8 * good
            pred = label if right else ("false" if label == "true" else "true")
            rows.append({"noun_group": group, "quantifier": "all" if k < 4 else "none", "count_asked": k,
                         "label": label, "pred": pred, "correct": right, "correct_gqg": right, "model": "m"})
    return pd.DataFrame(rows)


def test_frequency_figure_orders_groups_common_to_made_up():
    m = QM.metrics_from_frame(_results(), "noun_group")
    assert list(m["noun_group"]) == ["common", "rarest", "made_up"]  # frequency order, not alphabetical
    fig = QF.fig_frequency(m)
    assert [t.name for t in fig.data] == ["accuracy", "F1"]
    assert list(fig.data[0].x) == ["common", "rarest", "made up"]
    assert list(fig.data[0].y) == [1.0, 0.5, 0.25]
    assert list(fig.data[1].y) == list(m["f1"])


def test_metrics_by_and_by_count_figures():
    df = _results()
    fig = QF.fig_metrics_by(QM.metrics_from_frame(df, "quantifier"), "quantifier")
    assert [t.name for t in fig.data] == ["accuracy", "F1"] and list(fig.data[0].x) == ["all", "none"]
    by_count = QM.metrics_from_frame(df, ["model", "quantifier", "count_asked"])
    fig = QF.fig_by_count(by_count, color="model")
    names = [t.name for t in fig.data]
    assert names.count("truth") == 2 and names.count("m") == 2  # one facet per quantifier
    truth = fig.data[0]
    assert list(truth.x) == sorted(truth.x)


def test_empty_inputs_give_a_message_not_an_error():
    empty = pd.DataFrame(columns=["quantifier", *QM.METRIC_COLUMNS])
    for fig in (QF.fig_metrics_by(empty), QF.fig_frequency(empty.assign(noun_group=[])), QF.fig_by_count(empty)):
        assert fig.layout.annotations and "no answered items" in fig.layout.annotations[0].text
