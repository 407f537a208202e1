"""Hand-written word lists for synthetic transcripts, and a seeded Zipfian word sampler.

Owns: every word the corpus generator may emit into natural-language text, grouped by
language and ordered from most to least frequent, plus the separate vocabulary of code
identifiers and log fields. Must not touch: files, randomness sources other than the
`random.Random` it is handed, or any engine module.

The lists are written by hand for this project (no downloads). Ranks are approximate:
what matters for a search benchmark is the shape (a few words in most messages, a long
tail in few), which the Zipf weights `1 / rank ** exponent` give.

Invariants the probe counting relies on (`engine.bench.probes`, pinned by tests):
* every natural-language word is one `unicode61` token: letters only (Latin words may
  carry diacritics), no spaces, digits or punctuation; CJK words are 2–3 characters;
* `PLANTED_WORDS` (the probe-only words) appear in no list here, and no code or log
  token equals a probe word or starts with the prefix probe;
* the words `per` and `session` appear in no list, so the tokens `per session` stand
  next to each other only where the generator plants the compound `per-session`.
"""

from __future__ import annotations

import bisect
import itertools
import random
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of a hand-written list, in order.

    >>> _words(" a  b  c ")
    ('a', 'b', 'c')
    """
    return tuple(text.split())


ENGLISH_WORDS: tuple[str, ...] = _words(
    """
    the to and a of it is in you that i for this on be with can we not have are
    if what do so will but as at or just all my your from there me an was about
    one they out up how check file run now use some would like get here need should
    make know then see also could more no when which time want let look think new
    test build error code fix change update work first last other way still only
    because into after before back well sure good right next over again thanks please
    data line value return call function server request user config output input
    version release branch commit merge review issue problem result results message
    deployment failed friday database migration rollback script pipeline staging
    production cluster service container image memory disk network latency timeout
    retry queue worker job schedule cron backup restore index search query table
    column row schema field type string number list map key path directory folder
    log logs warning debug trace stack frame thread process signal exit status
    install package dependency module import export library framework plugin
    window screen button click page view panel menu sidebar dialog layout theme
    meeting agenda notes summary report draft email invoice budget contract client
    customer team manager project plan roadmap milestone deadline estimate priority
    week month year today tomorrow yesterday morning evening night monday tuesday
    wednesday thursday saturday sunday hour minute second date calendar
    question answer idea reason example detail context history note comment
    small large fast slow simple clear quick easy hard better worse best worst
    open close start stop read write send receive create delete remove add keep
    try found seems looks works broken missing wrong correct exactly probably maybe
    although however therefore instead otherwise meanwhile finally
    kitchen garden recipe travel flight hotel ticket museum weather rain snow
    coffee dinner lunch breakfast market price cheap expensive doctor appointment
    birthday gift family friend weekend holiday vacation beach mountain river
    lantern harbor quarry meadow orchard thimble walrus saffron ballast zephyr
    """
)

FRENCH_WORDS: tuple[str, ...] = _words(
    """
    le la les de des et est un une pour que qui pas dans sur avec être très déjà
    où là même après aussi peut faire voilà français problème réunion équipe
    été préférence élève fenêtre hôpital château forêt crème brûlée naïve façade
    garçon leçon reçu noël cœur sœur œuvre théâtre numéro célèbre deuxième
    première dernière intéressant nécessaire rédiger vérifier créer supprimer
    """
)

GERMAN_WORDS: tuple[str, ...] = _words(
    """
    der die das und ist nicht ein eine mit für auf über schön größe grüße
    straße müssen können möchte würde natürlich gemütlich zurück früh später
    fähig gebäude übersetzung prüfung bestätigung änderung lösung ergebnis
    besprechung mädchen brötchen käse bücher tür schlüssel fußball weiß
    """
)

SPANISH_WORDS: tuple[str, ...] = _words(
    """
    el los las del por con una para como más está también qué cómo dónde cuándo
    año niño mañana señor después aquí allí sí además información reunión
    canción corazón camión jamón acción difícil fácil rápido último música
    teléfono página número pequeño español compañía diseño sueño ayúdame
    """
)

VIETNAMESE_WORDS: tuple[str, ...] = _words(
    """
    và của là có không được những người trong một cho với này đã các khi
    thì đến nhưng làm cũng như về sẽ phải từ bạn tôi chúng việc
    tiếng nước thời gian hôm nay ngày mai cảm ơn xin chào họp nhóm dự án
    """
)

#: Chinese words (two or three Han characters). Written without spaces, several words
#: make one `unicode61` token, so a word inside a run is found only by the CJK retry.
CHINESE_WORDS: tuple[str, ...] = _words(
    """
    我们 今天 明天 下午 项目 会议 评审 讨论 排期 问题 数据 服务器 部署 失败
    测试 代码 用户 时间 工作 需要 可以 已经 没有 因为 所以 但是 如果 应该
    文件 配置 版本 发布 修复 错误 日志 搜索 索引 查询 客户 报告 计划 周五
    """
)

JAPANESE_WORDS: tuple[str, ...] = _words(
    """
    今日 明日 会議 資料 確認 お願い します ありがとう ください 問題 対応
    サーバー データ テスト エラー ログ 検索 設定 更新 予定 時間 東京 大阪
    """
)

KOREAN_WORDS: tuple[str, ...] = _words(
    """
    오늘 내일 회의 자료 확인 부탁 감사 합니다 문제 서버 데이터 테스트
    오류 로그 검색 설정 업데이트 일정 시간 서울 부산 프로젝트 팀
    """
)

#: Identifier pieces for code blocks. unicode61 splits on `_` and `.`, keeps camelCase
#: whole (`parseConfig` → `parseconfig`); none of these equals a probe word.
CODE_IDENTIFIERS: tuple[str, ...] = _words(
    """
    parseConfig loadSettings raw_input retryCount max_attempts backoff_ms
    handlerFn ctx req res payload buf idx len tmp acc cfg env argv kwargs
    fetchRows rowCount cursor conn pool_size sql_text json_blob http_client
    assertEqual mockClient setUp tearDown fixture_dir tmp_path capsys
    """
)

CODE_KEYWORDS: tuple[str, ...] = _words(
    "def return import from class const let await async for while if else try except"
)

LOG_LEVELS: tuple[str, ...] = ("INFO", "WARN", "ERROR", "DEBUG")

LOG_COMPONENTS: tuple[str, ...] = _words(
    "gateway scheduler indexer reconciler http_server auth_proxy db_pool cache_layer"
)

LOG_EVENTS: tuple[str, ...] = _words(
    """
    request_completed connection_reset upstream_timeout cache_miss cache_hit
    lock_acquired lock_released job_started job_finished healthcheck_ok
    """
)

#: Words that exist only where the generator plants them for a probe. They appear in
#: no list above (a test pins this).
PLANTED_WORDS: tuple[str, ...] = ("quokka", "xylophonic", "zyzzogeton", "per", "session")

LANGUAGES: tuple[str, ...] = ("en", "fr", "de", "es", "vi", "zh", "ja", "ko")

WORDS_BY_LANGUAGE: dict[str, tuple[str, ...]] = {
    "en": ENGLISH_WORDS,
    "fr": FRENCH_WORDS,
    "de": GERMAN_WORDS,
    "es": SPANISH_WORDS,
    "vi": VIETNAMESE_WORDS,
    "zh": CHINESE_WORDS,
    "ja": JAPANESE_WORDS,
    "ko": KOREAN_WORDS,
}

#: Share of messages written mostly in each language (they sum to 1).
LANGUAGE_SHARES: dict[str, float] = {
    "en": 0.84, "fr": 0.035, "de": 0.03, "es": 0.03, "vi": 0.02,
    "zh": 0.025, "ja": 0.01, "ko": 0.01,
}

#: Languages written without spaces between words.
UNSPACED_LANGUAGES: frozenset[str] = frozenset({"zh", "ja"})


def fold_word(word: str) -> str:
    """Lowercase and strip combining marks: the probe counter's model of a token.

    It agrees with `unicode61 remove_diacritics 2` and with `unaccent` + `lower` on every
    word the probes use (a test pins that); it is not a general tokenizer.

    >>> fold_word("Déjà")
    'deja'
    >>> fold_word("Straße")
    'straße'
    """
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@dataclass(frozen=True, slots=True)
class ZipfSampler:
    """Draws words with probability proportional to `1 / rank ** exponent`.

    `cumulative_weights` is precomputed so a draw is one `bisect` (O(log n)).

    >>> sampler = ZipfSampler.build(("a", "b", "c"), exponent=1.0)
    >>> [round(w, 3) for w in sampler.cumulative_weights]
    [1.0, 1.5, 1.833]
    >>> sampler.draw(random.Random(7), 4)
    ['a', 'a', 'b', 'a']
    """

    words: tuple[str, ...]
    cumulative_weights: tuple[float, ...]

    @classmethod
    def build(cls, words: Sequence[str], exponent: float = 1.07) -> ZipfSampler:
        """Build a sampler over `words`, the first being the most frequent."""
        weights = [1.0 / (rank ** exponent) for rank in range(1, len(words) + 1)]
        return cls(tuple(words), tuple(itertools.accumulate(weights)))

    def draw(self, generator: random.Random, count: int) -> list[str]:
        """Return `count` words drawn independently."""
        total = self.cumulative_weights[-1]
        cumulative = self.cumulative_weights
        words = self.words
        return [
            words[bisect.bisect_right(cumulative, generator.random() * total)]
            for _ in range(count)
        ]


def language_samplers() -> dict[str, ZipfSampler]:
    """One Zipf sampler per language, in `LANGUAGES` order."""
    return {language: ZipfSampler.build(WORDS_BY_LANGUAGE[language]) for language in LANGUAGES}
