#!/usr/bin/env python3
"""A minimal session-search backend for `session-search conform`: copy its shape.

It keeps every transcript in memory and answers `sessions.search` (the store-level search
of docs/protocol.md) with a plain tokenizer and bm25, plus the conformance set-up
methods (docs/conformance.md): `conformance.describe`, `.reset` and `.load`. It uses the
Python standard library only and imports nothing of session-search.

Run it through the conformance suite:

    session-search conform --backend "exec:python3 corpora/examples/minimal_backend.py" \\
        --expectations corpora/examples/minimal_backend.expectations.json

What it leaves out, it says: `unsupportedFeatures` in its description skips those
cases, and the methods it does not list (`sessions_search`, `chat.history`, ...) skip
the cases that call them. What it does differently from the specification is in its
expectations file, each case with its reason. A porter starts from here, makes more
cases pass, and shortens both lists.

The protocol: one JSON-RPC 2.0 request per line on standard input, one response per
line on standard output, until the input ends.
"""

import json
import math
import re
import sys
import unicodedata

UNSUPPORTED = ["cjk-retry", "lifecycle", "replace", "delete", "archive", "excerpts",
               "large-messages", "agent-tool", "visibility", "budgets", "gateway", "history",
               "history-anchors", "history-tool", "ui-search", "key-case", "redaction"]
METHODS = ["conformance.describe", "conformance.reset", "conformance.load", "sessions.search"]
WHITESPACE = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+"


class Refused(Exception):
    """Invalid params: answered with code -32602 and this message."""


windows = {}    # sessionId -> window record
rows = []       # one per searchable message: dict(key, sessionId, messageId, role, ...)


def tokens(text):
    """Lower-cased words without accents (close to SQLite's unicode61 tokenizer)."""
    plain = "".join(c for c in unicodedata.normalize("NFD", text)
                    if not unicodedata.combining(c))
    return [word.lower().replace("ς", "σ") for word in re.findall(r"[^\W_]+", plain)]


def message_text(message):
    content = message.get("content")
    if isinstance(content, str):
        return content.strip()
    if isinstance(message.get("text"), str):
        return message["text"].strip()
    if isinstance(content, list):
        return "\n".join(block["text"] for block in content if isinstance(block, dict)
                         and block.get("type") in ("text", "input_text", "output_text")
                         and isinstance(block.get("text"), str) and block["text"].strip())
    return ""


def load(params):
    for record in params.get("windows", []):
        windows[record["sessionId"]] = record
    for item in params.get("events", []):
        event, window = item["event"], windows[item["sessionId"]]
        message = event.get("message") or {}
        text = message_text(message)
        if event.get("type") != "message" or message.get("role") not in ("user", "assistant"):
            continue
        if not text or window.get("incognito"):
            continue
        stamp = event.get("timestamp")
        rows.append({"key": window["sessionKey"].strip().lower(), "sessionId": item["sessionId"],
                     "messageId": event["id"].strip(), "role": message["role"],
                     "timestamp": stamp if isinstance(stamp, (int, float)) else item.get("createdAt", 0),
                     "text": text, "tokens": tokens(text), "order": len(rows)})
    return {"windows": len(params.get("windows", [])), "events": len(params.get("events", []))}


def agent_of(key):
    parts = key.split(":")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" else "main"


def has_phrase(words, phrase, prefix):
    for start in range(len(words) - len(phrase) + 1):
        window = words[start:start + len(phrase)]
        if window[:-1] == phrase[:-1] and (window[-1] == phrase[-1] or
                                          (prefix and window[-1].startswith(phrase[-1]))):
            return True
    return False


def bm25(row, phrases, store, prefix):
    """SQLite FTS5's bm25 (k1 1.2, b 0.75) over one agent's store."""
    total = len(store)
    average = sum(len(other["tokens"]) for other in store) / total
    score = 0.0
    for number, phrase in enumerate(phrases):
        last = prefix and number == len(phrases) - 1
        having = sum(1 for other in store if has_phrase(other["tokens"], phrase, last))
        idf = math.log((total - having + 0.5) / (having + 0.5))
        idf = idf if idf > 0 else 1e-6
        words = row["tokens"]
        hits = sum(1 for start in range(len(words) - len(phrase) + 1)
                   if has_phrase(words[start:start + len(phrase)], phrase, last))
        score += idf * hits * 2.2 / (hits + 1.2 * (0.25 + 0.75 * len(words) / average))
    return score


