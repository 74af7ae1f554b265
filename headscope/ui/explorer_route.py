"""The Explorer's maps for a typed sentence over HTTP: the first answer to Enter.

When the reader presses Enter in the sentence box, the attention component holds the key press
back, asks this route for the new sentence's maps (POST {model, text, pair}), draws them, and
then hands the key press on to Streamlit, whose rerun brings the rest of the page (the masked
word, the start card's answers, the address bar) and the same maps, which the component adopts
without drawing again (sentence.js, explorer.js). The route and the rerun read one cache
(explorer_cache.explorer_data, per model and sentence), so the sentence is still run once: the
rerun finds it there. Streamlit's own path stays the whole answer wherever this one declines
(status 204: a text the page must explain, empty, cut, long or unreadable) or is not asked: a
model not loaded, AppTest, a server started without the route (the frame alone).

Served by st.App's routes (headscope/frame/headscope_asgi.py): public Streamlit API, no patch.
Bounded as a script run is: a short text only (budget.LONG_TOKENS tokens at most), a body of
at most MAX_BODY bytes, a model the operator named and the page already loaded, the same cache,
and one thread of its own per worker (_COMPUTE) with a short queue (MAX_WAITING: beyond it,
the page's run answers). Behind nginx the route is one more path of the
same worker (the affinity cookie travels with the request), so the rerun finds the route's
result in that worker's cache.
"""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from streamlit import config

from .guards import MAX_CHARS

PATH = "_headscope/explorer"  # under server.baseUrlPath
MAX_BODY = 8 * MAX_CHARS + 1024  # two boxes of MAX_CHARS characters, JSON-escaped UTF-8
_SERVED = []  # [True] once this process serves the route (routes())


def url() -> str | None:
    """The route's path as the browser asks for it, or None where it is not served."""
    if not _SERVED:
        return None
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/{PATH}" if base else f"/{PATH}"


DECLINED = 204  # no content: the page's own run answers (no error in the browser's console)


def answer(model, text, pair) -> tuple[int, dict | None]:
    """(HTTP status, body): 200 and the component's data (explorer_cache.explorer_data, with
    the sentence it is for); DECLINED for a text the page must explain; 400 or 404 for what no
    page of this app asks (not strings, a model not offered or not loaded)."""
    from . import budget, models
    from .explorer_cache import explorer_data, named
    from .layers import default_layer

    if not isinstance(model, str) or not isinstance(text, str) \
            or not isinstance(pair, (str, type(None))):
        return 400, {"error": "model and text are strings, pair a string or null"}
    bert = models.loaded(model)
    if bert is None:
        return 404, {"error": "no such model loaded"}
    pair = pair if pair and bert.config.takes_pairs else None  # as sidebar.current_pair
    if not text.strip() or len(text) > MAX_CHARS or len(pair or "") > MAX_CHARS:
        return DECLINED, None  # empty, blank or cut: the page says so
    try:
        facts = models.text_facts(model, text, pair)
        if facts["a_blank"] or facts["only_special"] or budget.is_long(bert, text, pair):
            return DECLINED, None  # nothing to show, or long: the page's run (its slot, spinner)
        data = explorer_data(model, text, pair, default_layer(model), ())
    except Exception:  # the page's own run shows the message
        return DECLINED, None
    if len(data["sent"]) != data["layers"]:  # one layer of a long text: the page's run chooses
        return DECLINED, None
    return 200, dict(data, **named(model, text, pair, len(data["tokens"])))


# One thread per worker computes the route's answers, one at a time: beside the worker's one
# script run at a time (budget.run_slot), at most two threads compute at once. Not the server's
# own thread pool (anyio's, which Streamlit's server uses too), so a queue of answers never
# holds a thread the server needs for its own requests.
_COMPUTE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="headscope-route")
MAX_WAITING = 2  # answers queued beyond the one computing: declined (the page's run answers)
_waiting = [0]  # answers queued or computing (the event loop's alone: no lock)


async def _explorer(request):
    """POST {model, text, pair} -> the maps' JSON (answer)."""
    from starlette.responses import JSONResponse, Response

    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        # JSON only: a page of another site cannot then send one without a preflight, which
        # this server does not answer (no CORS)
        return JSONResponse({"error": "Content-Type: application/json"}, status_code=415)
    size = request.headers.get("content-length")
    if size is None or not size.isdigit() or int(size) > MAX_BODY:
        return JSONResponse({"error": f"a body of at most {MAX_BODY} bytes"}, status_code=413)
    try:
        asked = json.loads(await request.body())
        args = (asked["model"], asked["text"], asked.get("pair"))
    except Exception:  # not JSON, not an object, keys missing, nested past Python's recursion
        return JSONResponse({"error": "a JSON object {model, text, pair}"}, status_code=400)
    if _waiting[0] > MAX_WAITING:  # a client asking faster than one thread answers
        status, body = DECLINED, None
    else:
        _waiting[0] += 1
        try:
            status, body = await asyncio.get_running_loop().run_in_executor(
                _COMPUTE, answer, *args)
        finally:
            _waiting[0] -= 1
    return Response(None if body is None else json.dumps(body), status_code=status,
                    media_type=None if body is None else "application/json",
                    headers={"Cache-Control": "no-store"})


def routes() -> list:
    """The app's own HTTP routes, for st.App (headscope/frame/headscope_asgi.py)."""
    from starlette.routing import Route

    _SERVED[:] = [True]
    return [Route(url(), _explorer, methods=["POST"])]
