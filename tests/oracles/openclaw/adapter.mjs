#!/usr/bin/env node
// The real OpenClaw session search behind session-search's JSON-RPC line protocol.
//
// Owns: answering `corpus.load`, `sessions.search` and `adapter.info` (docs/protocol.md's
// envelope, error codes and `sessions.search` params and result) by calling the functions
// of an installed `openclaw` npm package. Must not touch: indexing, ranking or snippets
// (OpenClaw's own code does all of it), any state outside $OPENCLAW_STATE_DIR.
//
// What it calls inside OpenClaw (package folder in $SESSION_SEARCH_OPENCLAW_PACKAGE):
// * writing: `appendSessionTranscriptMessageByIdentity` (public plugin-sdk
//   `session-transcript-runtime`), which writes the transcript event and, in the same
//   SQLite transaction, OpenClaw's FTS index rows; then `upsertSessionEntry` (public
//   plugin-sdk `session-store-runtime`) makes the newest window of each key its current
//   session, the older ones stay retained windows of the key;
// * searching: `searchSessionTranscripts` (bundle module of
//   src/config/sessions/session-transcript-search.ts), the kernel the Gateway calls,
//   once per agent database;
// * listing the agent databases: `listOpenClawRegisteredAgentDatabases` (bundle module
//   of src/state/openclaw-agent-db-registry-listing.ts), OpenClaw's own registry;
// * counting the indexed rows after a load: `withOpenClawAgentDatabaseReadOnly` (a
//   read-only `count(*)`, the only SQL written here);
// * session entries with ownership metadata (`sessions.upsert`): `upsertSessionEntry`
//   again, with the entry's `spawnedBy`, `parentSessionKey`, `archivedAt`, ... fields;
// * the agent tool (`sessions_search`): `setEmbeddedMode(true)`, a session-row projection
//   (`createSessionRowProjection`) bound with `bindEmbeddedSessionRowProjection` as
//   OpenClaw's local embedded backend binds it, then `createOpenClawTools` and the
//   `sessions_search` tool's own `execute` (its visibility checks, `sessions.list` and
//   `sessions.search` calls go through OpenClaw's embedded Gateway stub).
//
// Configuration (`config.write`) is OpenClaw's `openclaw.json` in the state folder, which
// OpenClaw reads once and pins: `config.write` drops the pinned copy with OpenClaw's own
// `clearRuntimeConfigSnapshot` (bundle module of src/config/runtime-snapshot.ts), so one
// process can answer under several configurations, as long as the `agents` section (the
// roster the session-row projection was built with) stays the same.
//
// Scope mapping (OpenClaw keeps one SQLite database per agent, this engine one store):
// * `agentId` without `sessionKeys`: that agent's database, the kernel answer as it is;
// * `sessionKeys: [...]`: each key's agent database, filtered to the keys (keys without an
//   agent part, `global` and `unknown`, are looked for in every database); `[]`: every
//   database unfiltered;
// * several databases: the Gateway's merge (score desc, timestamp desc, messageId by
//   localeCompare), cut to the limit; `truncated` when any database was truncated or the
//   merge held more than the limit. Each database is asked for the same limit, so the
//   cut keeps every hit that can be in the merged top. `order: "recent"` across
//   databases has no OpenClaw answer (insertion order is per database) and is refused.
// * `match` is accepted and checked but has no effect: the 2026.9.6 kernel has only one
//   mode (every word a quoted FTS5 phrase).

import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { pathToFileURL } from "node:url";

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const ENGINE_ERROR = -32000;

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function requiredVariable(name) {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`adapter.mjs: set ${name} (see tests/oracles/README.md)\n`);
    process.exit(2);
  }
  return value;
}

const PACKAGE_FOLDER = path.resolve(requiredVariable("SESSION_SEARCH_OPENCLAW_PACKAGE"));
// OpenClaw reads its state folder from this variable; never fall back to ~/.openclaw.
const STATE_FOLDER = path.resolve(requiredVariable("OPENCLAW_STATE_DIR"));
const BUNDLE = path.join(PACKAGE_FOLDER, "dist");
fs.mkdirSync(STATE_FOLDER, { recursive: true });

