"""The explorer: a local web page over a store that shows why every hit is a hit
(`session-search explore`; docs/explore.md is the user's guide).

Map of the package (each panel of the page is one JSON endpoint too, answering the same
data the panel draws):

* `parameters.py`     - every endpoint's query parameters, read strictly; the requests
                        the panels share (search, tool call, history page);
* `explored_store.py` - the store, opened read-only and read under one lock, and its
                        twin on the other backend (Compare's);
* `text_panels.py`    - Analysis (a text per profile) and Query (the policy's plan);
* `search_panels.py`  - Hits (the answer, scope and flags) and Why this hit (bm25,
                        tie-breaks, excerpt);
* `index_panel.py`    - Index (postings, a message's tokens, segments, generations);
* `history_panel.py`  - History (the page around a hit, anchors and cursors);
* `compare_panel.py`  - Compare (the same request on both backends, the differences);
* `case_file.py`      - a compared request as a conformance case file;
* `app.py`            - the Starlette application: routes, refusals, headers;
* `server.py`         - uvicorn on 127.0.0.1 until Ctrl-C;
* `static/`           - the page (HTML, CSS, JavaScript), shipped in the package: the
                        page loads nothing from the network.

Import direction: `parameters`, `explored_store` <- the panels <- `case_file` <- `app`
<- `server`. The package imports only the front door, the wings (`store`, `agent_tools`,
`ingest`, `inspection`), `conformance` (the case format, the tolerance of a comparison)
and bottom values; Starlette and uvicorn (the `explore` extra) are imported by `app` and
`server` alone, so `import engine.explorer` costs nothing and a missing extra is said by
`require_extra` before anything starts.
"""

from __future__ import annotations

from importlib.util import find_spec

from engine.errors import UsageError

#: What `require_extra` says when Starlette or uvicorn is missing.
EXTRA_MISSING = ("explore needs Starlette and uvicorn: pip install 'session-search[explore]' "
                 "(or the dev extra)")


def require_extra() -> None:
    """Refuse, saying how to install them, when Starlette or uvicorn cannot be found."""
    if find_spec("starlette") is None or find_spec("uvicorn") is None:
        raise UsageError(EXTRA_MISSING)
