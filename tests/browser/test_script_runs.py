"""What app.py installs around script runs, on a real server. Batched script events
(ui.st_internals.batch_script_events): a run's elements reach the browser in the order the
script wrote them, and while a long run goes on (a batch is held at most HOLD_SECONDS, never
until the end). The run slot (ui.budget.run_slot): two sessions' runs at once take turns. No
browser: a server process and the protocol client's websocket."""

import asyncio
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from testkit.protocol import Session
from testkit.server import start_app, stop_app


@pytest.fixture
def runs_app(tmp_path):
    flag = tmp_path / "seen"
    proc, url = start_app(tmp_path / "streamlit.log", script=Path(__file__).with_name(
        "script_runs_app.py"), env_extra={"HEADSCOPE_STREAM_FLAG": str(flag)})
    yield url, flag
    stop_app(proc)


async def watch(url: str, flag: Path) -> tuple[list, bool]:
    """Run the script twice, watching the second run (the first installs the batching); touch
    `flag` on the first element received; return every markdown text in the order received,
    and whether the flag was touched before the run finished."""
    s = Session(url, cookie="streaming")
    await s.connect()
    try:
        await s.rerun(query="")
        msg = BackMsg()
        msg.rerun_script.query_string = "wait=1"
        await s.ws.send(msg.SerializeToString())
        texts, touched_early = [], False
        while True:
            _, fm = await asyncio.wait_for(s.inbox.get(), 60)
            assert fm is not None, "the server closed the connection"
            kind = fm.WhichOneof("type")
            if kind == "script_finished":
                return texts, touched_early
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                if el.WhichOneof("type") == "markdown":
                    texts.append(el.markdown.body)
                    if not flag.exists():
                        flag.touch()
                        touched_early = True
    finally:
        await s.close()


def test_elements_arrive_in_order_and_while_the_run_goes_on(runs_app):
    url, flag = runs_app
    texts, touched_early = asyncio.run(watch(url, flag))
    assert touched_early
    assert texts == [f"element {i}" for i in range(30)] + ["seen while running"], texts


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
    url, flag = runs_app
    runs = asyncio.run(two_runs_at_once(url))
    assert all(r.status == 0 and not r.error for r in runs), runs
    at = {}
    for line in Path(str(flag) + ".stamps").read_text().splitlines():
        what, who, t = line.split()
        at[what, who] = float(t)
    a, b = (at["start", "a"], at["end", "a"]), (at["start", "b"], at["end", "b"])
    first, second = sorted([a, b])
    assert second[0] >= first[1], f"the runs overlapped: {a} {b}"