// ---- finding OpenClaw's functions --------------------------------------------------------
// Public entry points have stable paths. Internal modules are chunks named after their
// source file plus a hash (`session-transcript-search-<hash>.mjs`), marked inside by
// `//#region <source file>`, and export minified aliases (`export { realName as n }`).

async function publicModule(subpath) {
  return import(pathToFileURL(path.join(BUNDLE, "plugin-sdk", `${subpath}.js`)).href);
}

function exportAliases(source) {
  const list = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(source);
  const aliases = new Map();
  for (const entry of list ? list[1].split(",") : []) {
    const [name, alias] = entry.trim().split(/\s+as\s+/);
    if (name) aliases.set(name, alias ?? name);
  }
  return aliases;
}

// `chunkPrefix`: the chunk's file name when the bundler named it after another source
// file of the same chunk (`session-key-<hash>.mjs` holds session-key-normalization.ts).
async function bundledFunctions(sourceFile, names, chunkPrefix = undefined) {
  const prefix = chunkPrefix ?? `${path.basename(sourceFile, ".ts")}-`;
  const matches = [];
  for (const file of fs.readdirSync(BUNDLE)) {
    if (!file.startsWith(prefix) || !file.endsWith(".mjs")) continue;
    const source = fs.readFileSync(path.join(BUNDLE, file), "utf8");
    if (!source.includes(`//#region ${sourceFile}\n`)) continue;
    const aliases = exportAliases(source);
    if (names.every((name) => aliases.has(name))) matches.push({ file, aliases });
  }
  if (matches.length !== 1) {
    throw new Error(`expected one bundle chunk for ${sourceFile} exporting ${names.join(", ")}, `
      + `found ${matches.map((match) => match.file).join(", ") || "none"}`);
  }
  const [{ file, aliases }] = matches;
  const loaded = await import(pathToFileURL(path.join(BUNDLE, file)).href);
  const functions = { chunk: file };
  for (const name of names) functions[name] = loaded[aliases.get(name)];
  return functions;
}

const transcripts = await publicModule("session-transcript-runtime");
const sessionStore = await publicModule("session-store-runtime");
const routing = await publicModule("routing");
const kernel = await bundledFunctions("src/config/sessions/session-transcript-search.ts",
  ["searchSessionTranscripts"]);
const registry = await bundledFunctions("src/state/openclaw-agent-db-registry-listing.ts",
  ["listOpenClawRegisteredAgentDatabases"]);
const readOnly = await bundledFunctions("src/state/openclaw-agent-db-readonly.ts",
  ["withOpenClawAgentDatabaseReadOnly"]);
const keyNormalization = await bundledFunctions(
  "packages/session-url-contract/src/session-key-normalization.ts",
  ["normalizeSessionKeyPreservingOpaquePeerIds"], "session-key-");

function agentOfKey(sessionKey) {
  const parsed = routing.parseAgentSessionKey(sessionKey);
  return parsed ? routing.normalizeAgentId(parsed.agentId) : undefined;
}

function registeredAgents() {
  const agents = registry.listOpenClawRegisteredAgentDatabases({ env: process.env })
    .map((entry) => entry.agentId);
  return [...new Set(agents)].sort();
}

function indexedRowCount(agentId) {
  const answer = readOnly.withOpenClawAgentDatabaseReadOnly(
    (database) => database.db.prepare("select count(*) as rows from session_transcript_fts").get().rows,
    { agentId, env: process.env });
  return answer.found ? answer.value : 0;
}

// The messages OpenClaw stored with other text than it was given (its storage redaction of
// credential-looking text): read back from each agent database, so that a test excuses a
// difference only where OpenClaw really rewrote a message.
function storedRewrites(rows) {
  const byAgent = new Map();
  for (const row of rows) byAgent.set(row.agentId, [...(byAgent.get(row.agentId) ?? []), row]);
  const rewritten = [];
  for (const [agentId, agentRows] of byAgent) {
    const answer = readOnly.withOpenClawAgentDatabaseReadOnly((database) => {
      const statement = database.db.prepare(
        "select e.event_json as json, e.event_zstd as packed from transcript_event_identities i "
        + "join transcript_events e on e.session_id = i.session_id and e.seq = i.seq "
        + "where i.session_id = ? and i.event_id = ?");
      const found = [];
      for (const row of agentRows) {
        const stored = statement.get(row.sessionId, row.messageId);
        if (!stored) continue;
        const text = stored.json ?? zlib.zstdDecompressSync(stored.packed).toString("utf8");
        const content = JSON.parse(text)?.message?.content;
        const shown = typeof content === "string" ? content
          : Array.isArray(content) ? content.map((block) => block?.text ?? "").join("\n") : undefined;
        if (shown !== row.text) {
          found.push({ sessionKey: row.sessionKey, sessionId: row.sessionId, messageId: row.messageId });
        }
      }
      return found;
    }, { agentId, env: process.env });
    if (answer.found) rewritten.push(...answer.value);
  }
  return rewritten;
}

