"""The protocol client of bench/class_protocol.py against a real app server: a handful of
students at once, each action ending with script_finished, and the values each student sent
reaching the app (the tokens the app drew are transformers' tokens of the sentence that student
typed; in the Head lab, one student's head
switched off is counted). No browser: a server process and websockets."""

import asyncio
from urllib.parse import urlencode

import pytest
from transformers import AutoTokenizer

from mha_core.loading import bundled_dir
from testkit.protocol import Session, multiselect_value, run_async, text_value

SENTENCES = ["A quiet river runs past the old mill.",
             "Why do birds sing so loudly at dawn in spring?",
             "The painter carried her easel up the hill.",
             "Four students share one laptop in the library."]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(bundled_dir()))


def tokens_of(tokenizer, text):
    return tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])


async def one_student(url, i, tokenizer):
    s = Session(url, cookie=f"test-student-{i}")
    await s.connect()
    runs = []
    try:
        link_text = f"Student {i} opened the shared link."
        runs.append(await s.rerun(query=urlencode({"text": link_text})))
        assert runs[-1].components["ex_view"]["tokens"] == tokens_of(tokenizer, link_text)
        runs.append(await s.rerun({"text": text_value(SENTENCES[i])}))
        expected = tokens_of(tokenizer, SENTENCES[i])
        assert runs[-1].components["ex_view"]["tokens"] == expected
        # a layer move is drawn in the browser: the server hears of the view only from a link
        runs.append(await s.rerun(query=urlencode({"text": link_text, "layer": 5 - i % 3})))
        assert runs[-1].components["ex_view"]["tokens"] == expected  # the session's text kept
        if i == 0:  # one student: the Head lab ranks every head of a new sentence (146 passes)
            runs.append(await s.rerun(page="head_lab"))
            runs.append(await s.rerun({"hl_heads": multiselect_value(["L2 H3"])}))
    finally:
        await s.close()
    return runs


def test_students_reach_the_app(app_url, tokenizer):
    async def everyone():
        return await asyncio.gather(*(one_student(app_url, i, tokenizer)
                                      for i in range(len(SENTENCES))))

    everyone_runs = run_async(everyone())
    for i, runs in enumerate(everyone_runs):
        assert len(runs) == (5 if i == 0 else 3)
        for k, run in enumerate(runs):
            assert run.error == "" and run.exceptions == []
            # script_finished: 0 the whole app finished; 3 the Explorer's own rerun (a new
            # sentence), never an error or a superseded run
            assert run.status == (3 if k == 1 else 0)
    head_lab = everyone_runs[0]
    assert head_lab[-2].metrics["Heads switched off"] == "0 of 72"
    assert head_lab[-1].metrics["Heads switched off"] == "1 of 72"  # the head it chose



def test_a_new_sentence_reruns_the_explorer_alone(app_url, tokenizer):
    """On the Explorer a new sentence reruns the page's fragment only (script_finished 3): no
    sidebar, navigation, frame or start-card frame element is sent again, yet the maps, the
    start card's answers and the address bar follow the sentence. On another page it reruns
    the whole app."""
    from urllib.parse import parse_qs

    async def student():
        s = Session(app_url, cookie="test-fragment")
        await s.connect()
        try:
            first = await s.rerun(query="")  # a first visit: the start card is open
            runs = [first]
            for text in SENTENCES[:2]:
                runs.append(await s.rerun({"text": text_value(text)}))
            blank = await s.rerun({"text": text_value("  ")})
            runs.append(await s.rerun({"text": text_value(SENTENCES[1])}))
            runs.append(await s.rerun(page="head_view"))
            runs.append(await s.rerun({"text": text_value(SENTENCES[3])}))
            return runs, blank
        finally:
            await s.close()

    (first, *typed, again, other_page, other_typed), blank = run_async(student())
    # text it cannot show: the parts end with their message, no traceback, nothing stale below
    assert blank.status == 3 and blank.exceptions == [] and "ex_view" not in blank.components
    assert not {key for _, key in blank.elements if key.startswith("ex_")}
    assert again.status == 3 and ("selectbox", "ex_mask") in {(t, k[:7]) for t, k in
                                                              again.elements}
    assert first.status == 0 and ("selectbox", "model") in first.elements
    for text, run in zip(SENTENCES[:2], typed):
        assert run.error == "" and run.exceptions == [] and run.status == 3
        assert run.components["ex_view"]["tokens"] == tokens_of(tokenizer, text)
        keys = {key for _, key in run.elements if key}
        # the start card's answers follow the sentence; its frame (Close, the tabs' links) is
        # not sent again, nor is the sidebar
        n = len(tokens_of(tokenizer, text))
        assert any(f"numbers for {n} tokens" in body for body in run.markdown), run.markdown
        assert not keys & {"start_close", "model", "text", "pair", "preset", "present_toggle"}
        assert "page_link" not in {t for t, _ in run.elements}
        assert parse_qs(run.query)["text"] == [text]
    assert typed[0].messages < first.messages
    assert other_page.status == 0 and other_typed.status == 0  # the head view: whole runs
    assert other_typed.components["hv_lines"]["tokens"] == tokens_of(tokenizer, SENTENCES[3])
