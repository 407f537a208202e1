"""The bare search script: what a fresh `session-search search` is compared with.

Owns: a standalone program that opens agent databases read-only, runs upstream's search
statement on each, merges the rows by score, and prints the hits as JSON: the least a
Python program can do to answer the same question from the same rows. Must not touch:
anything of the engine. It imports only the standard library (`sqlite3`, `json`, `sys`,
`time`), is run by its path with `-S` (`python -S engine/bench/bare_search_script.py`),
not as a module of the `engine` package, and takes the statement and the MATCH string as
arguments (`engine.bench.sqlite_kernel` makes them), so that its start-up is the
interpreter's and `sqlite3`'s and nothing else: the yardstick of the `reopen/first_query`
workload's `search command` figure (a fresh search should take little longer than this
script).

Why `-S`: the script needs nothing outside the standard library, so the `.pth` files of
the environment it happens to run in are none of its cost. A development install
(`pip install -e .`) has one that imports an import finder and, with it, `pathlib`,
`re`, `enum` and `urllib.parse` (a noticeable cost) before the first line of any
program: counted in the script, that would be a slower yardstick than the bare way
really is, and every ratio against it flattering.

Run: `python -S bare_search_script.py [--with-libraries FOLDER] SQL MATCH LIMIT URI...`,
each URI a read-only `file:` URI of an agent database. Prints one JSON object:
`hits` (at most LIMIT, each `sessionKey`, `sessionId`, `messageId`, `role`, `timestamp`,
`snippet`, `score`), `seconds`, the time from before the first connection to after
the merge (the open and first query, as the reopen probe reports them), and `libraries`.

`--with-libraries FOLDER` puts FOLDER (where `msgpack` is installed) on the import path,
still without `.pth` files, and first imports `ENGINE_LIBRARIES`, the libraries the engine
is written with and cannot start a search without (its values are frozen dataclasses, or
NamedTuples where it makes many, its interfaces `typing.Protocol`s, its command line
argparse, its store metadata msgpack):
the same script then shows how much of a fresh search's start-up those libraries cost
before any line of the engine runs (the `with the engine's libraries` note of
`reopen/first_query`).

The merge is the Gateway's order (score descending, timestamp descending, messageId);
messageId ties compare by code point here, not by `localeCompare`: the script is timed,
its hits are only counted.
"""

import importlib
import json
import sqlite3
import sys
import time

#: What `--with-libraries` imports first (see the module docstring).
ENGINE_LIBRARIES = ("dataclasses", "typing", "argparse", "msgpack")


def main(arguments: list[str]) -> int:
    """Search every database given; print the merged hits and the time taken."""
    libraries: tuple[str, ...] = ()
    if arguments and arguments[0] == "--with-libraries":
        libraries, folder, arguments = ENGINE_LIBRARIES, arguments[1], arguments[2:]
        sys.path.append(folder)
        for name in libraries:
            importlib.import_module(name)
    sql, match, limit, uris = arguments[0], arguments[1], int(arguments[2]), arguments[3:]
    started = time.perf_counter()
    rows = []
    for uri in uris:
        connection = sqlite3.connect(uri, uri=True)
        rows.extend(connection.execute(sql, {"match": match, "limit": limit + 1}).fetchall())
        connection.close()
    rows.sort(key=lambda row: (row[6], -row[4], row[2]))  # bm25 ascending = score descending
    seconds = time.perf_counter() - started
    fields = ("sessionKey", "sessionId", "messageId", "role", "timestamp", "snippet")
    hits = [dict(zip(fields, row[:6]), score=-row[6]) for row in rows[:limit]]
    print(json.dumps({"hits": hits, "seconds": seconds, "libraries": list(libraries)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
