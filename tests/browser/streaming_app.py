"""A test script for tests/browser/test_script_streaming.py: a long run (half a second of work,
then elements written quickly), whose last element waits for the test to have seen the first
ones while the run still goes on."""

import os
import time

import streamlit as st

from ui.st_internals import batch_script_events

batch_script_events()  # as app.py does: from the next run on (a run's events are handed over
# by the session it started with)
if "wait" not in st.query_params:
    st.stop()
flag = os.environ["HEADSCOPE_STREAM_FLAG"]
time.sleep(0.5)  # a long run's first part (the run's start has been handed over meanwhile)
for i in range(30):
    st.markdown(f"element {i}")
deadline = time.monotonic() + 30
while not os.path.exists(flag) and time.monotonic() < deadline:  # the test touches it
    time.sleep(0.05)
st.markdown("seen while running" if os.path.exists(flag) else "never seen while running")
