"""SetLexSem Studio — Streamlit entry point (navigation and the home page)."""

import streamlit as st

st.set_page_config(page_title="SetLexSem Studio", layout="wide")
st.title("SetLexSem Studio")
st.write("Does a language model reason about sets consistently, whatever the surface of the input?")
