// Runs two rounds on one thread with the official AG-UI client (@ag-ui/client's HttpAgent) and prints
// what it parsed as JSON: argv = server URL, API key, then the files to send with the first run.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { HttpAgent } from "@ag-ui/client";

const [url, key, ...files] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${url}/api/ag-ui`, headers: { Authorization: `Bearer ${key}` },
                              threadId: `thread-${Date.now()}-${Math.random().toString(16).slice(2)}` });

async function run(runId, content) {
  agent.messages.push({ id: `user-${runId}`, role: "user", content });
  const events = [];
  let failed = null;
  const result = await agent.runAgent({ runId }, {
    onEvent: ({ event }) => { events.push(event); },
    onRunFailed: ({ error }) => { failed = String(error); },
  });
  return {
    types: events.map((e) => e.type),
    started: events.filter((e) => e.type === "RUN_STARTED").map((e) => ({ threadId: e.threadId, runId: e.runId })),
    steps: events.filter((e) => e.type === "STEP_STARTED").map((e) => e.stepName),
    text: events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join(""),
    pieces: events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
      .reduce((n, e) => ({ ...n, [e.messageId]: (n[e.messageId] ?? 0) + 1 }), {}),
    result: result.result ?? null,
    newMessages: result.newMessages.map((m) => ({ id: m.id, role: m.role, content: m.content })),
    state: agent.state,
    failed,
  };
}

const documents = files.map((path) => ({
  type: "document",
  source: { type: "data", value: readFileSync(path).toString("base64"), mimeType: "application/octet-stream" },
  metadata: { filename: basename(path) },
}));
const first = await run("run-1", [{ type: "text", text: "Summarize these documents." }, ...documents]);
const second = await run("run-2", "What does the reviewer's comment say?");
console.log(JSON.stringify({ threadId: agent.threadId, runs: [first, second] }));