// ---- corpus.load ---------------------------------------------------------------------------

const FLAT_FIELDS = ["sessionKey", "sessionId", "messageId", "role", "text", "timestamp"];

// `unscopedAgentId`: the agent whose database holds keys without an agent part
// (`global`, `unknown`); without it such a key is refused.
function flatRows(file, unscopedAgentId) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new RpcError(INVALID_PARAMS, `cannot read ${file}: ${error.message}`);
  }
  const rows = [];
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    const where = `${file}:${index + 1}`;
    let row;
    try {
      row = JSON.parse(line);
    } catch (error) {
      throw new RpcError(INVALID_PARAMS, `${where}: not JSON (${error.message})`);
    }
    const unknown = Object.keys(row).filter((name) => !FLAT_FIELDS.includes(name));
    if (unknown.length) throw new RpcError(INVALID_PARAMS, `${where}: unknown field ${unknown.join(", ")}`);
    for (const name of ["sessionKey", "sessionId", "messageId", "role", "text"]) {
      if (typeof row[name] !== "string") throw new RpcError(INVALID_PARAMS, `${where}: "${name}" must be a string`);
    }
    // OpenClaw stamps a message with `now`, the clock when absent: a corpus must say.
    const timestamp = typeof row.timestamp === "string" ? Date.parse(row.timestamp) : row.timestamp;
    if (typeof timestamp !== "number" || !Number.isFinite(timestamp)) {
      throw new RpcError(INVALID_PARAMS, `${where}: "timestamp" must be epoch milliseconds or an ISO-8601 string`);
    }
    const agentId = agentOfKey(row.sessionKey) ?? unscopedAgentId;
    if (!agentId) throw new RpcError(INVALID_PARAMS, `${where}: sessionKey "${row.sessionKey}" is not agent:<id>:<rest> (pass unscopedAgentId)`);
    rows.push({ ...row, timestamp, agentId });
  });
  return rows;
}

async function loadCorpus(params) {
  if (typeof params.path !== "string") throw new RpcError(INVALID_PARAMS, "path must be a string");
  const unscoped = params.unscopedAgentId ?? null;
  if (unscoped !== null && typeof unscoped !== "string") throw new RpcError(INVALID_PARAMS, "unscopedAgentId must be a string");
  // `textBlockKeys`: keys whose assistant messages are stored as text blocks
  // (`[{type: "text", text}]`), as OpenClaw stores a model's reply, not as a string.
  const blockKeys = params.textBlockKeys ?? [];
  if (!Array.isArray(blockKeys) || !blockKeys.every((key) => typeof key === "string")) {
    throw new RpcError(INVALID_PARAMS, "textBlockKeys must be an array of strings");
  }
  const textBlocks = new Set(blockKeys);
  const started = Date.now();
  const rows = flatRows(params.path, unscoped === null ? undefined : routing.normalizeAgentId(unscoped));
  let appended = 0;
  // Flat-file semantics (corpora/README.md): each window is one chain in file order; of a
  // key's windows, the one holding the key's newest message is current (ties: the later
  // line), as OpenClaw's Gateway leaves a key, writing each message into its current
  // window. OpenClaw's transcript writer chooses no current window itself (it writes no
  // session entry), so the adapter tells `upsertSessionEntry` which one.
  const windowsOfKey = new Map();
  for (const [line, row] of rows.entries()) {
    const result = await transcripts.appendSessionTranscriptMessageByIdentity({
      agentId: row.agentId,
      sessionKey: row.sessionKey,
      sessionId: row.sessionId,
      eventId: row.messageId,
      now: row.timestamp,
      message: {
        role: row.role,
        content: textBlocks.has(row.sessionKey) && row.role === "assistant"
          ? [{ type: "text", text: row.text }] : row.text,
        timestamp: row.timestamp,
      },
    });
    if (result?.appended) appended += 1;
    const windows = windowsOfKey.get(row.sessionKey) ?? new Map();
    windowsOfKey.set(row.sessionKey, windows);
    const known = windows.get(row.sessionId);
    const newer = !known || row.timestamp >= known.updatedAt;
    windows.set(row.sessionId, {
      agentId: row.agentId,
      updatedAt: newer ? row.timestamp : known.updatedAt,
      newestLine: newer ? line : known.newestLine,
    });
  }
  for (const [sessionKey, windows] of windowsOfKey) {
    const [sessionId, { agentId, updatedAt }] = [...windows].reduce((best, candidate) => {
      const [, a] = best, [, b] = candidate;
      return b.updatedAt > a.updatedAt || (b.updatedAt === a.updatedAt && b.newestLine > a.newestLine)
        ? candidate : best;
    });
    await sessionStore.upsertSessionEntry({ agentId, sessionKey, entry: { sessionId, updatedAt } });
  }
  const agents = registeredAgents();
  return {
    messages: rows.length,
    appended,
    windows: new Set(rows.map((row) => row.sessionId)).size,
    sessionKeys: windowsOfKey.size,
    agents,
    indexedRows: Object.fromEntries(agents.map((agentId) => [agentId, indexedRowCount(agentId)])),
    rewritten: storedRewrites(rows),
    elapsedMs: Date.now() - started,
  };
}

