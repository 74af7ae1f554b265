"""The Explorer's HTTP route (headscope/ui/explorer_route.py), through Starlette's TestClient: the
answer to a typed sentence is the data the page's own run sends for it (same maps, same
sentence key, which is what lets the component skip drawing them twice), the tokens are the
tokenizer's, and every text, model or body the route must not answer is declined with a status,
never a traceback."""

import json

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from headscope.ui import explorer_route, models
from headscope.ui.guards import MAX_CHARS
from testkit.payloads import unpack_rows

NAME = models.BUNDLED


@pytest.fixture(scope="module")
def client():
    served = list(explorer_route._SERVED)
    try:
        app = Starlette(routes=explorer_route.routes())
        assert models.get_bert(NAME)[0] is not None  # what the page does first: load it
        yield TestClient(app)
    finally:
        explorer_route._SERVED[:] = served  # other tests' pages: no route, as under AppTest


def post(client, body, **kw):
    return client.post("/" + explorer_route.PATH, content=json.dumps(body),
                       headers={"Content-Type": "application/json", **kw.pop("headers", {})},
                       **kw)


def test_the_answer_is_the_pages_data_for_that_sentence(client, bundled):
    text = "The nurse carried warm blankets."
    r = post(client, {"model": NAME, "text": text, "pair": None})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    got = r.json()
    assert got["sentence"] == [NAME, text, None]  # the page's own: tests/app/test_explorer_page
    assert got["tokens"] == bundled.encode(text).tokens  # the tokenizer's own tokens
    assert got["tag"] == f"{len(got['tokens'])} tokens"
    assert got["meta"] == {"model": NAME, "text": text}  # the figures' caption: this sentence


def test_the_answers_weights_are_the_models(client, bundled):
    """Independent of the route's code: the weights read back from the answer as the browser
    reads them (testkit.payloads) are Model.attend's, within the 16-bit levels."""
    text = "Birds fly south."
    got = post(client, {"model": NAME, "text": text, "pair": None}).json()
    att = bundled.attend(text).attentions.numpy()  # (L, H, T, T)
    maps = unpack_rows(got, "maps")  # (L, H + 1, T, T): every layer's heads, then the summed head
    assert got["sent"] == list(range(att.shape[0]))
    np.testing.assert_allclose(maps[:, :-1], att, atol=2e-4)


def test_a_pair_is_answered_as_the_page_reads_it(client):
    r = post(client, {"model": NAME, "text": "Where is it?", "pair": "It is here."})
    assert r.status_code == 200
    assert r.json()["sentence"] == [NAME, "Where is it?", "It is here."]
    assert "[SEP]" in r.json()["tokens"][1:-1]  # the pair's own separator inside


@pytest.mark.parametrize("text", ["", "   ", "\u200b", "x" * (MAX_CHARS + 1),
                                  "word " * 200])  # empty, blank, only dropped, cut, long
def test_texts_the_page_must_explain_are_left_to_it(client, text):
    r = post(client, {"model": NAME, "text": text, "pair": None})
    assert r.status_code == explorer_route.DECLINED == 204 and not r.content


def test_only_a_loaded_model_the_operator_named(client):
    assert post(client, {"model": "bert-base-uncased", "text": "Hi.", "pair": None}) \
        .status_code == 404  # not offered
    assert post(client, {"model": "../../etc/passwd", "text": "Hi.", "pair": None}) \
        .status_code == 404


@pytest.mark.parametrize("body", [[], {"text": "Hi."}, {"model": NAME},
                                  {"model": NAME, "text": 3, "pair": None},
                                  {"model": NAME, "text": "Hi.", "pair": ["x"]}])
def test_malformed_requests_get_a_status(client, body):
    assert post(client, body).status_code == 400


def test_a_client_asking_faster_than_one_thread_answers_is_declined(client, monkeypatch):
    monkeypatch.setattr(explorer_route, "_waiting", [explorer_route.MAX_WAITING + 1])
    r = post(client, {"model": NAME, "text": "A queue of requests.", "pair": None})
    assert r.status_code == 204


def test_not_json_nor_too_big(client):
    r = client.post("/" + explorer_route.PATH, content="{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415  # a page of another site cannot send JSON without a preflight
    for body in ("{", "[" * 50_000 + "]" * 50_000):  # broken; nested past Python's recursion
        r = client.post("/" + explorer_route.PATH, content=body, headers={
            "Content-Type": "application/json"})
        assert r.status_code == 400
    big = json.dumps({"model": NAME, "text": "x" * explorer_route.MAX_BODY, "pair": None})
    r = client.post("/" + explorer_route.PATH, content=big,
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.get("/" + explorer_route.PATH).status_code == 405


def test_the_path_follows_the_servers_base_path(client, monkeypatch):
    from streamlit import config

    monkeypatch.setattr(config, "get_option", lambda key: "/class/" if key ==
                        "server.baseUrlPath" else None)
    assert explorer_route.url() == "/class/_headscope/explorer"


def test_no_route_no_fast_path():
    """Where the route is not served (AppTest, the frame run alone), the page offers none."""
    served = list(explorer_route._SERVED)
    explorer_route._SERVED.clear()
    try:
        assert explorer_route.url() is None
    finally:
        explorer_route._SERVED[:] = served
