"""One app process of `headscope serve`: deploy/serve_many.py runs `python -m headscope.worker`
with Streamlit's options, i.e. `headscope run`."""

import sys

from headscope.cli import run

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
