"""`make run`'s entry point: `headscope run`, i.e. `streamlit run app.py` with the bundled model
loading meanwhile (headscope/cli.py), run from the checkout without installing it.

    .venv/bin/python serve.py [--server.port 8501 ...]
"""

import sys

from headscope.cli import run

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
