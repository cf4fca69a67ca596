// Runs a saved flow on a thread with the official AG-UI client (@ag-ui/client's HttpAgent): the first run
// (forwardedProps.flow) ends with an interrupt, the second resumes it with an action. Prints what it parsed
// as JSON: argv = server URL, API key, flow id, the action.
import { HttpAgent } from "@ag-ui/client";

const [url, key, flowId, action] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${url}/api/ag-ui`, headers: { Authorization: `Bearer ${key}` },
                              threadId: `flow-${Date.now()}-${Math.random().toString(16).slice(2)}` });

async function run(runId, parameters) {
  const events = [];
  let failed = null;
  await agent.runAgent({ runId, ...parameters }, {
    onEvent: ({ event }) => { events.push(event); },
    onRunFailed: ({ error }) => { failed = String(error); },
  });
  const finished = events.filter((e) => e.type === "RUN_FINISHED").at(-1) ?? null;
  return {
    types: events.map((e) => e.type),
    outcome: finished?.outcome ?? null,
    text: events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join(""),
    nodes: agent.state?.nodes ?? null,
    failed,
  };
}

const first = await run("run-1", { forwardedProps: { flow: { id: Number(flowId), inputs: { word: "it" } } } });
const [interrupt] = first.outcome?.interrupts ?? [];
const second = interrupt
  ? await run("run-2", { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: action } }] })
  : null;
console.log(JSON.stringify({ runs: [first, second] }));
