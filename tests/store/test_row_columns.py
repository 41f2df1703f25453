"""Rows → Arrow columns: the one-go path (every value already of the column's own type) gives exactly what the
value-by-value rules give, and values of other types still go through the rules."""

from __future__ import annotations

import math

import pyarrow as pa
from hypothesis import given, settings, strategies as st

from core.store import rows


def by_rules(values: list, typ: str) -> pa.Array:
    """The value-by-value rules, forced: one value of a foreign type sends the column down them, then it is cut."""
    return rows._column(values + [object()], typ).slice(0, len(values))


NATIVE = {   # column types as core/store/schema.py names them (DuckDB's names)
    "VARCHAR": st.one_of(st.none(), st.text(max_size=8)),
    "DOUBLE": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    "BIGINT": st.one_of(st.none(), st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)),
    "BOOLEAN": st.one_of(st.none(), st.booleans()),
}
ARROW = {"VARCHAR": pa.string(), "DOUBLE": pa.float64(), "BIGINT": pa.int64(), "BOOLEAN": pa.bool_()}


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_native_values_convert_exactly_as_the_rules_do(data):
    for typ, values in NATIVE.items():
        got = data.draw(st.lists(values, max_size=30))
        column = rows._column(got, typ)
        assert column.type == ARROW[typ] and column.equals(by_rules(got, typ)), (typ, got)


def test_nan_is_null_on_both_paths():
    assert rows._column([1.5, math.nan, None], "DOUBLE").to_pylist() == [1.5, None, None]


def test_foreign_values_still_follow_the_rules():
    # bools and whole floats into integers, text into booleans and numbers, structures into JSON text
    assert rows._column([True, 3.0, 3.5, "4", None], "BIGINT").to_pylist() == [1, 3, None, 4, None]
    assert rows._column(["true", "0", 1, "maybe"], "BOOLEAN").to_pylist() == [True, False, True, None]
    assert rows._column(["2.5", 1, "x"], "DOUBLE").to_pylist() == [2.5, 1.0, None]
    assert rows._column([{"b": 1, "a": [2]}, "s", None], "VARCHAR").to_pylist() == ['{"a":[2],"b":1}', "s", None]


def test_a_whole_table_of_runner_rows():
    cols = [("run_id", "VARCHAR"), ("idx", "BIGINT"), ("correct", "BOOLEAN"), ("jaccard", "DOUBLE")]
    table = rows.rows_table([{"run_id": "r", "idx": 1, "correct": True, "jaccard": 0.5},
                             {"run_id": "r", "idx": 2, "correct": None}], cols)
    assert table.to_pylist() == [{"run_id": "r", "idx": 1, "correct": True, "jaccard": 0.5},
                                 {"run_id": "r", "idx": 2, "correct": None, "jaccard": None}]
