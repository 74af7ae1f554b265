"""Every HEADSCOPE_* setting, read in this one place into a frozen dataclass and validated.

    from headscope.settings import settings
    settings().cache_ttl        # 1800 unless HEADSCOPE_CACHE_TTL says otherwise

A bad value never raises: the setting keeps its default and `settings().problems` holds one
message per bad variable, naming it and the values it accepts (the app's sidebar and the
commands show them). The environment is read again only when a HEADSCOPE_* variable changed, so
a test or an operator's wrapper that sets one before the next call is seen. The variables are
tabled in docs/deploying.md. No import of ours: the app layer, the commands and
deploy/serve_many.py all read it.
"""

import os
import re
from dataclasses import dataclass, fields
from functools import lru_cache

DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")


@dataclass(frozen=True)
class Settings:
    models: tuple = ()  # HEADSCOPE_MODELS "name=path;name=path" as ((name, path), ...)
    treebanks: tuple = ()  # HEADSCOPE_TREEBANKS, the same form
    device: str = "auto"  # HEADSCOPE_DEVICE
    cache_entries: int = 64  # HEADSCOPE_CACHE_ENTRIES
    cache_ttl: int = 1800  # HEADSCOPE_CACHE_TTL, seconds
    torch_threads: int = 1  # HEADSCOPE_TORCH_THREADS
    run_slots: int = 1  # HEADSCOPE_RUN_SLOTS
    corpus_mb: int = 160  # HEADSCOPE_CORPUS_MB
    conn_per_address: int = 1000  # HEADSCOPE_CONN_PER_ADDRESS (make serve's nginx)
    conn_per_browser: int = 30  # HEADSCOPE_CONN_PER_BROWSER
    frame_ancestors: str = "'self'"  # HEADSCOPE_FRAME_ANCESTORS
    upstream_header: bool = False  # HEADSCOPE_UPSTREAM_HEADER "on" | "off"
    cache: str = ""  # HEADSCOPE_CACHE: where a .gguf's dequantised copy is kept ("": default)
    problems: tuple = ()  # one message per bad variable


# field: what the variable accepts, as the message says it
ACCEPTS = {
    "models": "name=path pairs separated by ';'",
    "treebanks": "name=path pairs separated by ';'",
    "device": "auto, cpu, cuda, cuda:N or mps",
    "upstream_header": "on or off",
    "frame_ancestors": "a CSP frame-ancestors source list, e.g. 'self' https://school.example",
}


def variable(name: str) -> str:
    return "HEADSCOPE_" + name.upper()


def _pairs(raw: str) -> tuple:
    out = []
    for item in raw.split(";"):
        name, sep, path = item.partition("=")
        if sep and name.strip() and path.strip():
            out.append((name.strip(), path.strip()))
    return tuple(out)


def read(environ) -> Settings:
    """Settings from a mapping of environment variables (see the module's docstring)."""
    values, problems = {}, []
    for f in fields(Settings):
        if f.name == "problems":
            continue
        raw = environ.get(variable(f.name))
        if raw is None or not raw.strip():
            continue
        raw = raw.strip()
        if f.name in ("models", "treebanks"):
            got = _pairs(raw)
            if not got:
                problems.append(f"{variable(f.name)}={raw!r} names nothing: it takes "
                                f"{ACCEPTS[f.name]}")
            values[f.name] = got
        elif f.type is int:
            if raw.isdigit() and int(raw) > 0:
                values[f.name] = int(raw)
            else:
                problems.append(f"{variable(f.name)}={raw!r} is not a positive whole number; "
                                f"using {f.default}")
        elif f.name == "upstream_header":
            if raw in ("on", "off"):
                values[f.name] = raw == "on"
            else:
                problems.append(f"{variable(f.name)}={raw!r}: it takes {ACCEPTS[f.name]}; "
                                f"using off")
        elif f.name == "device":
            if DEVICE.fullmatch(raw.lower()):
                values[f.name] = raw.lower()
            else:
                problems.append(f"{variable(f.name)}={raw!r}: it takes {ACCEPTS[f.name]}; "
                                f"using auto")
        else:
            values[f.name] = raw
    return Settings(**values, problems=tuple(problems))


_VARIABLES = tuple(variable(f.name) for f in fields(Settings) if f.name != "problems")


@lru_cache(maxsize=4)
def _cached(snapshot: tuple) -> Settings:
    return read(dict(snapshot))


def settings() -> Settings:
    """The settings of the current environment (read again only when one of its variables
    changed). Only the variables it reads are looked up: a page asks several times a run, and
    walking the whole environment costs ~0.1 ms each time."""
    return _cached(tuple((k, v) for k in _VARIABLES if (v := os.environ.get(k)) is not None))
