"""A search across the partitions of a store: which partitions answer it, and the merge
of their answers.

Owns: the routing of a search (`route_search`: one agent's partition, the partitions
owning the request's keys, or every partition, each with the request it gets), the
asking of each partition (`partition_answer`, or `searched_together` for partitions
that search in one call), the answer across partitions (`answer_search`) and its
explanation (`explain_search`: each hit labelled with the partition that scored it,
found again after the merge by `hit_identity`). Must not touch: how a partition
searches, scores or explains (each partition is a whole backend), the merge rule itself
(`engine.search.merge`), which key belongs to which agent
(`engine.model.owner_agent_id`), and the store's own part (`engine.store.partitioned`:
its lock, which partitions it knows and opens, handed over as functions, and the
`indexing` flag of a background reconcile run, which it adds to the answer).

Why. Each agent's partition scores with its own statistics (why: the docstring of
`engine.store.partitioned`); a search across agents queries each agent's partition and
merges the answers by score, as OpenClaw's Gateway does with its databases
(behaviour.md §5.4, §6 step 5).

Search (`PartitionedStore.search`, answered by `answer_search`), after the store checked
the request, once (`engine.query.checked_request`; the partitions take it as checked):
* with an agent (`session_keys=None`): that agent's partition answers alone, exactly as
  one FTS5 database would (the default agent `main` when `agent_id` is None); an agent
  without a partition answers `{hits: [], truncated: false, indexing: false}` and nothing
  is created, as upstream's missing database does; an agent id that cannot be a folder
  name is refused (`InputError`);
* with explicit session keys: each partition owning one of the keys is asked for its keys
  with limit 25 (what the Gateway asks of each unconfigured agent's store); with
  `session_keys=()` every partition is asked, with limit 25; the answers are merged by
  `engine.search.merge.merge_partition_answers` (score descending, timestamp descending,
  messageId in `localeCompare` order, de-duplicated, cut to the request's limit,
  `truncated` when any partition truncated or the merge exceeded the limit, `indexing`
  when any partition is indexing, archived counts summed). Keys no partition owns match
  nothing. A partition that can (`AnswersLate`, the reference backend) answers without
  snippets and cuts only those of the hits the merge keeps: the same answer, without
  the excerpts of the hits the merge drops. In relevance order, each such partition
  asked after the answers hold `limit` hits gets the rank no merged hit can be worse
  than (`engine.search.merge.rank_bound_of`) and leaves out the rows ranked worse: the
  same answer again, without reading rows the merge would drop.

`explain` (of `PartitionedSnapshotStore`) follows the same routing and labels every hit
with the partition that scored it: its N, n and avgdl are that partition's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from engine.analysis.profiles import SEARCH_PROFILE
from engine.backends.protocol import (
    AnswersLate,
    Backend,
    Explainable,
    SearchesPartitions,
    has_capability,
    require_capability,
)
from engine.errors import InputError
from engine.model import (
    DEFAULT_AGENT_ID,
    NO_HITS,
    SearchHit,
    SearchResult,
    agent_id_problem,
    owner_agent_id,
)
from engine.query.checked_request import CheckedRequest
from engine.query.user_query import MAX_LIMIT, plan_terms
from engine.search.merge import (
    PartitionAnswer,
    RankBounds,
    merge_partition_answers,
    merge_partition_results,
)

if TYPE_CHECKING:  # imported when used: a search never explains
    from engine.store.explanation import PartitionedExplanation

#: What each partition is asked for when several are merged (the Gateway's limit for
#: the stores of unconfigured agents).
PARTITION_LIMIT = MAX_LIMIT

#: The partitions a search asks, each with the request it gets: (agent id, request).
SearchTargets = list[tuple[str, CheckedRequest]]


def route_search(request: CheckedRequest, known_agents: Callable[[], list[str]]
                 ) -> tuple[bool, SearchTargets]:
    """Whether `request` is scoped to one agent, and the partitions to ask with the
    request each gets (the rules are in the module docstring); `known_agents()` lists
    the store's partitions in agent order. Each partition's request is the checked
    request narrowed (`CheckedRequest.narrowed`), so no partition checks it again."""
    partitions = known_agents()
    if request.session_keys is None:
        agent_id = DEFAULT_AGENT_ID if request.agent_id is None else request.agent_id
        problem = agent_id_problem(agent_id)
        if problem is not None:
            raise InputError(problem)
        return True, [(agent_id, request)] if agent_id in partitions else []
    if not request.session_keys:
        part = (request if request.limit == PARTITION_LIMIT  # checked: an int here
                else request.narrowed(request.session_keys, PARTITION_LIMIT))  # one for all
        return False, [(agent_id, part) for agent_id in partitions]
    keys_by_agent: dict[str, list[str]] = {}
    for key in dict.fromkeys(request.session_keys):
        agent_id = owner_agent_id(key) if isinstance(key, str) else None
        if agent_id in partitions:
            keys_by_agent.setdefault(agent_id, []).append(key)
    return False, [(agent_id, request.narrowed(tuple(keys_by_agent[agent_id]), PARTITION_LIMIT))
                   for agent_id in partitions if agent_id in keys_by_agent]


def answer_search(request: CheckedRequest, scoped: bool, targets: SearchTargets,
                  open_partition: Callable[[str], Backend]) -> SearchResult:
    """The answer to `request` from the partitions `route_search` chose (`targets`, each
    opened by `open_partition(agent_id)`): one partition for an agent, else the merge."""
    if scoped:
        return open_partition(targets[0][0]).search(targets[0][1]) if targets else NO_HITS
    asked = [(open_partition(agent_id), part) for agent_id, part in targets]
    limit = request.page_limit
    together = searched_together(asked)
    if together is not None:
        return merge_partition_results(together, limit, order=request.order)
    answers: list[PartitionAnswer] = []
    bounds = RankBounds() if request.order == "relevance" else None  # the answers' so far
    for partition, part in asked:
        answers.append(partition_answer(
            partition, part, None if bounds is None else bounds.bound(limit)))
        if bounds is not None:
            bounds.add(answers[-1].candidates)
    return merge_partition_answers(answers, limit, order=request.order)


def explain_search(request: CheckedRequest, scoped: bool, targets: SearchTargets,
                   open_partition: Callable[[str], Backend]) -> PartitionedExplanation:
    """`request` explained hit by hit by the partitions `route_search` chose, each hit
    labelled with its partition (each partition `Explainable`)."""
    # Imported here: only `explain` needs the explanation values, and a search's
    # start-up should not define them (each value class costs its creation).
    from engine.store.explanation import (
        PartitionedExplanation,
        PartitionHitExplanation,
    )

    explained = [(agent_id, require_capability(open_partition(agent_id), Explainable,
                                               "explain").explain(part))
                 for agent_id, part in targets]
    labelled = [[PartitionHitExplanation(agent_id, item) for item in explanation.hits]
                for agent_id, explanation in explained]
    if explained:
        plan = explained[0][1].plan
    else:
        plan = plan_terms(request.trimmed_query, SEARCH_PROFILE.analyzer(),
                          match=request.match)
    retried = any(explanation.retried for _, explanation in explained)
    if scoped:
        truncated = bool(explained) and explained[0][1].truncated
        return PartitionedExplanation(plan, retried, truncated,
                                      tuple(labelled[0]) if labelled else ())
    merged = merge_partition_results(
        [SearchResult(tuple(item.hit for item in items), truncated=explanation.truncated)
         for items, (_, explanation) in zip(labelled, explained, strict=True)],
        request.page_limit, order=request.order)
    by_identity = {}
    for items in labelled:
        for item in items:
            by_identity.setdefault(hit_identity(item.hit), item)
    return PartitionedExplanation(
        plan, retried, merged.truncated,
        tuple(by_identity[hit_identity(hit)] for hit in merged.hits))


def searched_together(asked: Sequence[tuple[Backend, CheckedRequest]]
                      ) -> list[SearchResult] | None:
    """The partitions' whole results in one call, when they are all of one class that
    `SearchesPartitions` and are asked the same request (a search across every agent);
    None otherwise (then each gives its `partition_answer`)."""
    if not asked:
        return None
    first_partition, first_request = asked[0]
    kind = type(first_partition)
    if not has_capability(first_partition, SearchesPartitions):
        return None
    if not all(type(partition) is kind and request is first_request
               for partition, request in asked):
        return None
    return kind.search_partitions([partition for partition, _ in asked], first_request)


def partition_answer(partition: Backend, request: CheckedRequest,
                     rank_bound: float | None = None) -> PartitionAnswer:
    """A partition's answer to its part of a merged search: its hits' snippets cut late
    when it can (`AnswersLate`), and without the rows ranked worse than `rank_bound`, the
    rank the partitions asked before have shown no merged hit can be worse than
    (`engine.search.merge.rank_bound_of`); else its whole result."""
    if has_capability(partition, AnswersLate):
        return partition.search_answer(request, rank_bound)
    return PartitionAnswer(partition.search(request))


def hit_identity(hit: SearchHit) -> tuple[str, str, str]:
    """What the merge de-duplicates on: (sessionKey, sessionId, messageId)."""
    return (hit.session_key, hit.session_id, hit.message_id)
