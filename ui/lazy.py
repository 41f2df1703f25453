"""Content built only when it is looked at: an expander whose body the page builds only while it is open.

Streamlit sends (and the browser renders) an expander's elements even while it is collapsed: a page with fifteen
closed expanders of tables drew seventeen data grids on every visit. ``lazy_expander`` is an expander that reruns
the script when it is opened or closed (``on_change="rerun"``); ``.open`` says whether to build its body::

    exp = lazy_expander("Items of this run (first 200)", key="runs_items")
    if exp.open:
        with exp:
            st.dataframe(...)

Opening it shows the same content as before, one short rerun later. Keep widgets whose value must outlive a closed
expander (a text being edited, an uploaded file) in an ordinary ``st.expander``: a widget that is not drawn in a run
loses its state.
"""

from __future__ import annotations

import streamlit as st


def lazy_expander(label: str, key: str, expanded: bool = False, **kwargs):
    """``st.expander`` that tracks whether it is open (``.open``: True / False), keyed by ``key``."""
    return st.expander(label, expanded=expanded, key=key, on_change="rerun", **kwargs)
