"""Names where a person reads (issue 22), under AppTest: run pickers and headings show run names, never the run
ids (hashes); |A| and |B| are one factor when always equal; the Runs picker shows no status of its own."""

from __future__ import annotations

import re
import sys

import pytest

from tests.support import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core import runner

CFG = {"task": "setops", "seed": 0, "samples": 2, "operations": ["union", "intersection"], "sizes": [2, 4],
       "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
HASH = re.compile(r"setops-[0-9a-f]{6,}")


@pytest.fixture()
def db(tmp_path, monkeypatch):
    import streamlit as st

    path = tmp_path / "studio.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def _texts(at) -> list[str]:
    out = [e.value for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning")
           for e in getattr(at, kind)]
    out += [o for ms in at.multiselect for o in ms.options] + [o for sb in at.selectbox for o in sb.options]
    return [str(t) for t in out]


@pytest.mark.slow
def test_pickers_and_headings_name_runs(db, open_page, monkeypatch):
    import streamlit as st

    names: list[str] = []
    real = st.download_button

    def spy(*args, **kwargs):   # AppTest does not keep a download's file name: read it as the page passes it
        names.append(kwargs.get("file_name"))
        return real(*args, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    a = runner.run(CFG, "reference/solver", db_path=db, name="smollm2 24").run_id
    b = runner.run({**CFG, "seed": 1}, "reference/solver", db_path=db).run_id
    res = open_page("pages/results.py", {"runs": f"{a},{b}"})
    picker = res.multiselect(key="_pick_runs")
    assert any(o.startswith("smollm2 24") for o in picker.options)
    assert not [t for t in _texts(res) if HASH.search(t)], [t for t in _texts(res) if HASH.search(t)]
    assert a in picker.help                                   # the ids: in the picker's tooltip only
    # |A| = |B| on every item: one factor, in the split and the slice
    split = res.selectbox(key="res_x")
    assert "|A| = |B|" in split.options and "|B|" not in split.options and "|A|" not in split.options
    assert "slice_size_b" not in [m.key for m in res.multiselect]
    assert any(m.label == "|A| = |B|" for m in res.multiselect)
    configs = next(d.value for d in res.dataframe if "Configuration" in d.value.columns)["Configuration"]
    assert configs.str.contains(r"\|A\|=\|B\|=\d").all(), configs.tolist()

    runs = open_page("pages/runs.py", {"run": a})
    assert runs.subheader[0].value == "Run smollm2 24"
    pick = next(s for s in runs.selectbox if s.key.startswith("runs_pick_"))
    assert not any(HASH.search(o) or re.search(r"\b(done|running|pending)\b", o) for o in pick.options), \
        pick.options
    assert "smollm2-24.csv" in names and "smollm2-24.yaml" in names, names
    assert not any(HASH.search(str(n)) for n in names), names