// ---- sessions.search -------------------------------------------------------------------------

const SEARCH_PARAMS = {
  agentId: "string", query: "string", limit: "integer", sessionKeys: "array",
  sessionId: "string", role: "string", match: "string", order: "string",
};
const ALLOWED_VALUES = { role: ["user", "assistant"], match: ["exact", "prefix"], order: ["relevance", "recent"] };
const TYPE_WORDS = { string: "a string", integer: "an integer", array: "an array of strings" };

function jsonTypeName(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "boolean") return "a boolean";
  if (typeof value === "number") return "a number";
  if (typeof value === "string") return "a string";
  return "an object";
}

function checkedSearchParams(params) {
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    throw new RpcError(INVALID_PARAMS, "params must be an object");
  }
  const unknown = Object.keys(params).filter((name) => !(name in SEARCH_PARAMS)).sort();
  if (unknown.length) throw new RpcError(INVALID_PARAMS, `unknown params: ${unknown.join(", ")}`);
  const request = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === null && name !== "query") continue;
    const expected = SEARCH_PARAMS[name];
    const fits = expected === "integer" ? Number.isInteger(value)
      : expected === "array" ? Array.isArray(value) : typeof value === expected;
    if (!fits) {
      const nullable = name === "query" ? "" : " or null";
      throw new RpcError(INVALID_PARAMS, `${name} has the wrong type (expected ${TYPE_WORDS[expected]}${nullable}, got ${jsonTypeName(value)})`);
    }
    request[name] = value;
  }
  if (!("query" in request)) throw new RpcError(INVALID_PARAMS, "query is required");
  if (request.sessionKeys && !request.sessionKeys.every((key) => typeof key === "string")) {
    throw new RpcError(INVALID_PARAMS, "sessionKeys must be an array of strings");
  }
  for (const [name, allowed] of Object.entries(ALLOWED_VALUES)) {
    if (name in request && !allowed.includes(request[name])) {
      throw new RpcError(INVALID_PARAMS, `${name} must be one of: ${allowed.join(", ")}`);
    }
  }
  if (!request.sessionKeys && request.agentId === undefined) {
    throw new RpcError(INVALID_PARAMS, "agentId is required when sessionKeys is omitted");
  }
  return request;
}

// Which agent databases a request reads, each with the key filter it passes on.
function searchTargets(request) {
  if (!request.sessionKeys) return [{ agentId: routing.normalizeAgentId(request.agentId) }];
  const agents = registeredAgents();
  if (request.sessionKeys.length === 0) return agents.map((agentId) => ({ agentId }));
  const keysByAgent = new Map();
  const agentless = request.sessionKeys.filter((key) => !agentOfKey(key));
  for (const key of request.sessionKeys) {
    const agentId = agentOfKey(key);
    if (agentId && agents.includes(agentId)) keysByAgent.set(agentId, [...(keysByAgent.get(agentId) ?? []), key]);
  }
  if (agentless.length) for (const agentId of agents) keysByAgent.set(agentId, [...(keysByAgent.get(agentId) ?? [])]);
  return [...keysByAgent].map(([agentId, keys]) => ({ agentId, sessionKeys: [...keys, ...agentless] }));
}

