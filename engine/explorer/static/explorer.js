// session-search explorer: every panel draws what its JSON endpoint answers (docs/explore.md).
// Text from the store is always set as text (never as HTML): a transcript cannot inject markup.
"use strict";

const state = { panel: "hits", hit: null, hits: [], analysisEdited: false, timer: null };

// ----- small helpers ------------------------------------------------------------------

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "onclick") node.addEventListener("click", value);
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function $(id) { return document.getElementById(id); }

function fill(target, ...children) {
  // replace `target`'s content by `children`, leaving out the absent ones
  target.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined));
}

function number(value, digits = 6) {
  // a number for people (the exact value stays in data-value, for readers and tests)
  if (typeof value !== "number") return el("span", { class: "num" }, String(value));
  const shown = Number.isInteger(value) ? String(value)
    : Math.abs(value) < 0.0005 && value !== 0 ? value.toExponential(2)
      : String(Number.parseFloat(value.toFixed(digits)));
  return el("span", { class: "num", "data-value": String(value), title: String(value) }, shown);
}

function table(headers, rows, options = {}) {
  return el("table", { class: options.class, id: options.id },
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { class: h.num ? "num" : null }, h.label || h)))),
    el("tbody", {}, rows));
}

function marked(text, spans, cls) {
  // `text` with the [start, end) spans wrapped in <mark>
  const parts = [];
  let at = 0;
  for (const [start, end] of spans || []) {
    if (start > at) parts.push(text.slice(at, start));
    parts.push(el("mark", { class: cls }, text.slice(start, end)));
    at = Math.max(at, end);
  }
  parts.push(text.slice(at));
  return parts;
}

