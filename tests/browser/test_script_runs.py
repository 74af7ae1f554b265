"""What the frame (headscope/frame/app.py) installs around script runs, on a real server, and what
it relies on Streamlit for. A run's elements reach the browser in the order the script wrote them,
and while a long run goes on; sessions whose first runs install the run slot together each get
every element. The run slot (headscope.ui.budget.run_slot): two sessions' runs at once take
turns. No browser: a server process and the protocol client's websockets."""

import asyncio
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from testkit.protocol import Session, run_async
from testkit.server import start_app, stop_app


@pytest.fixture
def runs_app(tmp_path):
    stamps, flag = tmp_path / "stamps.txt", tmp_path / "seen"
    proc, url = start_app(tmp_path / "streamlit.log", script=Path(__file__).with_name(
        "script_runs_app.py"), env_extra={"HEADSCOPE_RUN_STAMPS_FILE": str(stamps),
                                          "HEADSCOPE_STREAM_FLAG": str(flag)})
    yield url, stamps, flag
    stop_app(proc)


async def send_rerun(s: Session, query: str):
    msg = BackMsg()
    msg.rerun_script.query_string = query
    await s.ws.send(msg.SerializeToString())


async def markdown_until_finished(s: Session, on_text=lambda: None) -> tuple[list, int]:
    """Every markdown text the session receives until a script_finished, in the order received
    (on_text() after each), and that script_finished's status."""
    texts = []
    while True:
        _, fm = await asyncio.wait_for(s.inbox.get(), 60)
        assert fm is not None, "the server closed the connection"
        kind = fm.WhichOneof("type")
        if kind == "script_finished":
            return texts, fm.script_finished
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            el = fm.delta.new_element
            if el.WhichOneof("type") == "markdown":
                texts.append(el.markdown.body)
                on_text()


async def watch(url: str, flag: Path) -> tuple[list, bool]:
    """Run the script twice, watching the second run (the first installs the slot); touch
    `flag` on the first element received; return every markdown text in the order received,
    and whether the flag was touched before the run finished."""
    s = Session(url, cookie="streaming")
    await s.connect()
    try:
        await s.rerun(query="")
        await send_rerun(s, "wait=1")
        touched = []

        def touch():
            if not flag.exists():
                flag.touch()
                touched.append(True)

        texts, _ = await markdown_until_finished(s, touch)
        return texts, bool(touched)
    finally:
        await s.close()


def test_elements_arrive_in_order_and_while_the_run_goes_on(runs_app):
    url, _, flag = runs_app
    texts, touched_early = run_async(watch(url, flag))
    assert touched_early
    assert texts == [f"element {i}" for i in range(30)] + ["seen while running"], texts


async def first_runs_at_once(url: str, n: int) -> list:
    sessions = [Session(url, cookie=f"first-{i}") for i in range(n)]
    for s in sessions:
        await s.connect()

    async def first_runs(s):  # the first (before the slot is in place), then a second one
        await send_rerun(s, "count=40")
        first = await markdown_until_finished(s)
        await send_rerun(s, "count=40")
        return first, await markdown_until_finished(s)

    try:
        return await asyncio.gather(*(first_runs(s) for s in sessions))
    finally:
        for s in sessions:
            await s.close()


def test_sessions_opening_together_on_a_fresh_server_get_every_element(runs_app):
    """Their first runs install the slot at the same moment (installed twice, the slot leaked;
    a session must still get every element of each run, and its end after them)."""
    url, _, _ = runs_app
    for runs in run_async(first_runs_at_once(url, 6)):
        for texts, status in runs:
            assert status == 0 and texts == [f"element {i}" for i in range(40)], (status, texts)


async def hooks_after_a_run(url: str) -> list:
    s = Session(url, cookie="hooks")
    await s.connect()
    try:
        await s.rerun(query="")  # the first run of the process installs them
        await send_rerun(s, "hooks=1")
        return (await markdown_until_finished(s))[0]
    finally:
        await s.close()


def test_the_first_run_installs_the_slot(runs_app):
    """The tests above would pass with a hook whose guard failed and was never installed."""
    url, _, _ = runs_app
    assert run_async(hooks_after_a_run(url)) == ["slotted True"]


async def two_runs_at_once(url: str):
    first = Session(url, cookie="warm")
    await first.connect()
    await first.rerun(query="")  # the first run of the process installs the slot
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
    url, stamps, _ = runs_app
    runs = run_async(two_runs_at_once(url))
    assert all(r.status == 0 and not r.error for r in runs), runs
    at = {}
    for line in stamps.read_text().splitlines():
        what, who, t = line.split()
        at[what, who] = float(t)
    a, b = (at["start", "a"], at["end", "a"]), (at["start", "b"], at["end", "b"])
    first, second = sorted([a, b])
    assert second[0] >= first[1], f"the runs overlapped: {a} {b}"