def search(params):
    if not isinstance(params, dict) or not isinstance(params.get("query"), str):
        raise Refused("query is required")
    unknown = sorted(set(params) - {"query", "agentId", "sessionKeys", "sessionId", "role",
                                    "match", "order", "limit"})
    if unknown:
        raise Refused(f"unknown params: {', '.join(unknown)}")
    for name, allowed in (("role", ("user", "assistant")), ("match", ("exact", "prefix")),
                          ("order", ("relevance", "recent"))):
        if params.get(name) not in (None, *allowed):
            raise Refused(f"{name} must be one of: {', '.join(allowed)}")
    query = re.sub(f"^{WHITESPACE}|{WHITESPACE}$", "", params["query"])  # JavaScript's trim
    if not query:
        raise Refused("query must not be empty")
    if len(query.encode("utf-16-le")) // 2 > 4096:
        raise Refused("query must not exceed 4096 characters")
    keys, agent = params.get("sessionKeys"), params.get("agentId")
    if keys is not None and not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise Refused("sessionKeys must be an array of strings")
    if keys is None and agent is None:
        raise Refused("agentId is required when sessionKeys is omitted")
    prefix = params.get("match") == "prefix"
    phrases = [tokens(term) for term in re.split(WHITESPACE, query) if term]
    limit = params.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise Refused("limit must be an integer")
    limit = min(max(1, 10 if limit is None else limit), 25)
    found = []
    for row in rows:
        if keys is None:
            if not (row["key"].startswith(f"agent:{agent}:")
                    or (agent == "main" and row["key"] in ("global", "unknown"))):
                continue
        elif keys and row["key"] not in keys:
            continue
        if params.get("sessionId") not in (None, row["sessionId"]):
            continue
        if params.get("role") not in (None, row["role"]):
            continue
        if all(phrase and has_phrase(row["tokens"], phrase, prefix and number == len(phrases) - 1)
               for number, phrase in enumerate(phrases)):
            found.append(row)
    hits = []
    for row in found:
        store = [other for other in rows if agent_of(other["key"]) == agent_of(row["key"])]
        hits.append((bm25(row, phrases, store, prefix), row))
    if params.get("order") == "recent":
        hits.sort(key=lambda hit: (-hit[1]["timestamp"], -hit[1]["order"]))
    else:
        hits.sort(key=lambda hit: (-hit[0], -hit[1]["timestamp"], hit[1]["messageId"].encode()))
    return {"hits": [{"sessionKey": row["key"], "sessionId": row["sessionId"],
                      "messageId": row["messageId"], "role": row["role"],
                      "timestamp": row["timestamp"], "snippet": row["text"], "score": score}
                     for score, row in hits[:limit]],
            "truncated": len(hits) > limit, "indexing": False}


def answer(request):
    method, params = request.get("method"), request.get("params") or {}
    if method == "conformance.describe":
        return {"name": "minimal-example", "version": "1", "protocol": 1, "methods": METHODS,
                "unsupportedFeatures": UNSUPPORTED}
    if method == "conformance.reset":
        windows.clear()
        rows.clear()
        return {}
    if method == "conformance.load":
        return load(params)
    if method == "sessions.search":
        return search(params)
    raise LookupError(f"unknown method {method!r}")


for line in sys.stdin:
    if not line.strip():
        continue
    request = json.loads(line)
    response = {"jsonrpc": "2.0", "id": request.get("id")}
    try:
        response["result"] = answer(request)
    except Refused as refusal:
        response["error"] = {"code": -32602, "message": str(refusal)}
    except LookupError as unknown:
        response["error"] = {"code": -32601, "message": str(unknown)}
    print(json.dumps(response, ensure_ascii=False), flush=True)
