"""AppTest for pages/embeddings.py (STUDIO_DB under tmp_path)."""

import sys

import pytest

from tests.support import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def app(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    at.switch_page("pages/embeddings.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at) -> str:
    return "\n".join(str(m.value) for m in list(at.markdown) + list(at.info) + list(at.error) + list(at.caption))


def test_page_loads_with_demo_counts(app):
    assert "639 samples: 71 overlap, 426 difference, 142 union" in _text(app)
    assert "press **Compute**" in _text(app)
    assert app.button(key="emb_compute") is not None


def test_pasted_csv_is_validated_with_a_clear_error(app):
    app.radio(key="emb_source").set_value("Paste CSV").run()
    app.text_area(key="emb_paste").input("s_prev,s_curr,s_next\na,b,c\n").run()
    assert not app.exception
    assert any("missing column(s) s1, s2" in e.value for e in app.error)
    app.text_area(key="emb_paste").input("operator,a,b,target\noverlap,x y,y z,y\nunion,a,b,a b\n").run()
    assert not app.error and "2 samples: 1 overlap, 0 difference, 1 union" in _text(app)


def _three_demo_tuples() -> str:
    import io

    from core.embeddings.samples import load_demo, write_tuples

    buf = io.StringIO()
    write_tuples(load_demo()[:3], buf)
    return buf.getvalue()


@pytest.mark.slow
def test_compute_minilm_and_local_then_drill_down(app):
    """Both offline encoders for real, on three demo tuples pasted as CSV (27 samples) to keep the test short."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("llama_cpp")
    app.radio(key="emb_source").set_value("Paste CSV").run()
    app.text_area(key="emb_paste").input(_three_demo_tuples()).run()
    assert "27 samples: 3 overlap, 18 difference, 6 union" in _text(app)
    app.multiselect(key="emb_encoders").set_value(["minilm", "local"]).run()
    app.button(key="emb_compute").click().run()
    assert not app.exception, app.exception
    assert not app.error
    headline = app.dataframe[0].value
    assert list(headline["encoder"]) == ["SBERT-mini (all-MiniLM-L6-v2)", "SmolLM2-135M (llama.cpp, mean pooling)"]
    assert headline["C1 both (ε=0)"].between(0, 100).all()
    c1 = app.dataframe[1].value
    assert "SBERT-mini" in set(c1["encoder"]) and {"TT", "TF", "FT", "FF"} <= set(c1.columns)
    assert len(app.get("plotly_chart")) >= 2
    app.selectbox(key="emb_measure").set_value("ned").run()
    app.selectbox(key="emb_drill_op").set_value("difference").run()
    app.selectbox(key="emb_drill_sample").set_value("d002#3").run()
    assert not app.exception
    assert any("((S1" in m.value or "(S1,S2)" in m.value for m in app.markdown)


@pytest.mark.slow
def test_fuse_triples_with_the_embedded_model(app):
    pytest.importorskip("llama_cpp")
    app.radio(key="emb_source").set_value("Fuse triples with a model").run()
    assert any("Paste triples" in i.value for i in app.info)
    app.text_area(key="emb_triples").input(
        "s_prev,s_curr,s_next\nThe bus was late.,We walked to school in the rain.,Our shoes were soaked.\n").run()
    app.button(key="emb_fuse_go").click().run()
    assert not app.exception, [e.value for e in app.exception]
    fused = app.dataframe[0].value
    assert list(fused.columns[:2]) == ["id", "S1"] and fused["S1 words / budget"][0].endswith("/5")
    if fused["S1"][0] and fused["S2"][0]:
        assert "9 samples: 1 overlap, 6 difference, 2 union" in _text(app)


# ------------------------------------------------------------------------ results kept in the store (issue 22)
def _open(query: dict | None = None):
    """A fresh browser session (no session state) opening the Embeddings page at a URL."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    at.switch_page("pages/embeddings.py")
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _store_demo_result(db, encoder: str = "minilm", diff_max_cos=None) -> dict:
    """A result of the demo set computed earlier (by core, with a transparent stand-in encoder whose numbers are
    not MiniLM's: whatever the page shows of it can only have come from the store)."""
    from core.embeddings import results_store
    from core.embeddings.pipeline import score
    from core.embeddings.samples import build_samples, load_demo
    from tests.embeddings.test_embeddings_pipeline import BagOfWords

    tuples = load_demo()
    samples = build_samples(tuples)
    res = score(samples, BagOfWords([t for s in samples for t in (s.a, s.b, s.target)]), tuples=tuples,
                source="demo", use_cache=False, diff_max_cos=diff_max_cos, db_path=db)
    settings = results_store.settings_for(encoder, samples, tuples, diff_max_cos=diff_max_cos)
    results_store.save(settings, res.report, res.rows, data_label="demo set", db_path=db)
    return res.report


@pytest.fixture
def db(tmp_path, monkeypatch):
    import streamlit as st

    path = tmp_path / "studio.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def test_a_stored_result_comes_back_in_a_fresh_session_with_the_urls_settings(db):
    report = _store_demo_result(db)
    url = {"enc": "minilm", "measure": "ned", "eps": "0.05", "op": "difference", "angle": "angle_a"}
    at = _open(url)
    assert not at.error
    assert "press **Compute**" not in _text(at)            # shown without computing
    assert any("Stored results of these settings" in c.value for c in at.caption)
    assert at.selectbox(key="emb_measure").value == "ned" and at.selectbox(key="emb_eps").value == "0.05"
    assert at.selectbox(key="emb_drill_op").value == "difference" and at.radio(key="emb_angle").value == "angle_a"
    head = at.dataframe[0].value
    assert list(head["encoder"]) == ["SBERT-mini (all-MiniLM-L6-v2)"]
    assert head["C1 both (ε=0)"].iloc[0] == round(report["C1_both_cosine_eps0"], 2)
    c1 = at.dataframe[1].value
    ours = c1[c1["source"] == "this run"].iloc[0]
    assert float(ours["TT"]) == round(report["C1_TT_ned_eps0.05"], 2)      # the URL's measure and ε, stored numbers
    drill = next(d.value for d in at.dataframe if "sample_id" in d.value.columns)
    assert set(drill["operator"]) == {"difference"}                       # the URL's operator in Samples
    for k, v in url.items():                                 # the URL the page writes keeps them
        assert at.query_params[k] == v


def test_other_settings_are_another_result(db):
    _store_demo_result(db)
    at = _open({"enc": "minilm", "filter": "1"})             # the paper's filter: another result, none stored
    assert at.checkbox(key="emb_filter").value is True
    assert "press **Compute**" in _text(at) and not at.dataframe
    at.checkbox(key="emb_filter").uncheck().run()            # back to the stored settings: shown again
    assert not at.exception and "press **Compute**" not in _text(at) and at.dataframe
    assert "filter" not in at.query_params


@pytest.mark.slow
def test_computed_on_the_page_then_shown_again_after_a_reload(db):
    """The page's own Compute stores the result: a fresh session choosing the same data and encoder shows it
    without computing (the Compute button is not pressed the second time)."""
    pytest.importorskip("sentence_transformers")
    text = _three_demo_tuples()
    at = _open({"enc": "minilm"})
    at.radio(key="emb_source").set_value("Paste CSV").run()
    at.text_area(key="emb_paste").input(text).run()
    at.button(key="emb_compute").click().run()
    assert not at.exception and not at.error
    first = at.dataframe[0].value
    assert at.query_params["src"] == "paste"
    again = _open({k: v for k, v in at.query_params.items()})
    assert again.radio(key="emb_source").value == "Paste CSV"
    again.text_area(key="emb_paste").input(text).run()       # a paste is not in the URL: the same text again
    assert not again.exception and "press **Compute**" not in _text(again)
    assert again.dataframe[0].value.equals(first)
