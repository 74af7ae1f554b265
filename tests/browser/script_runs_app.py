"""A test script for tests/browser/test_script_runs.py, installing what app.py installs around
script runs (one run at a time per worker): ?stamp=NAME is a run of 0.4 s that notes when it
starts and ends."""

import os
import time

import streamlit as st

from ui import budget

budget.slot_script_runs()  # from the next run on (this one is already running)
stamps = os.environ["HEADSCOPE_RUN_STAMPS_FILE"]
if "stamp" in st.query_params:
    with open(stamps, "a") as f:
        f.write(f"start {st.query_params['stamp']} {time.monotonic()}\n")
    time.sleep(0.4)  # work that lets the GIL go: without a slot, two runs overlap
    with open(stamps, "a") as f:
        f.write(f"end {st.query_params['stamp']} {time.monotonic()}\n")