function asProtocolHit(hit) {
  return {
    sessionKey: hit.sessionKey, sessionId: hit.sessionId, messageId: hit.messageId,
    role: hit.role, timestamp: hit.timestamp, snippet: hit.snippet, score: hit.score,
  };
}

function byGatewayOrder(left, right) {
  return right.score - left.score || right.timestamp - left.timestamp
    || left.messageId.localeCompare(right.messageId);
}

async function search(params) {
  const request = checkedSearchParams(params);
  const targets = searchTargets(request);
  if (targets.length > 1 && request.order === "recent") {
    throw new RpcError(INVALID_PARAMS, "order recent across agent databases has no OpenClaw answer");
  }
  const limit = Math.min(Math.max(1, request.limit ?? 10), 25);
  const answers = [];
  for (const target of targets) {
    try {
      answers.push(await kernel.searchSessionTranscripts({
        query: request.query,
        agentId: target.agentId,
        ...(target.sessionKeys ? { sessionKeys: target.sessionKeys } : {}),
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
        ...(request.role ? { role: request.role } : {}),
        ...(request.order === "recent" ? { order: "recent" } : {}),
        limit,
        env: process.env,
      }));
    } catch (error) {
      // The kernel's query policy throws these two, with the product's wording.
      if (/^query must (not be empty|not exceed)/.test(error?.message ?? "")) throw new RpcError(INVALID_PARAMS, error.message);
      throw error;
    }
  }
  const merged = answers.length === 1 ? answers[0].hits : answers.flatMap((answer) => answer.hits).toSorted(byGatewayOrder);
  const archived = answers.reduce((total, answer) => total + (answer.archivedTranscriptsExcluded ?? 0), 0);
  return {
    hits: merged.slice(0, limit).map(asProtocolHit),
    truncated: answers.some((answer) => answer.truncated) || merged.length > limit,
    indexing: answers.some((answer) => answer.indexing),
    ...(archived > 0 ? { archivedTranscriptsExcluded: archived } : {}),
  };
}


// ---- keys.canonical: the form OpenClaw stores and compares a session key in -------------------

// `{keys: [string, ...]}` -> `{keys: [...]}`: each key through OpenClaw's own
// `normalizeSessionKeyPreservingOpaquePeerIds` (what its writer stores, what its readers
// compare), for the engine's `canonical_session_key` to be checked against.
function canonicalKeys(params) {
  if (!Array.isArray(params.keys) || !params.keys.every((key) => typeof key === "string")) {
    throw new RpcError(INVALID_PARAMS, "keys must be an array of strings");
  }
  return { keys: params.keys.map((key) => keyNormalization.normalizeSessionKeyPreservingOpaquePeerIds(key)) };
}

// ---- sessions.upsert: session entries with ownership metadata ------------------------------

// The entry fields a test may set, with their JSON types. `upsertSessionEntry` replaces the
// whole entry, so `sessionId` and `updatedAt` are required.
const ENTRY_FIELDS = {
  sessionId: "string", updatedAt: "number", spawnedBy: "string", parentSessionKey: "string",
  archivedAt: "number", startedAt: "number", endedAt: "number", status: "string",
  label: "string", incognito: "boolean",
};

