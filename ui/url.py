"""URL state: a page's main selection and slice filters live in the query string, so a view can be shared."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core import analysis

# ------------------------------------------------------------------------------------------------------ URL state

def qp_get(name: str, default: str | None = None) -> str | None:
    v = st.query_params.get(name)
    return v if v not in (None, "") else default


def qp_list(name: str) -> list[str]:
    v = st.query_params.get(name)
    if not v:
        return []
    return [x for x in str(v).split(",") if x]


def qp_set(**values: Any) -> None:
    """Write values to the URL (lists joined with commas); None / empty removes the key."""
    for k, v in values.items():
        if isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        elif v is not None:
            v = str(v)
        current = st.query_params.get(k)
        if not v:
            if k in st.query_params:
                del st.query_params[k]
        elif current != v:
            st.query_params[k] = v


def filters_to_qp(filters: dict[str, list]) -> str:
    return ";".join(f"{k}={','.join(str(x) for x in v)}" for k, v in filters.items() if v)


def filters_from_qp(text: str | None) -> dict[str, list[str]]:
    if not text:
        return {}
    return analysis.filters_from_pairs(text.split(";"))


