"""`session-search dump`: a store's files, or every record of one of them, readably.

Owns: the `dump` command's arguments and output. Must not touch: decoding (that is
`engine.diagnostics.dump`) or the store (nothing is opened for writing, no lock taken).
The path is checked as every command checks it
(`engine.store.registry.check_store_folder`) without opening the store, so a damaged
store can still be dumped.

    session-search dump --store DIR            list files: name, kind, size, version, records
    session-search dump --store DIR FILE       every record of FILE (a path inside DIR),
                                               its fields one per line (times as
                                               ISO-8601 in UTC, the stored number after)
    ... --json                                 the same as one JSON document
    ... --jsonl                                one file or record a line (JSON Lines;
                                               a record carries its `file`)

A damaged file is an error naming the file and byte offset (exit status 1); a torn
tail, which a writer's next open would cut, is shown as a note instead.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.cli.commands import add_command, add_json_arguments, add_store_argument, note
from engine.cli.json_output import print_json, print_json_lines
from engine.cli.output import Column, format_bytes, format_time, open_output
from engine.diagnostics.dump import FileView, open_store_files, read_file, summarize_store
from engine.store.registry import check_store_folder

LIST_COLUMNS = (Column("name"), Column("kind"), Column("size", align="right"),
                Column("version", align="right"), Column("records", align="right"),
                Column("note"))
#: A list of at most this many scalars is written on its field's line.
SHORT_LIST_ITEMS = 8


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `dump` command."""
    parser = add_command(
        subparsers, "dump",
        description="List the files of a store (name, kind, size, format version, record "
                    "count), or decode every record of one store file, its fields one per "
                    "line. Nothing is opened for writing, so a damaged store can be dumped.",
        examples=["session-search dump --store demo",
                  "session-search dump --store demo store.meta",
                  "session-search dump --store demo --json store.meta",
                  "session-search dump --store demo --jsonl | jq -r 'select(.kind == \"segment\") | .name'"],
    )
    add_store_argument(parser)
    parser.add_argument("file", nargs="?", metavar="FILE",
                        help="a store file, named as the listing names it (e.g. "
                             "agents/main/transcripts/segment-000001.log)")
    add_json_arguments(parser, records="the files, or FILE's records,",
                       help="print one JSON document")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List the store or dump one file; errors propagate as EngineError."""
    check_store_folder(args.store, "dump")
    directory = open_store_files(args.store)
    if args.file is None:
        summaries = summarize_store(directory)
        if args.json:
            print_json({"store": args.store, "files": [s.to_json() for s in summaries]})
        elif args.jsonl:
            print_json_lines(summary.to_json() for summary in summaries)
        else:
            rows = [[s.name, s.kind, format_bytes(s.size), _blank(s.version),
                     _blank(s.records), s.note or ""] for s in summaries]
            open_output(colour=args.color).table(LIST_COLUMNS, rows)
        return 0
    view = read_file(directory, args.file)
    if args.json:
        print_json(view.to_json())
    elif args.jsonl:  # one record a line, named by its file; a torn tail is a note
        print_json_lines({"file": view.name, **record.to_json()} for record in view.records)
        if view.torn_tail is not None:
            note(torn_tail_line(view))
    else:
        output = open_output(colour=args.color)
        output.fields(file_heading(view))
        for line in record_lines(view):
            output.line(line)
    return 0


def file_heading(view: FileView) -> list[tuple[str, str]]:
    """What the header says about a file, and its size."""
    return [("file", view.name), ("kind", view.kind), ("version", str(view.version)),
            ("flags", str(view.flags)),
            ("size", f"{format_bytes(view.size)} ({view.size:,} bytes)"),
            ("records", str(len(view.records)))]


def record_lines(view: FileView) -> list[str]:
    """A block per record of a file (its fields one per line, `field_lines`), then the
    footer and any torn tail."""
    lines = []
    for number, record in enumerate(view.records, 1):
        lines.append("")
        lines.append(f"record {number} at byte offset {record.offset}: {record.kind} "
                     f"({record.length:,} bytes, crc {record.crc:08x})")
        lines.extend(field_lines(record.fields, "  "))
    lines.append("")
    if view.footer is not None:
        lines.append(f"footer at byte offset {view.footer.offset}: "
                     f"{view.footer.record_count} records, records CRC "
                     f"{view.footer.records_crc:08x} (verified)")
    else:
        lines.append("no footer (file open for appending)")
    if view.torn_tail is not None:
        lines.append(torn_tail_line(view))
    return lines


def torn_tail_line(view: FileView) -> str:
    """What a file's torn tail is (the view has one)."""
    assert view.torn_tail is not None
    return (f"torn tail at byte offset {view.torn_tail.offset}: {view.torn_tail.reason} "
            "(a writer's next open cuts it)")


def field_lines(fields: dict[str, Any], indent: str) -> list[str]:
    """A record's fields, one per line: a scalar or a short list after its name, a map's
    fields and a long list's items on the lines below it, indented (an empty map is
    `{}`). Values are written
    as JSON (strings quoted), so `"1"` and `1`, `null` and `"null"` stay apart; a time
    (`shown_value`) as ISO-8601 in UTC, the number stored after it.

    >>> print("\\n".join(field_lines({"segment": 1, "sealed": False, "name": "a b",
    ...     "window": {"session_id": "s1", "events": [1, 2], "created_at": 1788253200000.0},
    ...     "windows": [["after-reset", 1], ["branches", 8]]}, "")))
    segment: 1
    sealed: false
    name: "a b"
    window:
      session_id: "s1"
      events: [1, 2]
      created_at: 2026-09-01T09:00:00Z (1788253200000.0)
    windows: 2 items
      - ["after-reset", 1]
      - ["branches", 8]
    """
    lines: list[str] = []
    for name, value in fields.items():
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{name}:")
            lines.extend(field_lines(value, indent + "  "))
        elif isinstance(value, list) and not _is_short_list(value):
            lines.append(f"{indent}{name}: {len(value)} item{'' if len(value) == 1 else 's'}")
            lines.extend(f"{indent}  - {_json(item)}" for item in value)
        else:
            lines.append(f"{indent}{name}: {shown_value(name, value)}")
    return lines


def shown_value(name: str, value: Any) -> str:
    """A field's value as JSON; a time (a number, epoch milliseconds, in a field named
    `timestamp`, `*_at` or `*At`) as ISO-8601 in UTC with the number stored after it.

    >>> shown_value("committed_at", 1788253205000), shown_value("createdAt", 0)
    ('2026-09-01T09:00:05Z (1788253205000)', '0')
    >>> shown_value("timestamp", "2026-09-01T09:00:05.000Z"), shown_value("segment", 7)
    ('"2026-09-01T09:00:05.000Z"', '7')
    """
    is_time = name == "timestamp" or name.endswith(("_at", "At"))
    if is_time and isinstance(value, (int, float)) and not isinstance(value, bool):
        moment = format_time(value)
        if moment != "-":  # 0 is "unknown", as the kernel writes it
            return f"{moment} ({_json(value)})"
    return _json(value)


def _is_short_list(value: list[Any]) -> bool:
    """A list of at most `SHORT_LIST_ITEMS` scalars fits on its name's line."""
    return len(value) <= SHORT_LIST_ITEMS and not any(
        isinstance(item, (dict, list)) for item in value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _blank(value: object) -> str:
    return "-" if value is None else str(value)
