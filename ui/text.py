"""User-supplied text inside Markdown (st.markdown, st.error, st.info, st.caption … all render Markdown): escaped so
that an imported cell, a model's name from an uploaded file, a URL parameter or an error message quoting either is
shown as written and never becomes an image that fetches an external URL, a link (bare URLs included), a code span it
breaks out of,
Streamlit's ``:color[…]`` directives or LaTeX.

    md(text) -> str        the text with the characters that start such constructs escaped
    md_code(text) -> str   an inline code span holding the text whatever backticks it contains
"""

from __future__ import annotations

import re

# backslash first (so escapes stay honest), then what opens images/links/autolinks/HTML, code spans and math
_ACTIVE = re.compile(r"([\\`\[\]<>!$])")


# GFM turns bare URLs (http://…, www.…) into links, escapes or not: a zero-width space after "http:" / "www" breaks
# the pattern and shows nothing
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\\?\.)")
ZWSP = "\u200b"


def md(text) -> str:
    return _AUTOLINK.sub(ZWSP, _ACTIVE.sub(r"\\\1", str(text)))


def md_code(text) -> str:
    """CommonMark: a code span fenced by more backticks than any run inside it shows its content literally."""
    s = " ".join(str(text).splitlines())
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {s} {fence}"
