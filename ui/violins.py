"""What Results and Compare show under the violins of a selection too big for a marker per configuration."""

from __future__ import annotations

import streamlit as st

from core.analysis import figures


def sketch_note(n_configs: int, key: str, static: bool) -> None:
    """How the violins of ``n_configs`` configurations are drawn, and the "Zoomable chart" toggle (``key``) that
    switches the static SVG to the Plotly figure of the same violins."""
    st.caption(f"{n_configs:,} configurations: each violin is drawn from {figures.SKETCH:,} evenly spaced quantiles "
               "of its configurations' accuracies (shape, quartiles and mean to within a tenth of a point); the "
               "table below has the exact figures." + (" Hover over a violin for its numbers." if static else ""))
    st.toggle("Zoomable chart", key=key,
              help="Draw these violins with Plotly: zoom, pan, hover and a PNG download (the first Plotly chart in a "
                   "browser tab takes about a second longer to appear).")
