"""Analysis of stored results: every aggregation is DuckDB SQL over the store's ``v_results`` view.

One row of ``v_results`` = one item of one run (``run_id``, ``idx``) with its factors, the model's response and its
score; ``correct`` is NULL while an item has not been answered (or its call failed), so every metric below counts
answered items only.

A *configuration* (``config_id``) is one cell of a run's grid — every factor fixed, only the sample index varying —
exactly the paper's "prompt configuration". The distribution plotted in a violin is the distribution of per-config
accuracy (0–100, over that config's N samples), one point per (run, config).

Public API (all take an open DuckDB connection ``con`` whose catalogue has ``v_results``; ``run_ids`` selects runs;
``filters`` is ``{column: [values…]}`` on any factor column):

    factor_columns(con, run_ids)                   factors that take ≥ 1 non-null value in these runs
    factor_levels(con, run_ids, column)            distinct values of a column
    factor_levels_of(con, run_ids, columns)        {column: its distinct values} for several columns
    config_accuracy(con, run_ids, by, filters)     one row per (run, config): by-columns, n, n_correct, accuracy
    violin_data(con, run_ids, x, color, filters)   -> (points, summary) for the violin figure
    violin_view(con, run_ids, x, color, filters)   -> (points or None, summary with each violin's shape): any size
    violin_summary(points, by)                     that summary of per-configuration points in hand (Compare)
    selection_facts(con, run_ids)                  factors, varying ones and their levels, |A| = |B|, the overview
                                                   per scoring: what a page asks first, on one connection
    group_summary(points, by)                      mean / std / min / max / N of per-config accuracy per group
    wilson_interval(k, n, confidence)              Wilson score interval for a proportion, in percent
    config_interval(con, run_id, config_id)        accuracy + Wilson interval of one configuration
    error_table(con, run_ids, by, filters, scoring, unparsed)   the paper's Tables 15–18 per group
    reference_error_table(con, run_ids, by, …)     the same with the reference's column names and formulas

Every function that counts right answers takes ``scoring`` = "strict" (the SetLexSem reference's answer rule) or
"lenient" (our parser); the choice picks the verdict columns in SQL (``SCORINGS``; default "lenient").
    robustness(con, run_ids, factors, filters)     -> (per-factor spread + eta², per-model score)
    compare_runs(con, series, x, filters)          aligned per-config accuracies of several series
    compare_view(con, series, x, align, filters)   what Compare draws of them (violin shapes, summaries), kept in the store
    compare_pair(con, [run_a, run_b], scoring, filters, by, alpha)   B − A at the independent draw (paired by draw
                                                   when the runs share draws, else matched between draws), per-level
                                                   rows with Holm, description; kept in the store (``comparison``)
    series_without_points(points, series)          series a comparison has nothing for
    difference_of_means(a, b, …)                   bootstrap CI + Welch t + Mann–Whitney U
    paired_items(con, run_a, run_b, filters)       items both runs answered, aligned by (config_id, sample, prompt)
    mcnemar(paired)                                exact McNemar test on paired correctness
    agreement_map(paired, max_configs)             per-config × sample agreement categories
    paired_comparison(con, [run_a, run_b], filters) {"mcnemar", "map"} from DuckDB's counts, kept in the store
    drilldown(con, run_ids, filters, …)            the individual prompts, raw responses and parsed answers
    item_detail(row)                               one drill-down row as display text (no "nan" for NULLs)
    reference_tables() / reference_table(id)       the papers' published aggregates (data/reference_figures.json)
    reference_for(factor, tasks) / reference_task(id)   the published tables for a factor and task
    change_token(con)                              cheap fingerprint of the results, for cache keys
    view_defaults(runs, varying, factors)          the split and colour a view opens with (``views``)
    run_labels(runs) / config_labels(points, f)    readable names of runs and configurations (never hashes)
    tasks_of(runs)                                 the tasks among some runs (views never pool two tasks)
    run_split(runs, by) / split_note(runs, by, split, labels)   the run-level column a view of several runs adds
                                                   (model, or run when two share a model) and its caption

Modules: ``queries`` (the view, factor columns, filters, drill-down) · ``aggregated`` (the same views from the store's per-configuration counts) · ``memo`` (repeated calls answered in-process) · ``summaries`` (per-config accuracy, violins,
intervals, robustness) · ``error_table`` (the paper's error analysis) · ``compare`` (several runs aligned, paired items) · ``comparison`` (two runs tested at the draw) · ``stats`` (every
interval, test and correction: Wilson, permutation tests, bootstrap intervals, Holm) ·
``reference`` (published figures) · ``views`` (defaults and labels of a view) · ``report`` (the static HTML report) ·
``figures`` (Plotly figures of all of the above).
"""