function checkedEntry(value, where) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new RpcError(INVALID_PARAMS, `${where} must be an object`);
  }
  const { sessionKey, agentId, ...entry } = value;
  if (typeof sessionKey !== "string") throw new RpcError(INVALID_PARAMS, `${where}.sessionKey must be a string`);
  if (agentId !== undefined && typeof agentId !== "string") throw new RpcError(INVALID_PARAMS, `${where}.agentId must be a string`);
  for (const [name, fieldValue] of Object.entries(entry)) {
    if (!(name in ENTRY_FIELDS)) throw new RpcError(INVALID_PARAMS, `${where}: unknown entry field ${name}`);
    if (typeof fieldValue !== ENTRY_FIELDS[name]) throw new RpcError(INVALID_PARAMS, `${where}.${name} must be a ${ENTRY_FIELDS[name]}`);
  }
  for (const name of ["sessionId", "updatedAt"]) {
    if (!(name in entry)) throw new RpcError(INVALID_PARAMS, `${where}.${name} is required`);
  }
  const owner = agentOfKey(sessionKey) ?? (agentId === undefined ? undefined : routing.normalizeAgentId(agentId));
  if (!owner) throw new RpcError(INVALID_PARAMS, `${where}: sessionKey "${sessionKey}" has no agent part: give agentId`);
  return { agentId: owner, sessionKey, entry };
}

async function upsertEntries(params) {
  if (!Array.isArray(params.entries)) throw new RpcError(INVALID_PARAMS, "entries must be an array");
  const checked = params.entries.map((value, index) => checkedEntry(value, `entries[${index}]`));
  const stored = [];
  for (const { agentId, sessionKey, entry } of checked) {
    await sessionStore.upsertSessionEntry({ agentId, sessionKey, entry });
    const readBack = sessionStore.getSessionEntry({ agentId, sessionKey });
    // What OpenClaw kept of the fields given, so a caller sees a field it dropped.
    stored.push({
      agentId, sessionKey,
      entry: Object.fromEntries(Object.keys(entry).filter((name) => readBack?.[name] !== undefined)
        .map((name) => [name, readBack[name]])),
    });
  }
  return { entries: stored };
}

// ---- config.write ----------------------------------------------------------------------------

// OpenClaw pins the configuration it first reads (`getRuntimeConfig`). `config.write`
// writes `openclaw.json`, drops the pinned copy with OpenClaw's own
// `clearRuntimeConfigSnapshot` and reads the file again at once, so OpenClaw's validator
// refuses a bad file here (INVALID_PARAMS, its message; the previous file is put back) and
// the next tool call reads the new settings. The session-row projection the tools list
// from is built once, at the first tool call: a later file must keep the same `agents`
// section (the roster the projection filters by), else a fresh adapter is needed.
const CONFIG_FILE = path.join(STATE_FOLDER, "openclaw.json");
let projectedAgents;
let configModules;

// Loaded on first use: the kernel-only methods never need them.
async function loadConfigModules() {
  configModules ??= {
    snapshot: await bundledFunctions("src/config/runtime-snapshot.ts", ["clearRuntimeConfigSnapshot"]),
    gatewayStub: await import(pathToFileURL(path.join(BUNDLE, "embedded-gateway-stub.runtime.js")).href),
  };
  return configModules;
}

function agentsSection(config) {
  return JSON.stringify(config.agents ?? null);
}

async function writeConfig(params) {
  const { config } = params;
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new RpcError(INVALID_PARAMS, "config must be an object");
  }
  if (projectedAgents !== undefined && agentsSection(config) !== projectedAgents) {
    throw new RpcError(INVALID_PARAMS, "config.write changes the agents section after the first sessions_search: "
      + "the session-row projection keeps the first roster, start a fresh adapter");
  }
  const { snapshot, gatewayStub } = await loadConfigModules();
  const previous = fs.existsSync(CONFIG_FILE) ? fs.readFileSync(CONFIG_FILE) : undefined;
  fs.writeFileSync(CONFIG_FILE, `${JSON.stringify(config, null, 2)}\n`);
  snapshot.clearRuntimeConfigSnapshot();
  try {
    gatewayStub.getRuntimeConfig();
  } catch (error) {
    // A refused file leaves the previous configuration in force.
    if (previous === undefined) fs.rmSync(CONFIG_FILE);
    else fs.writeFileSync(CONFIG_FILE, previous);
    snapshot.clearRuntimeConfigSnapshot();
    if (error?.name === "InvalidConfigError") throw new RpcError(INVALID_PARAMS, error.message);
    throw error;
  }
  return { file: CONFIG_FILE };
}

// ---- sessions_search: the agent tool in embedded mode ----------------------------------------

let toolRuntime;

