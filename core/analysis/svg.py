"""Static SVG charts shown through ``st.markdown``: what the escaping of their text must guarantee.

A chart drawn as SVG needs no JavaScript: Plotly's 4.6 MB script takes a new browser context ~0.9 s to compile
before the first chart appears. The Findings forests and the violins of big selections are drawn this way."""

from __future__ import annotations

# XML's special characters, every one Markdown or Streamlit's directives (``:red[…]``, ``$…$``) could read, and the
# line breaks and tabs that would end the one-line HTML block Markdown passes through, as character references (one
# pass: a reference's own "&" and "#" are never escaped again)
_ESCAPES = str.maketrans({c: f"&#{ord(c)};" for c in "&<>\"'\\`*_~[]$:!#|\n\r\t"})


def escape(text) -> str:
    """Text for an SVG shown through st.markdown, every active character as a character reference."""
    return str(text).translate(_ESCAPES)
