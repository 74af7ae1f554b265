"""Batched script events (ui.st_internals.batch_script_events) on a real server: a run's
elements reach the browser in the order the script wrote them, and while a long run goes on
(a batch is held at most HOLD_SECONDS, never until the end). No browser: a server process and
the protocol client's websocket."""

import asyncio
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from testkit.protocol import Session
from testkit.server import start_app, stop_app


@pytest.fixture
def streaming_app(tmp_path):
    flag = tmp_path / "seen"
    proc, url = start_app(tmp_path / "streamlit.log", script=Path(__file__).with_name(
        "streaming_app.py"), env_extra={"HEADSCOPE_STREAM_FLAG": str(flag)})
    yield url, flag
    stop_app(proc)


async def watch(url: str, flag: Path) -> tuple[list, bool]:
    """Run the script twice, watching the second run (the first installs the batching); touch `flag` on the first element received; return every markdown
    text in the order received, and whether the flag was touched before the run finished."""
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


def test_elements_arrive_in_order_and_while_the_run_goes_on(streaming_app):
    url, flag = streaming_app
    texts, touched_early = asyncio.run(watch(url, flag))
    assert touched_early
    assert texts == [f"element {i}" for i in range(30)] + ["seen while running"], texts
