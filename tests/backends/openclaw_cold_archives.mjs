// Move an OpenClaw state's transcripts into cold storage, or restore one, with the real
// OpenClaw package; then print its own read-only kernel's answers.
//
// Usage: node openclaw_cold_archives.mjs <openclaw package folder> <input.json>
// with OPENCLAW_STATE_DIR set to the state folder (written by openclaw_state.mjs).
// input.json holds {action: "archive" | "restore", agents: [agentId],
// restore: {agentId, sessionId}, searches: [kernel params]}.
//
// "archive" runs OpenClaw's cold storage maintenance (runSessionColdStorageMaintenance)
// with `afterDays: -1`, so every transcript of the configured agents is old enough (the
// state's windows were written a moment ago); "restore" runs
// restoreSessionColdTranscript for one window, what opening a session does. Both live in
// a chunk with a hashed file name, found by the function it defines; the name each is
// exported under is read from the chunk's export list. One JSON line is printed:
// {result, answers}.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageFolder, inputFile] = process.argv.slice(2);
const dist = path.join(packageFolder, "dist");
const load = (file) => import(pathToFileURL(file).href);

async function exported(prefix, name) {
  const file = fs.readdirSync(dist)
    .filter((entry) => entry.startsWith(prefix) && entry.endsWith(".mjs"))
    .map((entry) => path.join(dist, entry))
    .find((candidate) => fs.readFileSync(candidate, "utf8").includes(`function ${name}(`));
  if (!file) throw new Error(`no chunk ${prefix}* of ${dist} defines ${name}`);
  const alias = fs.readFileSync(file, "utf8").match(new RegExp(`${name} as (\\w+)`))[1];
  return (await load(file))[alias];
}

const input = JSON.parse(fs.readFileSync(inputFile, "utf8"));
let result = null;
if (input.action === "archive") {
  const maintain = await exported("session-cold-storage-", "runSessionColdStorageMaintenance");
  result = await maintain({
    config: {
      session: { maintenance: { coldStorage: { enabled: true, afterDays: -1 } } },
      agents: { list: input.agents.map((id) => ({ id })) },
    },
  });
} else {
  const restore = await exported("session-cold-storage-", "restoreSessionColdTranscript");
  result = await restore(input.restore) ?? null;
}
const search = await exported("session-transcript-search-", "searchSessionTranscriptsReadOnlySync");
const answers = input.searches.map((params) => search(params));
process.stdout.write(JSON.stringify({ result, answers }) + "\n");
