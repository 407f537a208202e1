// Build an OpenClaw state with the real OpenClaw package, then print its own search answers.
//
// Usage: node openclaw_state.mjs <openclaw package folder> <input.json>
// with OPENCLAW_STATE_DIR set to the state folder to write. input.json holds
// {messages: [{agentId, sessionKey, sessionId, messageId, timestamp, message}],
//  entries: [{agentId, sessionKey, sessionId, updatedAt}], searches: [kernel params]}.
//
// Messages go through OpenClaw's public transcript writer (plugin-sdk
// session-transcript-runtime), which indexes them in the same transaction; each
// session key's entry is set with plugin-sdk session-store-runtime. The answers come
// from OpenClaw's read-only search kernel, searchSessionTranscriptsReadOnlySync: its
// chunk has a hashed file name, found here by the function it defines, and the name it
// is exported under is read from the chunk's export list. Only the answers are printed
// (one JSON line); OpenClaw closes its databases when the process exits.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageFolder, inputFile] = process.argv.slice(2);
const dist = path.join(packageFolder, "dist");
const load = (file) => import(pathToFileURL(file).href);

async function readOnlyKernel() {
  const marker = "function searchSessionTranscriptsReadOnlySync(";
  const file = fs.readdirSync(dist)
    .filter((name) => name.startsWith("session-transcript-search-") && name.endsWith(".mjs"))
    .map((name) => path.join(dist, name))
    .find((candidate) => fs.readFileSync(candidate, "utf8").includes(marker));
  if (!file) throw new Error(`no chunk of ${dist} defines searchSessionTranscriptsReadOnlySync`);
  const exported = fs.readFileSync(file, "utf8").match(/searchSessionTranscriptsReadOnlySync as (\w+)/);
  return (await load(file))[exported[1]];
}

const input = JSON.parse(fs.readFileSync(inputFile, "utf8"));
const transcripts = await load(path.join(dist, "plugin-sdk", "session-transcript-runtime.js"));
const sessions = await load(path.join(dist, "plugin-sdk", "session-store-runtime.js"));
for (const message of input.messages) {
  await transcripts.appendSessionTranscriptMessageByIdentity({
    agentId: message.agentId,
    sessionKey: message.sessionKey,
    sessionId: message.sessionId,
    eventId: message.messageId,
    now: message.timestamp,
    message: message.message,
  });
}
for (const entry of input.entries) {
  await sessions.upsertSessionEntry({
    agentId: entry.agentId,
    sessionKey: entry.sessionKey,
    entry: { sessionId: entry.sessionId, updatedAt: entry.updatedAt },
  });
}
const search = await readOnlyKernel();
process.stdout.write(JSON.stringify(input.searches.map((params) => search(params))) + "\n");
