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
    res.session_state["res_one"] = True     # open the list of configurations (built only while open)
    res.run()
    configs = next(d.value for d in res.dataframe if "Configuration" in d.value.columns)["Configuration"]
    assert configs.str.contains(r"\|A\|=\|B\|=\d").all(), configs.tolist()

    runs = open_page("pages/runs.py", {"run": a})
    assert runs.subheader[0].value == "Run smollm2 24"
    pick = next(s for s in runs.selectbox if s.key.startswith("runs_pick_"))
    assert not any(HASH.search(o) or re.search(r"\b(done|running|pending)\b", o) for o in pick.options), \
        pick.options
    assert "smollm2-24.csv" in names and "smollm2-24.yaml" in names, names
    assert not any(HASH.search(str(n)) for n in names), names


IDS = re.compile(r"\b(?:setops|quantifiers|import)-[0-9a-f]{6,}")


def _shown(frame) -> list[str]:
    """What a table shows a person: its visible columns' names and cells (a column the page hides with
    column_config None stays in the data — selections, downloads — but not on screen)."""
    import json

    hidden = {c for c, cfg in json.loads(frame.proto.columns or "{}").items() if (cfg or {}).get("hidden")}
    df = frame.value
    cols = [c for c in df.columns if c not in hidden]
    return [str(c) for c in cols] + [str(v) for c in cols for v in df[c].tolist()]


def test_tables_show_names_and_keep_the_ids_off_screen(db, open_page, tmp_path):
    """Seen in Chromium screenshots of a store of named runs (issue 22): the Runs table had a 'run id' column and
    the drill-down tables ended in run_id, config_id and cache_key hashes; Compare listed |A| and |B| as two
    factors of grids where they are always equal."""
    import pandas as pd

    from core.store.exports import export_run
    from core.store.io import import_results

    a = runner.run(CFG, "reference/solver", db_path=db, name="smollm2 24").run_id
    out = tmp_path / "e.csv"
    export_run(db, a, out)
    df = pd.read_csv(out)
    df.loc[0, "response"] = "<answer>{}</answer>"
    df["name"] = "uploaded copy"
    df.to_csv(out, index=False)
    imp = import_results(db, out.read_bytes(), "e.csv")[0]
    assert imp.startswith("import-")

    runs = open_page("pages/runs.py", {"run": imp})
    assert runs.subheader[0].value == "Run uploaded copy"
    table = runs.dataframe[0]
    assert "run_id" in table.value.columns                  # kept for the selection …
    assert not [c for d in runs.dataframe for c in _shown(d) if IDS.search(c)]   # … not shown, nor in the items

    res = open_page("pages/results.py", {"runs": f"{a},{imp}", "view": "drilldown"})
    items = next(d for d in res.dataframe if "prompt" in d.value.columns)
    assert {"run_id", "config_id"} <= set(items.value.columns) and "run" in _shown(items)
    assert set(items.value["run"]) == {"smollm2 24", "uploaded copy"}
    assert not [c for d in res.dataframe for c in _shown(d) if IDS.search(c)]

    cmp_ = open_page("pages/compare.py", {"runs": f"{a},{imp}"})
    assert not [t for t in _texts(cmp_) if IDS.search(t)], [t for t in _texts(cmp_) if IDS.search(t)]
    assert not [c for d in cmp_.dataframe for c in _shown(d) if IDS.search(c)]
    split = cmp_.selectbox(key="cmp_x")
    assert "|A| = |B|" in split.options and "|B|" not in split.options, split.options
    aligned = next(c.value for c in cmp_.caption if c.value.startswith("Aligned on"))
    assert "|A| = |B|" in aligned and not re.search(r"(: |, )\|B\|", aligned), aligned
