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
