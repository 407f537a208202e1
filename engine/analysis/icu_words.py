"""The `icu` profile: ICU word boundaries, full case folding and mark stripping.

Owns: segmenting text into words with ICU's word break iterator (UAX #29 plus ICU's
dictionaries for Chinese, Japanese, Thai, Lao, Khmer and Myanmar), mapping ICU's UTF-16
offsets back to Python `str` indexes, folding each word, and tagging it with a kind.
Must not touch: the `unicode61` and `pg` parity profiles (they must never use ICU
boundaries, tokenizers.md §6), storage, scoring. This is the only runtime module that
imports ICU (PyICU, `import icu`).

Why this profile exists: `unicode61` keeps a whole run of CJK text as one token, so a
query for a word inside the run finds nothing (behaviour.md §7.1). ICU cuts `中文字符测试`
into `中文 字符 测试` and `ภาษาไทย` into `ภาษา ไทย`, so users who choose this profile get
word matches in those scripts. It is a third, distinct profile, not a parity target.

The stages, in order (also returned by `IcuWordAnalyzer.describe()`):

1. decode: every lone surrogate becomes U+FFFD. Both are one UTF-16 code unit and one
   `str` index, so offsets are unchanged.
2. split: ICU word boundaries for the analyzer's locale (default: root). A segment is kept
   when its rule status is not `UBRK_WORD_NONE` (0–99): numbers (100–199), letters
   (200–299), kana (300–399) and ideographs (400–499). Spaces, punctuation, emoji and
   other symbols are WORD_NONE segments and are dropped.
3. map offsets: ICU reports UTF-16 code units; a character outside the BMP (an emoji, a
   mathematical letter) is two units but one `str` index, so every boundary is mapped
   back before slicing (otherwise everything after it would be cut one place off).
4. fold: full Unicode case folding, ICU `UnicodeString.foldCase()` with default options
   (not Turkic): `ß → ss`, `ﬁ → fi`, `ς → σ`, `İ → i̇`.
5. strip marks: canonical decomposition (NFD), then every code point whose general
   category is Mn (nonspacing mark) or Cf (format: soft hyphen, ZWSP, ZWJ, ZWNJ, LRM,
   RLM, bidi embeddings, word joiner, BOM), by ICU's Unicode data, is removed, then
   canonical composition (NFC). So `é → e`, `ά → α`, `ё → е`, `हिन्दी → हिनदी`, `שָׁלוֹם → שלום`;
   Hangul syllables decompose to jamo under NFD and NFC puts them back together.
   Spacing marks (Mc) and enclosing marks (Me) are kept. The cost is deliberate and the
   same at index and query time: Thai vowel and tone marks and Indic viramas are Mn too,
   so `ง่าย → งาย` and distinct words can fold together (more recall, less precision);
   the kana voicing marks are Mn under NFD as well, so `が → か` and `ピ → ヒ`.
   Removing Cf goes beyond tokenizers.md §6 (which strips Mn only): ICU keeps joiners and
   direction marks inside a word (`a\u200db`, `שלום\u200e`), and a user who types `ab`
   or `שלום` must still match it, so these invisible characters never reach a term.
6. drop: a segment whose folded text is empty (only marks) yields no token.
7. tag: `number` for ICU's number status; otherwise by the first character whose script
   is neither Common nor Inherited: Han → `ideographic`; Hiragana or Katakana → `kana`;
   Hangul → `hangul`; Thai, Lao, Khmer or Myanmar → `southeast-asian`; any other script
   → `word`. A segment with no such character falls back on its rule status (kana status
   → `kana`, ideograph status → `ideographic`, else `word`).

Offsets (`start`, `end`, `byte_start`, `byte_end`) always index the original text;
`position` counts the kept tokens from 0. Folding is cached per distinct word of up to
64 characters (`fold_word` is a pure function; words repeat, Zipf-style), which is the
only speed-up. An analyzer is safe to share between threads: each call makes its own
break iterator (ICU caches the rules, so that is cheap).
"""

from __future__ import annotations

import re
from functools import lru_cache

import icu

from engine.analysis.token import Token
from engine.errors import UsageError

#: The ICU and Unicode data versions this profile's tokens depend on (goldens record them).
ICU_VERSION: str = icu.ICU_VERSION
UNICODE_VERSION: str = icu.UNICODE_VERSION

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

_NFD = icu.Normalizer2.getNFDInstance()
_NFC = icu.Normalizer2.getNFCInstance()
_STRIPPED_CATEGORIES = frozenset(
    {icu.UCharCategory.NON_SPACING_MARK, icu.UCharCategory.FORMAT_CHAR}
)

