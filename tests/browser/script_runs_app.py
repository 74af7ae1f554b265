"""A test script for tests/browser/test_script_runs.py, installing what the frame installs around
script runs (one script run at a time per worker), by each run as headscope/frame/app.py does.
?hooks=1: whether it is in place. ?count=N: N markdown elements,
numbered. ?wait=1: a long run (half a second of work, then elements written quickly) whose last
element waits for the test to have seen the first ones while the run still goes on. ?stamp=NAME: a
run of 0.4 s that notes when it starts and ends."""

import os
import time

import streamlit as st

from headscope.ui import budget

budget.slot_script_runs()  # from the next run on (the first run is already running)
q = st.query_params
if "stamp" in q:
    with open(os.environ["HEADSCOPE_RUN_STAMPS_FILE"], "a") as f:
        f.write(f"start {q['stamp']} {time.monotonic()}\n")
    time.sleep(0.4)  # work that lets the GIL go: without a slot, two runs overlap
    with open(os.environ["HEADSCOPE_RUN_STAMPS_FILE"], "a") as f:
        f.write(f"end {q['stamp']} {time.monotonic()}\n")
elif "hooks" in q:  # what the frame's installer put in place, as this server runs
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    st.markdown(f"slotted {hasattr(ScriptRunner._run_script, '__wrapped__')}")
elif "count" in q:
    for i in range(int(q["count"])):
        st.markdown(f"element {i}")
        time.sleep(0.002)  # a run's work between its elements
elif "wait" in q:
    flag = os.environ["HEADSCOPE_STREAM_FLAG"]
    time.sleep(0.5)  # a long run's first part (the run's start has been handed over meanwhile)
    for i in range(30):
        st.markdown(f"element {i}")
    deadline = time.monotonic() + 30
    while not os.path.exists(flag) and time.monotonic() < deadline:  # the test touches it
        time.sleep(0.05)
    st.markdown("seen while running" if os.path.exists(flag) else "never seen while running")
