"""One policy for a transaction that met a DuckDB write conflict: done again up to ATTEMPTS times, the last failure
raised as it is, other errors not retried."""

from __future__ import annotations

import asyncio

import duckdb
import pytest

from core import store
from core.store import retry


def _failing(times: int, exc: type[BaseException] = duckdb.TransactionException):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= times:
            raise exc("Conflict on tuple deletion")
        return len(calls)

    return fn, calls


def test_a_conflict_is_done_again_until_it_goes_through():
    fn, calls = _failing(2)
    assert store.retry_conflicts(fn, step=0.0) == 3 and len(calls) == 3


def test_the_last_conflict_is_raised_after_every_attempt():
    fn, calls = _failing(10)
    with pytest.raises(duckdb.TransactionException, match="Conflict"):
        store.retry_conflicts(fn, step=0.0)
    assert len(calls) == retry.ATTEMPTS


def test_other_errors_are_not_retried():
    fn, calls = _failing(1, duckdb.ConstraintException)
    with pytest.raises(duckdb.ConstraintException):
        store.retry_conflicts(fn, step=0.0)
    assert len(calls) == 1
    fn, calls = _failing(1, duckdb.ConstraintException)
    assert store.retry_conflicts(fn, step=0.0, errors=(duckdb.ConstraintException,)) == 2


def test_the_event_loop_variant_runs_the_transaction_in_a_thread():
    fn, calls = _failing(1)
    assert asyncio.run(store.aretry_conflicts(fn, step=0.0)) == 2 and len(calls) == 2
    fn, calls = _failing(10)
    with pytest.raises(duckdb.TransactionException):
        asyncio.run(store.aretry_conflicts(fn, step=0.0, attempts=2))
    assert len(calls) == 2
