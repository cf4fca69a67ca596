// A flow's run beside the chat: when the open conversation's round runs a flow (its request carries
// `metadata.flow`), the flow's graph is drawn next to the messages and every node's state is
// polled from GET /api/workflows/{id}/nodes while the round runs (waiting, running, done, failed,
// skipped; a map's items done of total, a loop's iteration). A node's input, output and error show
// on click; a human node's wait shows its message with one button per action (POST /review).
import { api, wid } from "./api.js";
import { attempt, notify } from "./notices.js";
import { can } from "./caps.js";
import { drawGraph } from "./graph.js";

const $ = (id) => document.getElementById(id);
let run = { id: null, flow: null, round: 0, graph: null, runs: [], timer: null, gen: 0 };

export function initFlowRun() {
  $("rerun-failed").addEventListener("click", () => rerunFrom(null));
}

export function flowOpened(id) {
  clearTimeout(run.timer);
  run = { id, flow: null, round: 0, graph: null, runs: [], timer: null, gen: run.gen + 1 };
  $("run-panel").hidden = true;
  document.body.classList.remove("with-graph");
  $("node-wait").hidden = true;
}

// A request that started a flow round: its flow's graph.
export async function flowMessage(message) {
  const flow = message.role === "user" && (message.metadata || {}).flow;
  if (!flow || message.round < run.round) return;
  run.round = message.round;
  const gen = run.gen;
  let definition = null;
  if (typeof flow.version === "number") {  // the version the run keeps, where the server serves it
    definition = await api("GET", `/api/flows/${flow.id}/versions/${flow.version}`).then((v) => v.definition || v.draft)
      .catch(() => null);
  }
  const saved = definition ? null : await attempt(() => api("GET", `/api/flows/${flow.id}`));
  if (gen !== run.gen) return;
  definition ||= saved && saved.draft;
  if (!definition) return;
  run.flow = definition;
  $("run-panel").hidden = false;
  document.body.classList.add("with-graph");
  run.graph = drawGraph($("run-graph"), definition, { title: `Run of ${definition.name}`, onPick: showNode });
  await poll(gen);
}

function states(runs) {
  const map = new Map();
  for (const r of runs) {
    const item = /^(.+?)[[#]/.exec(r.path || "");
    if (item && item[1] !== r.nodeId) {  // a map item or a loop iteration of the node `item[1]`
      const parent = map.get(item[1]) || { status: "running" };
      if (r.path.includes("[")) parent.done = (parent.done || 0) + (r.status === "succeeded" ? 1 : 0);
      map.set(item[1], parent);
      continue;
    }
    const prior = map.get(r.nodeId) || {};
    map.set(r.nodeId, { ...prior, status: r.status, total: r.items ?? prior.total, iteration: r.iterations });
  }
  for (const value of map.values()) if (value.total != null) value.done ||= 0;
  if (run.waitingNode && !map.has(run.waitingNode)) map.set(run.waitingNode, { status: "waiting" });  // no run yet
  return map;
}

async function poll(gen) {
  if (gen !== run.gen || !run.graph) return;
  const page = await api("GET", `${wid(run.id)}/nodes?round=${run.round}`).catch(() => null);
  if (gen !== run.gen) return;
  if (page) {
    run.runs = page.items;
    run.graph.update(states(page.items));
    const detail = $("node-detail").dataset.node;
    if (detail) showNode(detail);
  }
  if (!run.done) run.timer = setTimeout(() => poll(gen), 700);
}

export function flowStatus(status) {
  if (!run.graph) return;
  const over = ["completed", "stopped", "failed"].includes(status.status);
  if (over && !run.done) { run.done = true; clearTimeout(run.timer); poll(run.gen); }  // once more: the last states
  const again = $("rerun-failed");
  again.hidden = true;
  if (over && status.status !== "completed") can("rerun").then((yes) => { again.hidden = !yes; });
  if (!over) run.done = false;
}

// A human node's wait: its message and one button per action.
export function flowWait(status, messages) {
  const box = $("node-wait");
  const waiting = status.status === "waiting" && status.waitingFor && status.waitingFor.kind === "node" ? status.waitingFor : null;
  const message = waiting && messages.get(waiting.messageId);
  const path = message && (message.metadata || {}).node;
  if ((path || null) !== (run.waitingNode || null)) {  // the human node waits, or no longer
    run.waitingNode = path || null;
    if (run.graph) run.graph.update(states(run.runs));
  }
  if (!waiting) { box.hidden = true; return; }
  $("node-wait-message").textContent = message ? message.content : "A human node waits for you.";
  $("node-wait-actions").replaceChildren(...(waiting.decisions || []).map((action) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = action;
    b.addEventListener("click", () => attempt(async () => {
      await api("POST", `${wid(run.id)}/review`, { decision: action, messageId: waiting.messageId });
      box.hidden = true;
      return true;
    }, "review"));
    return b;
  }));
  box.hidden = false;
}

function showNode(nodeId) {
  const box = $("node-detail");
  const runs = run.runs.filter((r) => r.nodeId === nodeId || (r.path || "").startsWith(`${nodeId}[`));
  box.dataset.node = nodeId;
  box.hidden = false;
  const rows = [];
  const head = document.createElement("h4");
  head.textContent = `Node ${nodeId}`;
  rows.push(head);
  if (!runs.length) rows.push(Object.assign(document.createElement("p"), { textContent: "Not run yet." }));
  for (const r of runs.slice(0, 20)) {
    const list = document.createElement("dl");
    for (const [name, value] of [["Path", r.path], ["Status", r.status], ["Attempts", r.attempts], ["Branch", r.branch],
                                 ["Input", r.input], ["Output", r.output], ["Error", r.error]]) {
      if (value == null || value === "") continue;
      const dt = document.createElement("dt");
      dt.textContent = name;
      const dd = document.createElement("dd");
      dd.textContent = typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value, null, 1);
      list.append(dt, dd);
    }
    rows.push(list);
  }
  const rerun = document.createElement("button");
  rerun.type = "button";
  rerun.hidden = true;
  rerun.textContent = `Rerun from ${nodeId}`;
  rerun.addEventListener("click", () => rerunFrom(nodeId));
  rows.push(rerun);
  box.replaceChildren(...rows);
  can("rerun").then((yes) => { rerun.hidden = !yes; });
}

// A new round of the same flow version from `fromNode` (null: from where the round failed or stopped).
async function rerunFrom(fromNode) {
  await attempt(async () => {
    const body = fromNode ? { round: run.round, fromNode } : { round: run.round };
    const answer = await api("POST", `${wid(run.id)}/rerun`, body);
    notify(fromNode ? `A new round runs the flow again from ${fromNode}.` : "A new round goes on from where this one stopped.", "info");
    return answer;
  }, "send");
}

// "Save as flow" on a round's plan, where the server saves rounds as flows (POST /api/flows {fromRound}).
export function saveAsFlowButton(message, workflowId) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "tool";
  b.hidden = true;
  b.textContent = "Save as flow";
  b.setAttribute("aria-label", `Save the plan of round ${message.round} as a flow`);
  b.addEventListener("click", () => attempt(async () => {
    const name = prompt("Name of the new flow", `Round ${message.round} plan`);
    if (!name) return undefined;
    const flow = await api("POST", "/api/flows", { fromRound: { workflowId: workflowId(), round: message.round }, name });
    location.hash = `#/flows/${flow.id}`;
    return flow;
  }, "send"));
  can("saveRound").then((yes) => { b.hidden = !yes; });
  return b;
}
