"""One app process of `headscope serve` (deploy/serve_many.py runs it with serve.py's arguments):
`headscope run` with Streamlit's options."""

import sys

from headscope.cli import run

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
