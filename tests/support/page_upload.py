"""Upload a file to the Runs page's YAML uploader under Streamlit's AppTest and print what the page shows, as one
JSON line: {"errors": [...], "successes": [...], "exceptions": [...]}. Run as a subprocess by tests that put the
dashboard under a memory limit (``resource.setrlimit`` in the child, not in the test process).

    python -m tests.support.page_upload FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    from streamlit.testing.v1 import AppTest

    path = Path(argv[0])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/runs.py")
    at.run()
    at.file_uploader(key="runs_yaml").set_value((path.name, path.read_bytes(), "application/x-yaml"))
    at.run()
    print(json.dumps({"errors": [e.value for e in at.error], "successes": [s.value for s in at.success],
                      "exceptions": [str(e.value) for e in at.exception]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