function formatTime(ms) {
  if (typeof ms !== "number") return String(ms);
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

function showError(target, error) {
  fill(target, el("div", { class: "error" }, error.message || String(error)));
}

async function getJson(path, params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) {
    if (value === null || value === undefined || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, item);
  }
  const response = await fetch(`${path}?${query}`, { headers: { accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(`${body.error || response.statusText} (HTTP ${response.status})`);
  return body;
}

// ----- the request the form describes ----------------------------------------------

function searchParams() {
  const params = { q: $("query").value, limit: $("limit").value };
  if ($("requester").value.trim()) {
    params.requester = $("requester").value.trim();
  } else {
    Object.assign(params, { match: $("match").value, order: $("order").value,
      role: $("role").value, agent: $("agent").value.trim() });
  }
  return params;
}

function saveUrl() {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(searchParams())) if (value) params.set(name, value);
  params.set("panel", state.panel);
  if (state.hit !== null) params.set("hit", state.hit);
  history.replaceState(null, "", `?${params}`);
  const json = $("json-link");
  json.href = `/api/${state.panel === "why" ? "why" : state.panel === "compare" ? "compare" : "hits"}?${params}`;
}

function showPanel(name) {
  state.panel = name;
  for (const button of document.querySelectorAll("#tabs button")) {
    button.setAttribute("aria-selected", String(button.dataset.panel === name));
  }
  for (const section of document.querySelectorAll(".panel")) section.hidden = section.id !== `panel-${name}`;
  saveUrl();
  if (name === "index") loadFacts();
}

// ----- Analysis ----------------------------------------------------------------------

async function runAnalysis() {
  const text = $("analysis-text").value;
  const out = $("analysis-out");
  if (!text) { fill(out); return; }
  try {
    const data = await getJson("/api/analysis", { text });
    const shared = new Set(data.terms.filter((t) => t.profiles.length === data.profiles.length).map((t) => t.term));
    const runs = data.cjkRuns.map((run) => [run.start, run.end]);
    const parts = [el("div", { class: "textline", id: "analysis-source" }, marked(data.text, runs, "cjk"))];
    if (data.cjkRuns.length) {
      parts.push(el("p", { class: "help" }, `CJK runs: ${data.cjkRuns.map((r) => `${r.text} [${r.start}–${r.end})`).join(", ")}`));
    }
    for (const profile of data.profiles) {
      parts.push(el("h3", {}, profile.label, el("span", { class: "muted" }, ` — ${profile.tokens.length} token(s)`)));
      parts.push(el("div", { class: "tokens", "data-profile": profile.profile },
        profile.tokens.map((token) => el("span", {
          class: `token${shared.has(token.text) ? "" : " differs"}`,
          title: `${token.kind}; bytes ${token.byteStart}–${token.byteEnd}; ascii ${token.ascii}`,
        }, el("span", { class: "term" }, token.text),
        token.source !== token.text ? el("span", { class: "where" }, `← ${token.source}`) : null,
        el("span", { class: "where" }, `@${token.position} [${token.start}–${token.end})`)))));
      parts.push(el("details", {}, el("summary", { class: "muted" }, "stages"),
        el("ol", {}, profile.stages.map((stage) => el("li", { class: "muted" }, stage)))));
    }
    fill(out, ...parts);
  } catch (error) { showError(out, error); }
}

// ----- Query -------------------------------------------------------------------------

async function runQuery() {
  const out = $("query-out");
  try {
    const data = await getJson("/api/query", { q: $("query").value, match: $("match").value });
    fill(out,
      el("ul", { class: "facts" },
        el("li", {}, "trimmed: ", el("code", {}, data.trimmed), ` — ${data.units} of ${data.maxUnits} UTF-16 units`),
        el("li", {}, "FTS5 MATCH string (what SQLite is sent): ", el("code", { id: "fts5-match" }, data.fts5Match)),
        el("li", {}, data.matchesNothing ? "this plan matches nothing" : `${data.phrases.length} phrase(s), ANDed`)),
      table(["term", "tokens (the phrase)", "prefix", "empty"], data.terms.map((term) => el("tr", {},
        el("td", { class: "mono" }, term.term),
        el("td", { class: "mono" }, term.tokens.length ? `"${term.tokens.join(" ")}"` : '"" (no tokens)'),
        el("td", {}, term.prefix ? "yes: the last token completes" : ""),
        el("td", {}, term.empty ? "yes: matches nothing" : "")))),
      data.cjkRetry ? el("p", {}, "CJK retry plan: substrings ",
        el("code", {}, data.cjkRetry.substrings.join(" AND ")),
        data.cjkRetry.phrases.length ? ` with the phrases ${data.cjkRetry.phrases.map((p) => `"${p.terms.join(" ")}"`).join(" AND ")}` : "") : null,
      ...data.warnings.map((warning) => el("div", { class: "warning" }, warning)));
  } catch (error) { showError(out, error); }
}

// ----- Hits --------------------------------------------------------------------------

function hitActions(number, hit) {
  return el("td", {},
    el("button", { type: "button", class: "small", "data-action": "why", onclick: () => openWhy(number) }, "Why"), " ",
    el("button", { type: "button", class: "small", "data-action": "history", onclick: () => openHistory(hit) }, "History"), " ",
    el("button", { type: "button", class: "small", "data-action": "tokens", onclick: () => openTokens(hit) }, "Tokens"));
}

async function runHits() {
  const out = $("hits-out");
  if (!$("query").value.trim()) { fill(out, el("p", { class: "muted" }, "Type a query above.")); return; }
  try {
    const data = await getJson("/api/hits", searchParams());
    const parts = [el("h3", {}, "Scope"), el("ul", { class: "facts", id: "hits-scope" }, data.scope.map((line) => el("li", {}, line)))];
    if (data.mode === "tool") {
      const results = data.answer.results || [];
      state.hits = results;
      parts.push(el("h3", {}, `sessions_search answered ${results.length} result(s)`));
      parts.push(table(["#", "session", "role", "time", { label: "score", num: true }, "excerpt (300 units at most)", ""],
        results.map((hit, index) => el("tr", { class: "hit" },
          el("td", {}, index), el("td", { class: "mono" }, hit.sessionKey), el("td", {}, hit.role),
          el("td", { class: "mono" }, formatTime(hit.timestamp)), el("td", { class: "num" }, number(hit.score)),
          el("td", {}, hit.snippet), hitActions(index, hit)))));
      parts.push(el("p", { class: "help" }, `results JSON: ${data.bytes.bytes} of ${data.bytes.budget} bytes (the tool's budget)`));
    } else {
      const hits = data.result.hits;
      state.hits = hits;
      parts.push(el("h3", {}, `${hits.length} hit(s) from the ${data.backend} backend`));
      const rows = [];
      hits.forEach((hit, index) => {
        if (index > 0) {
          const pair = data.tieBreaks[index - 1];
          rows.push(el("tr", { class: "between" }, el("td", { colspan: 7 }, `↑ above by ${pair.decidedBy}`)));
        }
        rows.push(el("tr", { class: "hit", "data-message-id": hit.messageId },
          el("td", {}, index), el("td", { class: "mono" }, hit.sessionKey), el("td", {}, hit.role),
          el("td", { class: "mono" }, formatTime(hit.timestamp)), el("td", { class: "num" }, number(hit.score)),
          el("td", {}, marked(hit.snippet, data.matched[index])), hitActions(index, hit)));
      });
      parts.push(table(["#", "session", "role", "time", { label: "score", num: true }, "excerpt", ""], rows, { id: "hits-table" }));
      if (!hits.length) parts.push(el("p", {}, "No hits."), ...data.noHitReasons.map((r) => el("div", { class: "warning" }, r)));
    }
    parts.push(el("h3", {}, "Flags"), el("ul", { class: "facts", id: "hits-flags" }, data.flags.map((line) => el("li", {}, line))));
    fill(out, ...parts);
  } catch (error) { state.hits = []; showError(out, error); }
}

// ----- Why this hit ------------------------------------------------------------------

function openWhy(number) { state.hit = number; showPanel("why"); runWhy(); }

async function runWhy() {
  const out = $("why-out");
  if (state.hit === null) return;
  try {
    const data = await getJson("/api/why", { ...searchParams(), requester: null, hit: state.hit });
    const hit = data.explanation;
    const parts = [el("p", { class: "big" }, `#${data.hit} of ${data.count}: `, el("code", {}, hit.messageId),
      el("span", { class: "muted" }, ` in ${hit.sessionKey} (partition ${hit.partition}), score `), number(hit.score))];
    if (hit.bm25) {
      const bm25 = hit.bm25;
      parts.push(el("h3", {}, "bm25, per phrase"),
        el("p", { id: "why-inputs" }, "N (rows in the partition) = ", number(bm25.N), " · D (tokens in this row) = ", number(bm25.D),
          " · avgdl = ", number(bm25.avgdl), " · k1 = ", number(bm25.k1), " · b = ", number(bm25.b)),
        table(["phrase", { label: "n (rows holding it)", num: true }, { label: "f (in this row)", num: true },
          { label: "idf", num: true }, "floored", { label: "contribution", num: true }],
        bm25.phrases.map((phrase) => el("tr", { class: "phrase" },
          el("td", { class: "mono" }, `"${phrase.phrase}"`), el("td", { class: "num", "data-field": "n" }, number(phrase.n)),
          el("td", { class: "num", "data-field": "f" }, number(phrase.f)), el("td", { class: "num", "data-field": "idf" }, number(phrase.idf)),
          el("td", {}, phrase.idfFloored ? "yes (≤ 0 → 1e-6)" : ""),
          el("td", { class: "num", "data-field": "contribution" }, number(phrase.contribution)))), { id: "why-phrases" }),
        el("p", { id: "why-total" }, "bm25 = ", number(bm25.bm25), " → score = −bm25 = ", number(bm25.score)),
        ...Object.values(data.formula).map((line) => el("p", { class: "formula" }, line)));
    } else {
      parts.push(el("div", { class: "warning" }, "Found by the CJK retry's substrings alone: no bm25 (score 0)."));
    }
    parts.push(el("h3", {}, "Tie-breaks with its neighbours"));
    const ties = [];
    if (data.above) ties.push(el("li", {}, `below #${data.above.upper}: by ${data.above.decidedBy}`, data.above.values ? ` (${data.above.values.join(" vs ")})` : ""));
    if (data.below) ties.push(el("li", {}, `above #${data.below.lower}: by ${data.below.decidedBy}`, data.below.values ? ` (${data.below.values.join(" vs ")})` : ""));
    if (!ties.length) ties.push(el("li", {}, "the only hit"));
    parts.push(el("ul", { class: "facts", id: "why-ties" }, ties),
      el("p", { class: "help" }, `The order tried: ${(data.above || data.below || { criteria: ["score", "timestamp", "messageId"] }).criteria.join(", then ")}.`));
    const excerpt = hit.excerpt;
    parts.push(el("h3", {}, "The excerpt"));
    if (excerpt.kind === "window") {
      parts.push(el("p", {}, `${excerpt.tokens} tokens in the row; windows of ${excerpt.window} tokens; sentence starts at token ${excerpt.sentenceStarts.join(", ") || "(none)"}`),
        table(["candidate", { label: "anchor", num: true }, { label: "start", num: true }, { label: "score", num: true }, ""],
          excerpt.candidates.map((c) => el("tr", { class: c.chosen ? "chosen" : null },
            el("td", {}, c.kind), el("td", { class: "num" }, c.anchor), el("td", { class: "num" }, c.start),
            el("td", { class: "num" }, c.score), el("td", {}, c.chosen ? "best so far" : "")))),
        el("p", {}, `chosen: the window starting at token ${excerpt.start} (score ${excerpt.score}); a hit scores 1000 first, 1 again; a window starting a sentence gets +100 (+120 at the text's start)`));
    } else {
      parts.push(el("p", {}, `no window: the text around the earliest substring (${excerpt.needles.join(", ")})`));
    }
    const bounds = data.excerptBounds;
    parts.push(el("p", { class: "textline" }, marked(hit.snippet, data.matched)),
      el("ul", { class: "facts", id: "why-bounds" },
        el("li", {}, `${bounds.units} UTF-16 units; the store's bound is ${bounds.kernelBound}: ${bounds.kernelCut ? "cut there, “…” added" : "not cut"}`),
        el("li", {}, `the agent tool cuts at ${bounds.toolBound} units: ${bounds.toolCut ? `cut to ${bounds.toolUnits} units (with “…”)` : "not cut"}`),
        el("li", {}, "the tool keeps hits while its results stay within 32 KiB of JSON (the Hits panel with a requester shows the bytes)")));
    fill(out, ...parts);
  } catch (error) { showError(out, error); }
}

// ----- Index -------------------------------------------------------------------------

async function loadFacts() {
  const out = $("index-facts");
  try {
    const data = await getJson("/api/index/facts", {});
    fill(out, el("h3", {}, "Partitions (one per agent)"),
      table(["agent", "backend", { label: "commits", num: true }, { label: "rows", num: true }, { label: "tokens", num: true },
        { label: "avgdl", num: true }, "segments (rows)", { label: "buffered", num: true }],
      data.partitions.map((p) => el("tr", {}, el("td", { class: "mono" }, p.agent), el("td", {}, p.backend),
        el("td", { class: "num" }, p.commitGeneration ?? ""), el("td", { class: "num" }, p.index ? p.index.rows : ""),
        el("td", { class: "num" }, p.index ? p.index.tokens : ""), el("td", { class: "num" }, p.index ? number(p.index.averageLength, 3) : ""),
        el("td", { class: "mono" }, p.index ? p.index.segments.map((s) => `${s.name} (${s.rows})`).join(", ") : p.note),
        el("td", { class: "num" }, p.index ? p.index.bufferedRows : "")))));
  } catch (error) { showError(out, error); }
}

async function runPostings() {
  const out = $("index-postings");
  const term = $("index-term").value;
  if (!term.trim()) { fill(out); return; }
  try {
    const data = await getJson("/api/index/postings", { term, prefix: $("index-prefix").checked ? "1" : "" });
    const parts = [];
    for (const partition of data.partitions) {
      parts.push(el("h3", {}, `partition ${partition.agent}`, el("span", { class: "muted" }, partition.note ? ` — ${partition.note}` : ` — ${partition.rows} rows`)));
      for (const entry of partition.terms || []) {
        const lists = entry.prefix ? entry.expanded : [entry];
        if (entry.prefix) parts.push(el("p", {}, `"${entry.term}"* completes to ${entry.completions} term(s)`));
        for (const item of lists) {
          parts.push(el("p", {}, el("code", {}, item.term), ` — n = ${item.n} row(s)`));
          if (item.postings.length) parts.push(
            table(["doc", "session", "message", "role", { label: "length", num: true }, "positions"],
              item.postings.map((p) => el("tr", {}, el("td", { class: "num" }, p.docId), el("td", { class: "mono" }, p.sessionId),
                el("td", { class: "mono" }, p.messageId), el("td", {}, p.role), el("td", { class: "num" }, p.length),
                el("td", { class: "mono" }, p.positions.join(", "))))));
        }
      }
    }
    fill(out, ...parts);
  } catch (error) { showError(out, error); }
}

async function openTokens(hit) {
  showPanel("index");
  const out = $("index-message");
  try {
    const data = await getJson("/api/index/message", { sessionId: hit.sessionId, messageId: hit.messageId });
    if (data.note) { fill(out, el("p", { class: "warning" }, data.note)); return; }
    fill(out, el("h3", {}, `Row ${data.docId} of partition ${data.agent}: `, el("code", {}, data.messageId)),
      el("p", {}, `${data.length} tokens, seq ${data.seq}, ${data.role}`),
      el("p", { class: "textline" }, data.text),
      el("div", { class: "tokens" }, data.tokens.map((t) => el("span", { class: "token" },
        el("span", { class: "term" }, t.text), el("span", { class: "where" }, `@${t.position}`)))));
  } catch (error) { showError(out, error); }
}

// ----- History -----------------------------------------------------------------------

function openHistory(hit) {
  $("history-key").value = hit.sessionKey;
  $("history-anchor").value = hit.messageId || "";
  $("history-session").value = hit.sessionId || "";
  showPanel("history");
  runHistory({});
}

function messageText(message) {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) {
    return message.content.map((block) => (block && typeof block.text === "string" ? block.text : `[${block && block.type}]`)).join(" ");
  }
  return typeof message.text === "string" ? message.text : "";
}

async function runHistory(extra) {
  const out = $("history-out");
  const params = { sessionKey: $("history-key").value, limit: $("history-limit").value, ...extra };
  if (!extra.cursor) Object.assign(params, { messageId: $("history-anchor").value, sessionId: $("history-anchor").value ? $("history-session").value : "" });
  try {
    const data = await getJson("/api/history", params);
    const rows = data.rows.map((row, index) => {
      const message = data.page.messages[index];
      if (row.kind !== "message") {
        const label = { reset: "session reset", compaction: "compaction", notice: "notice" }[row.kind];
        const detail = row.kind === "reset" ? "" : `: ${messageText(message)}`;
        return el("tr", { class: "boundary" }, el("td", { colspan: 4 }, `──── ${label}${detail} ────`));
      }
      return el("tr", { class: row.anchor ? "anchor" : null }, el("td", { class: "num" }, row.seq),
        el("td", { class: "mono" }, formatTime(message.timestamp)), el("td", {}, message.role), el("td", {}, messageText(message)));
    });
    const page = data.page;
    const controls = [];
    if (page.olderCursor) controls.push(el("button", { type: "button", class: "small", onclick: () => runHistory({ cursor: page.olderCursor }) }, "older rows"));
    if (page.newerCursor) controls.push(el("button", { type: "button", class: "small", onclick: () => runHistory({ cursor: page.newerCursor }) }, "newer rows"));
    fill(out, el("div", { class: data.scope === "interval" ? "warning" : "ok", id: "history-view" }, data.view),
      table(["seq", "time", "role", "message"], rows, { id: "history-table" }),
      el("p", {}, `${page.totalMessages ?? "?"} row(s) in this view; `, ...controls),
      el("p", { class: "help" }, "Windows of this key: ", data.windows.map((w) => `${w.sessionId} (${w.current ? "current" : "retained"}${w.archived ? ", archived" : ""}, ${w.reason})`).join(" · ")));
  } catch (error) { showError(out, error); }
}

// ----- Compare -----------------------------------------------------------------------

function answerRows(answer, differing, side) {
  const hits = answer.hits || answer.results || [];
  return hits.map((hit, index) => {
    const cell = (name, content, cls) => el("td", { class: `${cls || ""}${differing.has(`${answer.hits ? "hits" : "results"}[${index}].${name}`) || differing.has(`${answer.hits ? "hits" : "results"}[${index}]`) ? " diff" : ""}` }, content);
    return el("tr", { "data-side": side }, el("td", {}, index), cell("messageId", hit.messageId, "mono"),
      cell("score", number(hit.score), "num"), cell("snippet", hit.snippet));
  });
}

async function runCompare() {
  const out = $("compare-out");
  fill(out, el("p", { class: "muted" }, "running on both backends (the first Compare copies the store)…"));
  try {
    const params = searchParams();
    const data = await getJson("/api/compare", params);
    const differing = new Set(data.differences.map((d) => d.path));
    fill(out,
      el("div", { class: data.same ? "ok" : "warning", id: "compare-verdict" },
        data.same ? `Same answer on ${data.backends.join(" and ")}.` : `${data.differenceCount} difference(s) between ${data.backends.join(" and ")}.`),
      el("div", { class: "columns" }, data.backends.map((backend, side) => el("div", {},
        el("h3", {}, backend),
        table(["#", "message", { label: "score", num: true }, "excerpt"], answerRows(data.answers[side], differing, backend)),
        el("p", { class: "help" }, `truncated ${data.answers[side].truncated ?? false}, indexing ${data.answers[side].indexing ?? false}`)))),
      data.differences.length ? table(["path", data.backends[0], data.backends[1]], data.differences.map((d) => el("tr", {},
        el("td", { class: "mono" }, d.path), el("td", { class: "diff" }, JSON.stringify(d.values[0])), el("td", { class: "diff" }, JSON.stringify(d.values[1]))))) : null);
    const link = $("save-case");
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
    link.href = `/api/case?${query}`;
    link.hidden = false;
  } catch (error) { showError(out, error); }
}

// ----- wiring ------------------------------------------------------------------------

function runAll() {
  state.hit = null;
  saveUrl();
  if (!state.analysisEdited) { $("analysis-text").value = $("query").value; runAnalysis(); }
  if (!$("query").value.trim()) { runHits(); return; }
  runQuery();
  runHits();
  $("save-case").hidden = true;
  $("compare-out").replaceChildren();
}

function later(action) { clearTimeout(state.timer); state.timer = setTimeout(action, 200); }

async function start() {
  const params = new URLSearchParams(location.search);
  for (const name of ["query", "match", "order", "role", "agent", "limit", "requester"]) {
    const value = params.get(name === "query" ? "q" : name);
    if (value !== null) $(name).value = value;
  }
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => {
      showPanel(button.dataset.panel);
      if (button.dataset.panel === "why" && state.hit === null && state.hits.length) openWhy(0);
      if (button.dataset.panel === "history" && !$("history-key").value && state.hits.length) {
        openHistory(state.hits[state.hit ?? 0]);
      }
      if (button.dataset.panel === "index" && !$("index-term").value && $("query").value.trim()) {
        $("index-term").value = $("query").value.trim().split(/\s+/)[0];
        $("index-prefix").checked = $("match").value === "prefix";
        runPostings();
      }
    });
  }
  $("search-form").addEventListener("submit", (event) => { event.preventDefault(); runAll(); });
  $("search-form").addEventListener("input", () => later(runAll));
  $("search-form").addEventListener("change", () => later(runAll));
  $("analysis-text").addEventListener("input", () => { state.analysisEdited = true; later(runAnalysis); });
  $("index-form").addEventListener("submit", (event) => { event.preventDefault(); runPostings(); });
  $("history-form").addEventListener("submit", (event) => { event.preventDefault(); runHistory({}); });
  $("compare-run").addEventListener("click", runCompare);
  try {
    const facts = await getJson("/api/index/facts", {});
    $("store-line").textContent = `store ${facts.store} · backend ${facts.backend} · ${facts.partitions.length} partition(s) · Compare runs ${facts.compareBackend} beside it`;
  } catch (error) { $("store-line").textContent = error.message; }
  showPanel(params.get("panel") || "hits");
  if ($("query").value.trim()) {
    runAll();
    if (params.get("hit") !== null) openWhy(Number(params.get("hit")));
  }
}

document.addEventListener("DOMContentLoaded", start);
