"""SetLexSem Studio core: tasks, prompts, parsing, models, runner, store, analysis.

Everything here is usable without Streamlit; the dashboard pages only call into it.
"""

__version__ = "0.1.0"