_KIND_BY_SCRIPT: dict[int, str] = {
    icu.UScriptCode.HAN: "ideographic",
    icu.UScriptCode.HIRAGANA: "kana",
    icu.UScriptCode.KATAKANA: "kana",
    icu.UScriptCode.HANGUL: "hangul",
    icu.UScriptCode.THAI: "southeast-asian",
    icu.UScriptCode.LAO: "southeast-asian",
    icu.UScriptCode.KHMER: "southeast-asian",
    icu.UScriptCode.MYANMAR: "southeast-asian",
}
_SCRIPTLESS = frozenset({icu.UScriptCode.COMMON, icu.UScriptCode.INHERITED})


def replace_lone_surrogates(text: str) -> str:
    """Stage 1: every lone surrogate becomes U+FFFD; the length never changes.

    >>> replace_lone_surrogates("a\\ud800b") == "a\\ufffdb"
    True
    """
    return _LONE_SURROGATE.sub("\ufffd", text)


def utf16_to_index_map(text: str) -> list[int] | None:
    """Stage 3: for each UTF-16 offset of `text`, the `str` index; None when they agree.

    The list has one entry per UTF-16 code unit plus one for the end. The entry for the
    second unit of a surrogate pair is never used (ICU never breaks inside a pair).

    >>> utf16_to_index_map("abc") is None
    True
    >>> utf16_to_index_map("a😀b")
    [0, 1, 1, 2, 3]
    """
    if not _ASTRAL.search(text):
        return None
    index_of_unit: list[int] = []
    for index, character in enumerate(text):
        units = 2 if ord(character) > 0xFFFF else 1
        index_of_unit.extend([index] * units)
    index_of_unit.append(len(text))
    return index_of_unit


def word_segments(text: str, locale: icu.Locale) -> list[tuple[int, int, int]]:
    """Stage 2 + 3: `(start, end, rule_status)` of every non-WORD_NONE segment of `text`.

    `text` must already be free of lone surrogates. Offsets are `str` indexes.

    >>> word_segments("Don't 3.14 😀 a𝐀b", icu.Locale.getRoot())
    [(0, 5, 200), (6, 10, 100), (13, 16, 200)]
    """
    iterator = icu.BreakIterator.createWordInstance(locale)
    # Keep the UnicodeString alive in a local: the iterator only points at its buffer.
    unicode_text = icu.UnicodeString(text)
    iterator.setText(unicode_text)
    index_of_unit = utf16_to_index_map(text)
    segments: list[tuple[int, int, int]] = []
    start_unit = iterator.first()
    for end_unit in iterator:
        status = iterator.getRuleStatus()
        if status >= icu.UWordBreak.NONE_LIMIT:
            if index_of_unit is None:
                segments.append((start_unit, end_unit, status))
            else:
                segments.append((index_of_unit[start_unit], index_of_unit[end_unit], status))
        start_unit = end_unit
    return segments


def fold_word(word: str) -> str:
    """Stages 4 + 5: full case folding, then NFD, drop every Mn and Cf, NFC.

    >>> [fold_word(w) for w in ["Café", "STRASSE", "Straße", "ﬁle", "ΣΟΦΌΣ", "ёлка", "İ"]]
    ['cafe', 'strasse', 'strasse', 'file', 'σοφοσ', 'елка', 'i']
    >>> fold_word("한국어"), fold_word("soft\u00adhyphen"), fold_word("a\u200db")
    ('한국어', 'softhyphen', 'ab')
    """
    folded = str(icu.UnicodeString(word).foldCase())
    decomposed = _NFD.normalize(folded)
    without_marks = "".join(
        character
        for character in decomposed
        if icu.Char.charType(character) not in _STRIPPED_CATEGORIES
    )
    return _NFC.normalize(without_marks)


#: Words up to this length are folded through a cache; longer ones (pasted blobs, hashes)
#: are folded directly, so the cache never holds large strings.
CACHED_WORD_LENGTH = 64
_fold_cached = lru_cache(maxsize=65536)(fold_word)


def _fold(word: str) -> str:
    return _fold_cached(word) if len(word) <= CACHED_WORD_LENGTH else fold_word(word)


@lru_cache(maxsize=4096)
def _script_of(character: str) -> int:
    return icu.Script.getScript(ord(character)).getScriptCode()


