"""The JSON-RPC layer: how another process talks to a store (`session-search serve`).

Map of the package (the protocol itself, for users, is `docs/protocol.md`):

* `framing.py`       — one JSON object per line, UTF-8 (encoding and decoding a line);
* `errors.py`        — the error codes (JSON-RPC 2.0's and the application's) and `RpcError`;
* `methods.py`       — the method table: `Method`, `RpcContext`, `METHODS`; adding a method
                       is adding one entry there;
* `search_method.py` — `sessions.search`: params -> `SearchRequest`, run, result JSON;
* `server.py`        — the request/response envelope and the loop (`serve`, `serve_stdio`);
* `client.py`        — `RpcClient`: spawn or connect to a server and call its methods (the
                       conformance runner drives other implementations with it).

Import direction: `framing`, `errors` <- `search_method` <- `methods` <- `server` <-
`client`. The package sits above `engine.backends` (a server serves an open backend) and
below `engine.cli` (which only opens the store and calls `serve_stdio`).
"""
