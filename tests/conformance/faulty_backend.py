"""A deliberately wrong backend for testing the conformance runner (issue 29, item 5).

Run as `python faulty_backend.py MODE`: it answers the protocol on standard input and
output as `session-search serve` without a store does (this engine on a scratch store),
then spoils its answers as MODE says:

* `drop-last-hit`: every search result loses its last hit;
* `swap-hits`: the first two hits of every search result change places;
* `change-excerpt`: every snippet gets a `!` at its end;
* `wrong-error-message`: every error keeps its code but says something else;
* `crash-on-gamma`: the process exits (status 3) when asked to search for `gamma`;
* `hang-on-delta`: the process stops answering when asked to search for `delta`;
* `hide-ballast`: hits whose excerpt says "ballast" are left out (for `diff`'s shrinking);
* `reverse-odd-limits`: a search with an odd limit gets its hits in reverse order (it
  breaks the relation "the top k is a prefix of the top k+1", with nothing to compare);
* `honest`: nothing is spoiled.

Owns nothing of the engine; the runner tests (`test_runner_against_faulty_backends.py`)
start it through `conform --backend exec:...`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from engine.conformance.scratch import ScratchStore, scratch_methods
from engine.rpc.framing import decode_message, encode_message
from engine.rpc.methods import RpcContext
from engine.rpc.server import handle_line


def spoil(mode: str, request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """The response as MODE spoils it."""
    result = response.get("result")
    hits = result.get("hits") if isinstance(result, dict) else None
    if mode == "drop-last-hit" and hits:
        hits.pop()
    elif mode == "swap-hits" and hits and len(hits) > 1:
        hits[0], hits[1] = hits[1], hits[0]
    elif mode == "change-excerpt" and hits:
        for hit in hits:
            hit["snippet"] += "!"
    elif mode == "wrong-error-message" and "error" in response:
        response["error"]["message"] = "something went wrong"
    elif mode == "hide-ballast" and hits:
        hits[:] = [hit for hit in hits if "ballast" not in hit["snippet"].lower()]
    elif mode == "reverse-odd-limits" and hits and (request.get("params") or {}).get("limit", 10) % 2:
        hits.reverse()
    return response


def main(mode: str) -> None:
    scratch = ScratchStore("reference")
    methods = scratch_methods(scratch)
    try:
        for line in sys.stdin.buffer:
            request = decode_message(line)
            query = (request.get("params") or {}).get("query")
            if mode == "crash-on-gamma" and query == "gamma":
                os._exit(3)
            if mode == "hang-on-delta" and query == "delta":
                time.sleep(3600)
            response = handle_line(RpcContext(scratch.backend), line, methods)
            response = spoil(mode, request, json.loads(encode_message(response)))
            sys.stdout.buffer.write(encode_message(response))
            sys.stdout.buffer.flush()
    finally:
        scratch.close()


if __name__ == "__main__":
    main(sys.argv[1])