def kind_of(segment: str, rule_status: int) -> str:
    """Stage 7: the token kind of an original segment with its ICU rule status.

    >>> [kind_of(s, 200) for s in ["abc", "한국어", "ภาษา", "ひ", "ー"]]
    ['word', 'hangul', 'southeast-asian', 'kana', 'word']
    >>> kind_of("中文", 400), kind_of("3.14", 100), kind_of("ー", 300)
    ('ideographic', 'number', 'kana')
    """
    if icu.UWordBreak.NUMBER <= rule_status < icu.UWordBreak.NUMBER_LIMIT:
        return "number"
    for character in segment:
        script = _script_of(character)
        if script not in _SCRIPTLESS:
            return _KIND_BY_SCRIPT.get(script, "word")
    if icu.UWordBreak.KANA <= rule_status < icu.UWordBreak.KANA_LIMIT:
        return "kana"
    if icu.UWordBreak.IDEO <= rule_status < icu.UWordBreak.IDEO_LIMIT:
        return "ideographic"
    return "word"


def _locale_named(name: str) -> icu.Locale:
    if name in ("root", ""):
        return icu.Locale.getRoot()
    locale = icu.Locale(name)
    if locale.isBogus() or not re.fullmatch("[a-z]{2,8}", locale.getLanguage()):
        raise UsageError(f"icu profile: unknown locale {name!r} (use 'root' or e.g. 'ja', 'th')")
    return locale


class IcuWordAnalyzer:
    """ICU word segmentation with full case folding and mark stripping (name "icu").

    >>> analyzer = IcuWordAnalyzer()
    >>> analyzer.terms("Don't panic: 中文字符测试, l’Été 2024!")
    ["don't", 'panic', '中文', '字符', '测试', 'l’ete', '2024']
    >>> [(t.text, t.start, t.end, t.kind) for t in analyzer.tokens("😀 Ünïcode 東京")]
    [('unicode', 2, 9, 'word'), ('東京', 10, 12, 'ideographic')]
    """

    name = "icu"

    def __init__(self, locale: str = "root") -> None:
        self.locale_name = locale or "root"
        self._locale = _locale_named(self.locale_name)

    def __repr__(self) -> str:
        return f"IcuWordAnalyzer(locale={self.locale_name!r})"

    def tokens(self, text: str) -> list[Token]:
        """All tokens of `text` in order; offsets index the original `text`."""
        clean_text = replace_lone_surrogates(text)
        tokens: list[Token] = []
        byte_offset = 0
        previous_end = 0
        for start, end, status in word_segments(clean_text, self._locale):
            segment = clean_text[start:end]
            term = _fold(segment)
            if not term:
                continue
            # UTF-8 offsets: a lone surrogate counts as the 3 bytes of U+FFFD, which is
            # what `clean_text` holds, so measuring `clean_text` gives FTS5-style offsets.
            byte_start = byte_offset + len(clean_text[previous_end:start].encode("utf-8"))
            byte_end = byte_start + len(segment.encode("utf-8"))
            tokens.append(
                Token(
                    text=term,
                    position=len(tokens),
                    start=start,
                    end=end,
                    byte_start=byte_start,
                    byte_end=byte_end,
                    kind=kind_of(segment, status),
                )
            )
            byte_offset, previous_end = byte_end, end
        return tokens

    def terms(self, text: str) -> list[str]:
        """Only the token texts; equal to `[t.text for t in self.tokens(text)]`."""
        clean_text = replace_lone_surrogates(text)
        terms: list[str] = []
        for start, end, _status in word_segments(clean_text, self._locale):
            term = _fold(clean_text[start:end])
            if term:
                terms.append(term)
        return terms

    def describe(self) -> list[str]:
        """One line per stage, in the order the stages run."""
        split = (
            f"split: ICU {ICU_VERSION} word boundaries, locale {self.locale_name} (UAX #29 +"
            " dictionaries for Chinese, Japanese, Thai, Lao, Khmer, Myanmar); keep number,"
            " letter, kana and ideograph segments; drop WORD_NONE (spaces, punctuation, emoji)"
        )
        return [
            "decode: lone surrogates → U+FFFD (one UTF-16 unit each: offsets unchanged)",
            split,
            "map offsets: ICU's UTF-16 code units → str indexes (astral characters are 2 units)",
            "fold: full Unicode case folding, ICU foldCase (ß → ss, ﬁ → fi, ς → σ)",
            f"strip marks: NFD, remove every Mn and Cf (Unicode {UNICODE_VERSION}), NFC"
            + " (é → e, ά → α, soft hyphen and ZWJ removed)",
            "drop: segments whose folded text is empty",
            "tag: number | ideographic (Han) | kana | hangul"
            + " | southeast-asian (Thai, Lao, Khmer, Myanmar) | word",
        ]