async function loadToolRuntime() {
  if (toolRuntime) return toolRuntime;
  const embeddedMode = await bundledFunctions("src/infra/embedded-mode.ts", ["setEmbeddedMode"]);
  const tools = await bundledFunctions("src/agents/openclaw-tools.ts",
    ["createOpenClawTools", "bindEmbeddedSessionRowProjection"]);
  const rows = await bundledFunctions("src/gateway/session-row-projection.ts", ["createSessionRowProjection"]);
  const stub = (await loadConfigModules()).gatewayStub;
  embeddedMode.setEmbeddedMode(true);
  // The wiring of OpenClaw's local embedded backend: one projection over the session rows,
  // read by the embedded Gateway stub's `sessions.list` and `sessions.resolve`.
  const projection = Promise.resolve(rows.createSessionRowProjection({
    cfg: stub.getRuntimeConfig(), getConfig: stub.getRuntimeConfig,
  }));
  await projection;
  tools.bindEmbeddedSessionRowProjection(projection);
  projectedAgents = agentsSection(fs.existsSync(CONFIG_FILE) ? JSON.parse(fs.readFileSync(CONFIG_FILE, "utf8")) : {});
  toolRuntime = { createOpenClawTools: tools.createOpenClawTools,
    chunks: [embeddedMode.chunk, tools.chunk, rows.chunk] };
  return toolRuntime;
}

let toolCalls = 0;
// The tool of each (requester, sandboxed): `createOpenClawTools` builds every tool, and the
// search tool reads the configuration when it executes, not when it is made.
const searchTools = new Map();

function agentTool(runtime, name, requesterSessionKey, sandboxed) {
  const key = JSON.stringify([name, requesterSessionKey, sandboxed]);
  if (!searchTools.has(key)) {
    const tool = runtime.createOpenClawTools({ agentSessionKey: requesterSessionKey, sandboxed })
      .find((each) => each.name === name);
    if (!tool) throw new Error(`createOpenClawTools made no ${name} tool`);
    searchTools.set(key, tool);
  }
  return searchTools.get(key);
}

async function callSearchTool(params) {
  return callAgentTool("sessions_search", params);
}

// sessions_history: the agent tool, whose embedded Gateway answers its `chat.history`
// call with the real handler (`handleChatHistory` -> `readChatHistoryPage`); a thrown
// error (e.g. "sessionId does not belong to sessionKey") becomes INVALID_PARAMS.
async function callHistoryTool(params) {
  return callAgentTool("sessions_history", params, { thrownAreInputErrors: true });
}

async function callAgentTool(name, params, { thrownAreInputErrors = false } = {}) {
  const { requesterSessionKey, sandboxed = false, arguments: toolArguments } = params;
  const unknown = Object.keys(params).filter((name) => !["requesterSessionKey", "sandboxed", "arguments"].includes(name));
  if (unknown.length) throw new RpcError(INVALID_PARAMS, `unknown params: ${unknown.sort().join(", ")}`);
  if (typeof requesterSessionKey !== "string") throw new RpcError(INVALID_PARAMS, "requesterSessionKey must be a string");
  if (typeof sandboxed !== "boolean") throw new RpcError(INVALID_PARAMS, "sandboxed must be a boolean");
  if (toolArguments === null || typeof toolArguments !== "object" || Array.isArray(toolArguments)) {
    throw new RpcError(INVALID_PARAMS, "arguments must be an object");
  }
  const tool = agentTool(await loadToolRuntime(), name, requesterSessionKey, sandboxed);
  toolCalls += 1;
  try {
    const answer = await tool.execute(`session-search-oracle-${toolCalls}`, toolArguments);
    return answer.details;
  } catch (error) {
    // The tool's input errors (`ToolInputError`, status 400) are the caller's fault.
    if (error?.name === "ToolInputError" || (thrownAreInputErrors && error instanceof Error)) {
      throw new RpcError(INVALID_PARAMS, error.message);
    }
    throw error;
  }
}

// ---- gateway.sessions.search: the Gateway's own RPC handler -------------------------------
//
// `sessionReadHandlers["sessions.search"]` (src/gateway/server-methods/sessions-read.ts) is
// what a Gateway client's `sessions.search` reaches: the protocol schema, the scope rules
// (one agent per call, `main` when no agent is named), the store targets and the merge.
// It is called in-process as the Gateway calls it, with the runtime configuration and no
// client (a local operator). Its refusal becomes an error whose code is the Gateway's
// error code string, in `data.gatewayCode`, and whose message is the Gateway's.

