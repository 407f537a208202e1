"""The PostgreSQL 15 `default` text-search parser, as a pure-Python state machine.

Owns: splitting a text into the typed tokens `ts_parse('default', text)` returns (alias and
text): the machine that runs the parser's states (`pg_parser_states.py`) over a text, asking
the character-class provider (`pg_character_classes.py`) what a letter, a digit, a space and
a "special" (word-continuing, zero-width) character are, and typing its tokens
(`pg_token_types.py`). Must not touch: unaccent, lowercasing, positions or the tsvector
(those live in `pg_profile.py`), and anything outside `analysis`.

How the machine works (the behaviour was reverse-engineered with `ts_parse` and checked
against the server; the shape follows the upstream parser so that its quirks come out the
same):

* The parser reads code points left to right. Its state is a *stack of frames*; a frame is a
  read position, the length of the token so far, a state name, and (for a frame that saved a
  checkpoint) the index of the rule that saved it.
* Each state has an ordered list of rules; the first rule whose test passes fires, with the
  effects, in order, that `pg_parser_states.py` lists (a hook, ``EMIT``, at most one stack
  operation, the next state, then the end of the call or the character consumed).
* One call returns one token (or nothing at the end); the next call starts where the top
  frame stands, in the state the previous call left it.
* Two tests run a nested parser on the rest of the text: "a host follows" (used after `@`)
  and "a URL path follows" (used after `host/`).

Input that PostgreSQL text cannot hold (U+0000, lone surrogates) is accepted here and acts
like any other non-letter separator; the PostgreSQL backend must clean such text before it
reaches the server.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.pg_character_classes import (
    DIGIT,
    LETTER,
    SPACE,
    SPECIAL,
    CharacterClasses,
    c_utf8_classes,
)
from engine.analysis.pg_parser_states import (
    ANY,
    DYNAMIC_STATES,
    END,
    HOST_FOLLOWS,
    HOST_WANTED,
    IGNORING,
    IS_ALNUM,
    IS_ASCII_LETTER,
    IS_DIGIT,
    IS_HEX,
    IS_LETTER,
    IS_NOT_ALNUM,
    IS_SPACE,
    IS_SPECIAL,
    IS_URL_CHAR,
    REWIND_FOR_PARTS,
    REWIND_FOR_URL,
    REWIND_FOR_VERSION,
    STATES,
    TRACK_SCRIPT_TAGS,
    URL_PATH_FOLLOWS,
    Rule,
    Step,
)
from engine.analysis.pg_token_types import TOKEN_IDS, ParsedToken

URL_FORBIDDEN = frozenset('"<>\\^`{|}')
HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

# The step bits as plain ints for the machine's inner loop.
_EMIT, _BACKTRACK, _SAVE = int(Step.EMIT), int(Step.BACKTRACK), int(Step.SAVE)
_STAY, _FORGET_ONE = int(Step.STAY), int(Step.FORGET_ONE)
_MERGE, _FORGET_ALL = int(Step.MERGE), int(Step.FORGET_ALL)

#: (state, ignoring, class, ASCII character or None) -> index of the rule that fires.
_SELECTION_MEMO: dict[tuple, int] = {}


@dataclass(slots=True)
class Frame:
    """One stack entry: where we are, how long the token is, which state, where we saved."""

    position: int
    length: int
    state: str
    saved_at: int | None = None

    def copy(self) -> Frame:
        return Frame(self.position, self.length, self.state, None)


class DefaultParser:
    """One pass of the `default` parser over one text (create one per text)."""

    def __init__(self, text: str, classes: CharacterClasses | None = None,
                 start: int = 0, initial_states: tuple[str, ...] = ("base",),
                 use_memo: bool = True) -> None:
        self.text = text
        self.code_points = [ord(character) for character in text]
        self.size = len(text)
        self.classes = classes or c_utf8_classes()
        self._class_cache: dict[int, int] = {}
        self.stack = [Frame(start, 0, state) for state in initial_states]
        self.ignoring = False
        self.host_wanted = False
        self.use_memo = use_memo

    # -- character tests ------------------------------------------------------------
    def _class_at(self, position: int) -> int:
        code_point = self.code_points[position]
        cached = self._class_cache.get(code_point)
        if cached is None:
            cached = self.classes.class_of(code_point)
            self._class_cache[code_point] = cached
        return cached

    def _passes(self, test: str, frame: Frame) -> bool:
        position = frame.position
        at_end = position >= self.size
        if test == ANY:
            return True
        if test == END:
            return at_end
        if len(test) == 1:
            return not at_end and self.text[position] == test
        if test == HOST_WANTED:
            if self.host_wanted:
                self.host_wanted = False
                return True
            return False
        if test == IGNORING:
            return self.ignoring
        if test == HOST_FOLLOWS:
            return self._sub_parse(frame, ("base",), {TOKEN_IDS["host"]}, want_host=True)
        if test == URL_PATH_FOLLOWS:
            return self._sub_parse(frame, ("base", "url_path_first"), {TOKEN_IDS["url_path"]})
        if at_end:
            return test == IS_NOT_ALNUM
        kind = self._class_at(position)
        if test == IS_LETTER:
            return kind == LETTER
        if test == IS_ASCII_LETTER:
            return kind == LETTER and self.code_points[position] < 0x80
        if test == IS_DIGIT:
            return kind == DIGIT
        if test == IS_ALNUM:
            return kind == LETTER or kind == DIGIT
        if test == IS_NOT_ALNUM:
            return kind != LETTER and kind != DIGIT
        if test == IS_SPACE:
            return kind == SPACE
        if test == IS_SPECIAL:
            return kind == SPECIAL
        if test == IS_HEX:
            return self.text[position] in HEX_DIGITS
        if test == IS_URL_CHAR:
            code_point = self.code_points[position]
            return 0x20 < code_point < 0x7F and self.text[position] not in URL_FORBIDDEN
        raise AssertionError(f"unknown test {test}")

    def _sub_parse(self, frame: Frame, states: tuple[str, ...], wanted: set[int],
                   want_host: bool = False) -> bool:
        """Run a nested parser from the current position; on a token of a wanted type,
        the current frame swallows it."""
        nested = DefaultParser.__new__(DefaultParser)
        nested.text = self.text
        nested.code_points = self.code_points
        nested.size = self.size
        nested.classes = self.classes
        nested._class_cache = self._class_cache
        nested.stack = [Frame(frame.position, 0, state) for state in states]
        nested.ignoring = False
        nested.host_wanted = want_host
        nested.use_memo = self.use_memo
        token = nested.next_token()
        if token is None or token.type_id not in wanted:
            return False
        frame.position += token.end - token.start
        frame.length += token.end - token.start
        return True

    def _first_passing(self, rules: tuple[Rule, ...], start: int, frame: Frame) -> int:
        """The clear version: the index of the first rule from `start` whose test passes."""
        index = start
        while not self._passes(rules[index].test, frame):
            index += 1
        return index

    def _select(self, rules: tuple[Rule, ...], frame: Frame) -> int:
        """The rule that fires when a state is entered fresh, memoized.

        Outside the states with side-effecting or look-ahead tests, the first passing rule
        depends only on the state, the script/style flag, and the current character's class
        (plus the character itself when it is ASCII, the only characters tested literally),
        so the answer of `_first_passing` is cached under that key. `use_memo=False` turns
        the cache off; the tests compare both.
        """
        if not self.use_memo or frame.state in DYNAMIC_STATES:
            return self._first_passing(rules, 0, frame)
        position = frame.position
        if position >= self.size:
            key: tuple = (frame.state, self.ignoring, END)
        else:
            code_point = self.code_points[position]
            key = (
                frame.state, self.ignoring, self._class_at(position),
                self.text[position] if code_point < 0x80 else None,
            )
        index = _SELECTION_MEMO.get(key)
        if index is None:
            index = self._first_passing(rules, 0, frame)
            _SELECTION_MEMO[key] = index
        return index

    # -- hooks ----------------------------------------------------------------------
    def _run_hook(self, hook: str, frame: Frame, token_start: int) -> None:
        if hook == TRACK_SCRIPT_TAGS:
            so_far = self.text[token_start:token_start + frame.length].lower()
            if so_far in ("</script", "</style"):
                self.ignoring = False
            elif so_far in ("<script", "<style"):
                self.ignoring = True
        elif hook == REWIND_FOR_URL:
            self.host_wanted = True
            frame.position -= frame.length
        elif hook == REWIND_FOR_PARTS:
            frame.position -= frame.length
        elif hook == REWIND_FOR_VERSION:
            frame.position -= frame.length
            frame.length = 0

    # -- one token ------------------------------------------------------------------
    def next_token(self) -> ParsedToken | None:
        """The next token (blanks included), or None at the end of the text."""
        top = self.stack[-1]
        if top.position >= self.size:
            return None
        token_start = top.position
        top.saved_at = None
        result: ParsedToken | None = None
        rule: Rule | None = None
        while top.position <= self.size:
            rules = STATES[top.state]
            if top.saved_at is not None:
                index = self._first_passing(rules, top.saved_at + 1, top)
                top.saved_at = None
            else:
                index = self._select(rules, top)
            rule = rules[index]
            step = rule.step
            if rule.hook is not None:
                self._run_hook(rule.hook, top, token_start)
            if step & _EMIT:
                result = ParsedToken(
                    TOKEN_IDS[rule.emits], token_start, token_start + top.length
                )
                top.length = 0
            if step & _BACKTRACK:
                self.stack.pop()
                top = self.stack[-1]
            elif step & _SAVE:
                top.saved_at = index
                top = top.copy()
                self.stack.append(top)
            elif step & _FORGET_ONE:
                del self.stack[-2]
            elif step & _FORGET_ALL:
                del self.stack[:-1]
            elif step & _MERGE:
                merged = self.stack.pop()
                top = self.stack[-1]
                top.position = merged.position
                top.length = merged.length
            if rule.then is not None:
                top.state = rule.then
            if step & _EMIT or (top.position >= self.size and not step & _STAY):
                break
            if step & (_STAY | _BACKTRACK):
                continue
            if top.position < self.size:
                top.position += 1
                top.length += 1
        if rule is not None and rule.step & _EMIT:
            return result
        return None

    def tokens(self) -> list[ParsedToken]:
        """Every token of the text, in order, like `ts_parse('default', text)`."""
        found: list[ParsedToken] = []
        while True:
            token = self.next_token()
            if token is None:
                return found
            found.append(token)


def parse(text: str, classes: CharacterClasses | None = None) -> list[tuple[str, str]]:
    """`ts_parse('default', text)` as (alias, token text) pairs.

    >>> parse("co-op2 x-1")
    [('numhword', 'co-op2'), ('hword_asciipart', 'co'), ('blank', '-'), \
('hword_numpart', 'op2'), ('blank', ' '), ('asciiword', 'x'), ('int', '-1')]
    >>> parse("http://a.io/p?q=1")
    [('protocol', 'http://'), ('url', 'a.io/p?q=1'), ('host', 'a.io'), ('url_path', '/p?q=1')]
    """
    return [
        (token.alias, text[token.start:token.end])
        for token in DefaultParser(text, classes).tokens()
    ]

