"""The `id`/`parentId` tree of one transcript window and its active path (root to leaf).

Owns: the leaf rule and the active-path walk, as pure functions over a window's
`StoredEvent`s in `seq` order. The active path is always *computed* from the events; it
is never stored. Must not touch: storage, event validation (`events.py`) or what is
searchable (`projection.py`).

The rule, applied to the events in append order (upstream's `scanSessionTranscriptTree`,
restated):

* **Tree entries.** An event joins the tree when it is an object with a non-blank string
  `id` and is not the `session` header. With a `parentId` key (null or a non-blank string)
  its parent is that id. A *canonical* entry (`events.CANONICAL_KINDS`) without a
  `parentId` key continues the current leaf (the linear form of older writers). Any other
  event without a `parentId` key is not a tree entry. A later entry with an id already
  seen replaces the earlier one in the tree (the importer rejects duplicates anyway).
* **The leaf starts empty** (no entries). Appending a canonical entry makes it the leaf,
  whether its parent is the current leaf (extending the branch) or another entry (a new
  branch): the newest canonical entry is the leaf. A canonical entry with
  `appendMode: "side"` (a side append) and an opaque entry (another kind) join the tree
  without moving the leaf.
* **Leaf control events** (`type: "leaf"`, with `id`, a `parentId` key and `targetId`) move
  the leaf to `targetId` (a rewind or a branch switch); `targetId: null` empties the
  path. A leaf event whose target is not an entry appended before it is *invalid*: it is
  recorded and ignored. A later entry whose `parentId` names a leaf event hangs from that
  event's target (navigation markers are see-through).
* **The active path** is the leaf and its ancestors, root first, leaf events left out.
  A `parentId` that names no entry ends the walk there (the reachable suffix is kept). A
  cycle gives an empty path.
* **Visible events** (what is indexed, behaviour.md §2.3): the active path when it is not
  empty; otherwise nothing when the window has a valid leaf event, and every event when it
  has none (a transcript without a usable tree is read flat, as upstream does).

Complexity: one pass over the events, then one walk up the tree: O(events).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Generic, NamedTuple, TypeVar

from engine.light_values import same_kind_equal, same_kind_unequal
from engine.model import StoredEvent
from engine.transcript import events as kinds

#: What a tree node keeps of its event: the stored event (`scan_tree`) or its seq
#: (`scan_path`).
Kept = TypeVar("Kept")

_EVENT_OF = attrgetter("event")
_SEQ_OF = attrgetter("seq")


class TreeNode(NamedTuple, Generic[Kept]):
    """One tree entry: its id, its resolved parent id and what it keeps of the event it
    came from (`scan_tree`: the stored event). Like the two classes below, a NamedTuple
    that equals only a value of its own class (`engine.light_values`: a frozen dataclass's
    class costs several times as much to make, and a long window makes many nodes)."""

    entry_id: str
    parent_id: str | None
    stored: Kept
    is_leaf_control: bool = False

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class TranscriptTree(NamedTuple, Generic[Kept]):
    """The scanned tree of one window: nodes by id, the leaf, and what the scan saw."""

    nodes: Mapping[str, TreeNode[Kept]]
    leaf_id: str | None
    has_leaf_control: bool
    invalid_leaf_controls: tuple[int, ...] = ()

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__

    def path_to(self, entry_id: str | None) -> list[TreeNode[Kept]]:
        """The nodes from the root down to `entry_id`, leaf events left out.

        An unknown parent ends the walk (the suffix found so far is kept); a cycle
        returns an empty list.
        """
        path: list[TreeNode[Kept]] = []
        seen: set[str] = set()
        current = entry_id
        while current is not None:
            if current in seen:
                return []
            seen.add(current)
            node = self.nodes.get(current)
            if node is None:
                break
            if not node.is_leaf_control:
                path.append(node)
            current = node.parent_id
        path.reverse()
        return path

    def active_path(self) -> list[TreeNode[Kept]]:
        """The nodes of the active path, root first."""
        return self.path_to(self.leaf_id)


def scan_tree(events: Sequence[StoredEvent]) -> TranscriptTree[StoredEvent]:
    """Scan a window's events (in `seq` order) into its tree and leaf.

    >>> from engine.model import StoredEvent
    >>> def message(seq, entry_id, parent):
    ...     return StoredEvent("s", seq, {"type": "message", "id": entry_id,
    ...                                   "parentId": parent, "message": {"role": "user"}})
    >>> rows = [message(0, "m1", None), message(1, "m2", "m1"),
    ...         StoredEvent("s", 2, {"type": "leaf", "id": "l1", "parentId": "m2",
    ...                              "targetId": "m1"}),
    ...         message(3, "m3", "m1")]
    >>> tree = scan_tree(rows)
    >>> tree.leaf_id, [node.entry_id for node in tree.active_path()]
    ('m3', ['m1', 'm3'])
    """
    return _scan(zip(map(_EVENT_OF, events), events), _SEQ_OF)


def _scan(items: Iterable[tuple[object, Kept]], seq_of: Callable[[Kept], int]
          ) -> TranscriptTree[Kept]:
    """The tree of a window's events given as (event, what its node keeps), in seq
    order, read once: `scan_tree` keeps each entry's stored event, `scan_path` its seq
    (`seq_of` reads the seq of what is kept)."""
    nodes: dict[str, TreeNode[Kept]] = {}
    invalid_leaf_ids: set[str] = set()
    invalid_seqs: list[int] = []
    leaf_id: str | None = None
    has_leaf_control = False
    for event, kept in items:
        if not isinstance(event, dict) or event.get("type") == kinds.SESSION_HEADER:
            continue
        entry_id = kinds.non_blank_string(event.get("id"))
        if entry_id is None:
            continue
        if kinds.is_leaf_control(event):
            target = _leaf_target(event)
            if target is ... or _declared_parent(event, None) is ...:
                continue
            if target is not None and (target not in nodes or target in invalid_leaf_ids):
                invalid_leaf_ids.add(entry_id)
                invalid_seqs.append(seq_of(kept))
                raw_parent = kinds.non_blank_string(event.get("parentId"))
                nodes[entry_id] = TreeNode(entry_id, raw_parent, kept, is_leaf_control=True)
                continue
            nodes[entry_id] = TreeNode(entry_id, target, kept, is_leaf_control=True)
            leaf_id = target
            has_leaf_control = True
            continue
        parent = _declared_parent(event, leaf_id)
        if parent is ...:
            continue
        if kinds.is_canonical(event):
            parent = _see_through_leaf_controls(parent, nodes)
        nodes[entry_id] = TreeNode(entry_id, parent, kept)
        if kinds.is_canonical(event) and not kinds.is_side_append(event):
            leaf_id = entry_id
    return TranscriptTree(nodes, leaf_id, has_leaf_control, tuple(invalid_seqs))


#: The fields of an event the tree rules read (`scan_tree`, `visible_events`).
TREE_FIELDS = ("type", "id", "parentId", "targetId", "appendMode")


def outline(stored: StoredEvent) -> StoredEvent:
    """The event with only the fields the tree rules read (`TREE_FIELDS`): scanned in
    its place it gives the same tree, and a long window's outlines take far less memory
    than its events (a rebuild reads the visible events whole afterwards).

    >>> outline(StoredEvent("s", 3, {"type": "message", "id": "m1", "parentId": None,
    ...                              "message": {"role": "user", "content": "long"}}, 5.0))
    StoredEvent(session_id='s', seq=3, event={'type': 'message', 'id': 'm1', 'parentId': None}, created_at=5.0)
    """
    event = stored.event
    if not isinstance(event, dict):
        return stored
    return StoredEvent(stored.session_id, stored.seq,
                       {name: event[name] for name in TREE_FIELDS if name in event},
                       stored.created_at)


def active_path(events: Sequence[StoredEvent]) -> list[StoredEvent]:
    """The stored events of the active path, root first (see the module rule)."""
    return [node.stored for node in scan_tree(events).active_path()]


def visible_events(events: Sequence[StoredEvent],
                   tree: TranscriptTree | None = None) -> list[StoredEvent]:
    """The events whose messages are searchable: the active path, or the flat fallback.
    `tree` is `scan_tree(events)` when the caller has scanned them already (a rebuild
    needs the tree for the active rows too, and scans once).

    >>> from engine.model import StoredEvent
    >>> flat = [StoredEvent("s", 0, {"type": "message", "message": {"role": "user"}})]
    >>> visible_events(flat) == flat
    True
    """
    if tree is None:
        tree = scan_tree(events)
    return _visible(tree, lambda: list(events))


def _visible(tree: TranscriptTree[Kept], every: Callable[[], list[Kept]]) -> list[Kept]:
    """What the nodes keep of the visible events: the active path's, else none when a
    leaf control points nowhere, else `every()` (the flat fallback, every event's)."""
    path = tree.active_path()
    if path:
        return [node.stored for node in path]
    return [] if tree.has_leaf_control else every()


class ScannedPath(NamedTuple):
    """What a window's rebuild needs of its tree (`scan_path`): how many events it has,
    its leaf's id and the seqs of its visible events (`visible_events`), in path order."""

    count: int
    leaf_id: str | None
    seqs: list[int]

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


def scan_path(events: Iterable[StoredEvent]) -> ScannedPath:
    """`scan_tree` and `visible_events` of a window's events (in `seq` order) taken one
    at a time, keeping only each tree entry's id, parent id and seq (and every event's
    seq, for the flat fallback): neither the events nor their outlines are held, so a
    long window read from its log (`outline`'s caller before this) takes a fraction of
    the memory. The clear version, and the oracle, is those two over the events held.

    >>> from engine.model import StoredEvent
    >>> rows = [StoredEvent("s", 0, {"type": "message", "id": "m1", "parentId": None}),
    ...         StoredEvent("s", 1, {"type": "message", "id": "m2", "parentId": "m1"}),
    ...         StoredEvent("s", 2, {"type": "leaf", "id": "l1", "parentId": "m2",
    ...                              "targetId": "m1"})]
    >>> scan_path(iter(rows))
    ScannedPath(count=3, leaf_id='m1', seqs=[0])
    """
    every_seq = array("q")
    tree = _scan(_seq_items(events, every_seq), int)
    return ScannedPath(len(every_seq), tree.leaf_id, _visible(tree, every_seq.tolist))


def _seq_items(events: Iterable[StoredEvent], every_seq: array[int]
               ) -> Iterator[tuple[object, int]]:
    """`_scan`'s items of `events`, each keeping its seq; every seq appended to `every_seq`."""
    for stored in events:
        seq = stored.seq
        every_seq.append(seq)
        yield stored.event, seq


def is_on_active_path(events: Sequence[StoredEvent], entry_id: str) -> bool:
    """True when the entry `entry_id` lies on the window's active path."""
    return any(node.entry_id == entry_id for node in scan_tree(events).active_path())


def _leaf_target(event: dict) -> str | None | object:
    """The `targetId` of a leaf event: a string, None, or `...` when unusable."""
    target = event.get("targetId", ...)
    if target is None:
        return None
    return kinds.non_blank_string(target) or ...


def _declared_parent(event: dict, leaf_id: str | None) -> str | None | object:
    """The parent an entry declares: its `parentId`, the current leaf, or `...` (none)."""
    if "parentId" in event:
        parent = event["parentId"]
        if parent is None:
            return None
        return kinds.non_blank_string(parent) or ...
    if kinds.is_canonical(event):
        return leaf_id
    return ...


def _see_through_leaf_controls(parent: str | None, nodes: Mapping[str, TreeNode]) -> str | None:
    """Follow a parent that is a leaf event to the entry it targets (stops on a cycle)."""
    seen: set[str] = set()
    current = parent
    while current is not None and current not in seen:
        seen.add(current)
        node = nodes.get(current)
        if node is None:
            return current
        if not node.is_leaf_control:  # the node's own string: a long window keeps one copy
            return node.entry_id
        current = node.parent_id
    return current