let gatewayRead;
const GATEWAY_REFUSED = -32000;

async function gatewaySearch(params) {
  gatewayRead ??= await bundledFunctions("src/gateway/server-methods/sessions-read.ts",
    ["sessionReadHandlers"]);
  const { gatewayStub } = await loadConfigModules();
  return new Promise((resolve, reject) => {
    const respond = (ok, payload, error) => {
      if (ok) resolve(payload);
      else reject(Object.assign(new RpcError(GATEWAY_REFUSED, error?.message ?? "refused"),
        { data: { gatewayCode: error?.code ?? null } }));
    };
    Promise.resolve(gatewayRead.sessionReadHandlers["sessions.search"]({
      params, respond, context: { getRuntimeConfig: gatewayStub.getRuntimeConfig }, client: null,
    })).catch(reject);
  });
}

// ---- adapter.info --------------------------------------------------------------------------

async function info() {
  const { DatabaseSync } = await import("node:sqlite");
  const memory = new DatabaseSync(":memory:");
  const sqliteVersion = memory.prepare("select sqlite_version() as version").get().version;
  memory.close();
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_FOLDER, "package.json"), "utf8"));
  return {
    openclawVersion: manifest.version,
    node: process.version,
    sqliteVersion,
    stateFolder: STATE_FOLDER,
    agents: registeredAgents(),
    chunks: { search: kernel.chunk, registry: registry.chunk, readOnly: readOnly.chunk },
  };
}

const METHODS = {
  "adapter.info": info, "corpus.load": loadCorpus, "sessions.search": search,
  "keys.canonical": canonicalKeys, "sessions.upsert": upsertEntries, "config.write": writeConfig, sessions_search: callSearchTool,
  sessions_history: callHistoryTool, "gateway.sessions.search": gatewaySearch,
};

// ---- the line protocol -----------------------------------------------------------------------

function isValidId(id) {
  return id === null || typeof id === "string" || Number.isInteger(id);
}

async function answer(line) {
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(line);
  } catch {
    return { jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: "parse error: the line is not UTF-8" } };
  }
  if (!text.trim()) return undefined;
  let message;
  try {
    message = JSON.parse(text);
  } catch (error) {
    return { jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: `parse error: ${error.message}` } };
  }
  if (Array.isArray(message)) {
    return { jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: "batch requests are not supported" } };
  }
  if (message === null || typeof message !== "object") {
    return { jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: "a request must be a JSON object" } };
  }
  const id = "id" in message && isValidId(message.id) ? message.id : null;
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string" || ("id" in message && !isValidId(message.id))) {
    return { jsonrpc: "2.0", id, error: { code: INVALID_REQUEST, message: 'expected {"jsonrpc": "2.0", "method": str, "id": str|int}' } };
  }
  const notification = !("id" in message);
  const method = METHODS[message.method];
  let response;
  if (!method) {
    response = { jsonrpc: "2.0", id, error: { code: METHOD_NOT_FOUND, message: `unknown method '${message.method}'` } };
  } else {
    try {
      response = { jsonrpc: "2.0", id, result: await method(message.params ?? {}) };
    } catch (error) {
      const code = error instanceof RpcError ? error.code : ENGINE_ERROR;
      if (code === ENGINE_ERROR) process.stderr.write(`adapter.mjs: ${error?.stack ?? error}\n`);
      response = { jsonrpc: "2.0", id, error: { code, message: String(error?.message ?? error),
        ...(error?.data !== undefined ? { data: error.data } : {}) } };
    }
  }
  return notification ? undefined : response;
}

// One request at a time, answered (and flushed) before the next line is read.
let pending = Buffer.alloc(0);
for await (const chunk of process.stdin) {
  pending = Buffer.concat([pending, chunk]);
  let end;
  while ((end = pending.indexOf(0x0a)) !== -1) {
    const line = pending.subarray(0, end);
    pending = pending.subarray(end + 1);
    const response = await answer(line);
    if (response !== undefined) {
      await new Promise((resolve) => process.stdout.write(`${JSON.stringify(response)}\n`, resolve));
    }
  }
}
if (pending.length) {
  const response = await answer(pending);
  if (response !== undefined) process.stdout.write(`${JSON.stringify(response)}\n`);
}
process.exit(0);
