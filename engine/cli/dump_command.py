"""`session-search dump`: a store's files, or every record of one of them, readably.

Owns: the `dump` command's arguments and output. Must not touch: decoding (that is
`engine.diagnostics.dump`) or the store (nothing is opened for writing, no lock taken).
The path is checked as every command checks it
(`engine.backends.registry.check_store_folder`) without opening the store, so a damaged
store can still be dumped.

    session-search dump --store DIR            list files: name, kind, size, version, records
    session-search dump --store DIR FILE       every record of FILE (a path inside DIR)
    ... --json                                 the same as one JSON document

A damaged file is an error naming the file and byte offset (exit status 1); a torn
tail, which a writer's next open would cut, is shown as a note instead.
"""

from __future__ import annotations

import argparse
import json

from engine.backends.registry import check_store_folder
from engine.cli.commands import add_command
from engine.cli.output import format_table, print_json
from engine.diagnostics.dump import FileView, read_file, require_store, summarize_store
from engine.directory import FileDirectory

LIST_HEADERS = ("name", "kind", "size", "version", "records", "note")
RECORD_HEADERS = ("offset", "length", "crc", "kind", "fields")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `dump` command."""
    parser = add_command(
        subparsers, "dump",
        description="List the files of a store, or decode every record of one store file.",
    )
    parser.add_argument("--store", required=True, metavar="DIR", help="the store folder")
    parser.add_argument("file", nargs="?", metavar="FILE",
                        help="a file inside the store, e.g. "
                             "agents/main/transcripts/segment-000001.log")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List the store or dump one file; errors propagate as EngineError."""
    check_store_folder(args.store, "dump")
    directory = FileDirectory(args.store)
    require_store(directory)
    if args.file is None:
        summaries = summarize_store(directory)
        if args.json:
            print_json({"store": args.store, "files": [s.to_json() for s in summaries]})
        else:
            rows = [[s.name, s.kind, s.size, _blank(s.version), _blank(s.records), s.note or ""]
                    for s in summaries]
            print(format_table(LIST_HEADERS, rows))
        return 0
    view = read_file(directory, args.file)
    if args.json:
        print_json(view.to_json())
    else:
        print(format_file(view))
    return 0


def format_file(view: FileView) -> str:
    """The plain view of one file: a heading line, a record table, footer and tail notes."""
    lines = [(f"file: {view.name}  kind: {view.kind}  version: {view.version}  "
             f"flags: {view.flags}  size: {view.size}  records: {len(view.records)}")]
    rows = [[record.offset, record.length, f"{record.crc:08x}", record.kind,
             json.dumps(record.fields, ensure_ascii=False, separators=(",", ":"))]
            for record in view.records]
    lines.append(format_table(RECORD_HEADERS, rows))
    if view.footer is not None:
        lines.append(f"footer at byte offset {view.footer.offset}: "
                     f"{view.footer.record_count} records, records CRC "
                     f"{view.footer.records_crc:08x} (verified)")
    else:
        lines.append("no footer (file open for appending)")
    if view.torn_tail is not None:
        lines.append(f"torn tail at byte offset {view.torn_tail.offset}: "
                     f"{view.torn_tail.reason} (a writer's next open cuts it)")
    return "\n".join(lines)


def _blank(value: object) -> object:
    return "-" if value is None else value