from core.analysis.compare import (
    AGREEMENT_LEVELS,
    Series,
    agreement_map,
    compare_runs,
    compare_view,
    mcnemar,
    paired_comparison,
    paired_items,
    paired_summary,
    series_without_points,
)
from core.analysis.comparison import compare_pair
from core.analysis.effort import cost_accuracy_figure, effort_costs, thinking_buys, thinking_figure
from core.analysis.error_table import (
    ERROR_ROWS,
    ERROR_TABLE_HELP,
    ERROR_TABLE_TASK,
    REFERENCE_ERROR_COLUMNS,
    UNPARSED,
    error_table,
    error_table_paper_layout,
    reference_error_table,
)
from core.analysis.labels import LABELS, label
from core.analysis.queries import (
    ALL_FACTORS,
    DETAIL_COLUMNS,
    QUANTIFIER_FACTORS,
    RUN_FACTORS,
    SCORINGS,
    SETOPS_FACTORS,
    VIEW,
    answers_feed,
    change_token,
    drilldown,
    factor_columns,
    factor_levels,
    factor_levels_of,
    filters_from_pairs,
    item_detail,
    run_overview,
    run_overview_among,
    view_columns,
)
from core.analysis.reference import REFERENCE_PATH, reference_for, reference_table, reference_tables, reference_task
from core.analysis.stats import BOOTSTRAP_MAX, difference_of_means, mcnemar_counts, wilson_interval
from core.analysis.summaries import (
    config_accuracy,
    config_interval,
    group_summary,
    robustness,
    robustness_caveat,
    violin_data,
    violin_summary,
    violin_view,
)
from core.analysis.views import (
    config_labels,
    factor_label,
    file_stem,
    for_display,
    merge_sizes,
    p_text,
    readable_items,
    readable_level,
    run_choice_labels,
    run_labels,
    run_rows,
    run_split,
    selection_facts,
    sizes_always_equal,
    sizes_equal,
    split_note,
    tasks_of,
    view_defaults,
)


def findings_report(con, run_ids, scoring: str = "strict", alpha: float = 0.05, only=None,
                    family: str = "finding") -> dict:
    """The SetLexSem paper's findings on these runs (core/analysis/findings.py); kept in the store by the runs'
    versions (core/analysis/memo.py), so it is computed once per state of the runs, whichever process asks."""
    from core.analysis import memo
    from core.analysis.findings import report

    return memo.call(con, "findings", report, run_ids, scoring=scoring, alpha=alpha, only=only, family=family,
                     persist=True)


def finding_points(con, run_ids, finding_id: str, scoring: str = "strict"):
    """Per-configuration accuracy of one finding's slice (its violins)."""
    from core.analysis.findings_view import points

    return points(con, run_ids, finding_id, scoring)


__all__ = [
    "cost_accuracy_figure", "effort_costs", "thinking_buys", "thinking_figure",
    "AGREEMENT_LEVELS", "ALL_FACTORS", "DETAIL_COLUMNS", "ERROR_ROWS", "ERROR_TABLE_HELP", "ERROR_TABLE_TASK",
    "LABELS", "QUANTIFIER_FACTORS", "REFERENCE_ERROR_COLUMNS", "REFERENCE_PATH", "RUN_FACTORS", "SCORINGS",
    "SETOPS_FACTORS", "Series", "UNPARSED", "VIEW",
    "agreement_map", "answers_feed", "change_token", "compare_pair", "compare_runs", "compare_view", "config_accuracy", "config_interval",
    "difference_of_means", "drilldown", "error_table", "error_table_paper_layout", "factor_columns", "factor_levels",
    "factor_levels_of", "filters_from_pairs", "group_summary", "item_detail", "label", "mcnemar",
    "mcnemar_counts", "paired_comparison", "paired_items",
    "paired_summary", "BOOTSTRAP_MAX",
    "reference_for", "reference_table", "reference_error_table", "reference_tables", "reference_task", "robustness",
    "robustness_caveat", "run_overview", "run_overview_among", "series_without_points", "view_columns", "violin_data", "violin_summary", "violin_view",
    "wilson_interval",
    "config_labels", "file_stem", "for_display", "readable_items", "readable_level", "run_choice_labels",
    "run_labels", "p_text", "selection_facts", "sizes_equal", "sizes_always_equal", "factor_label", "merge_sizes", "tasks_of", "view_defaults",
    "run_rows", "run_split", "split_note",
    "findings_report", "finding_points",
]
