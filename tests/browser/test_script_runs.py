"""What app.py installs around script runs, on a real server: with the run slot
(ui.budget.run_slot), two sessions' runs at once take turns. No browser: a server process and
the protocol client's websockets."""

import asyncio
from pathlib import Path

import pytest

from testkit.protocol import Session, run_async
from testkit.server import start_app, stop_app


@pytest.fixture
def runs_app(tmp_path):
    stamps = tmp_path / "stamps.txt"
    proc, url = start_app(tmp_path / "streamlit.log", script=Path(__file__).with_name(
        "script_runs_app.py"), env_extra={"HEADSCOPE_RUN_STAMPS_FILE": str(stamps)})
    yield url, stamps
    stop_app(proc)


async def two_runs_at_once(url: str):
    first = Session(url, cookie="warm")
    await first.connect()
    await first.rerun(query="")  # the process's first run installs the slot
    await first.close()
    sessions = [Session(url, cookie=f"run-{k}") for k in "ab"]
    for s in sessions:
        await s.connect()
    runs = await asyncio.gather(*(s.rerun(query=f"stamp={k}")
                                  for s, k in zip(sessions, "ab")))
    for s in sessions:
        await s.close()
    return runs


def test_two_sessions_runs_take_turns(runs_app):
    url, stamps = runs_app
    runs = run_async(two_runs_at_once(url))
    assert all(r.status == 0 and not r.error for r in runs), runs
    at = {}
    for line in stamps.read_text().splitlines():
        what, who, t = line.split()
        at[what, who] = float(t)
    a, b = (at["start", "a"], at["end", "a"]), (at["start", "b"], at["end", "b"])
    first, second = sorted([a, b])
    assert second[0] >= first[1], f"the runs overlapped: {a} {b}"
