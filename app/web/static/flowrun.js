// A flow's run beside the chat: when the open conversation's round runs a flow (its request carries
// `metadata.flow`), the flow's graph is drawn next to the messages and every node's state is
// polled from GET /api/workflows/{id}/nodes while the round runs (waiting, running, done, failed,
// skipped; a map's items done of total, a loop's iteration). A node's input, output and error show
// on click; a human node's wait shows its message with one button per action (POST /review) and when
// it takes its default action. "Rerun from here" on a node and "Rerun from the failure" open the
// inputs form filled with the run's inputs (flow_inputs.js) and start the new round (POST /rerun).
import { api, wid } from "./api.js";
import { attempt, notify } from "./notices.js";
import { can } from "./caps.js";
import { drawGraph } from "./graph.js";
import { field, inputFields, readInputs } from "./flow_inputs.js";

const $ = (id) => document.getElementById(id);
let run = { id: null, flow: null, round: 0, graph: null, runs: [], timer: null, gen: 0 };
let ticking = null;  // the human node's countdown

export function initFlowRun() {
  $("rerun-failed").addEventListener("click", () => rerunForm(null));
}

export function flowOpened(id) {
  clearTimeout(run.timer);
  clearInterval(ticking);
  run = { id, flow: null, round: 0, graph: null, runs: [], timer: null, gen: run.gen + 1 };
  $("run-panel").hidden = true;
  document.body.classList.remove("with-graph");
  $("node-wait").hidden = true;
  $("rerun-form").hidden = true;
}

// A request that started a flow round: its flow's graph.
export async function flowMessage(message) {
  const flow = message.role === "user" && (message.metadata || {}).flow;
  if (!flow || message.round < run.round) return;
  run.round = message.round;
  run.inputs = flow.inputs || {};
  $("rerun-form").hidden = true;
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
  run.done = false;
  run.polled = false;
  if (run.status) flowStatus(run.status);  // the status seen before the graph: a round over is polled once
  else await poll(gen);
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
  for (const path of run.waitingNodes || []) if (!map.has(path)) map.set(path, { status: "waiting" });  // no run yet
  return map;
}

// The node runs of the round, every 0.7 s while it runs; a later call supersedes one in flight.
async function poll(gen) {
  if (gen !== run.gen || !run.graph) return;
  clearTimeout(run.timer);
  const mine = (run.polls = (run.polls || 0) + 1);
  const page = await api("GET", `${wid(run.id)}/nodes?round=${run.round}`).catch(() => null);
  if (gen !== run.gen || mine !== run.polls) return;
  if (page) {
    run.runs = page.items;
    run.graph.update(states(page.items));
    const detail = $("node-detail").dataset.node;
    if (detail) showNode(detail);
  }
  if (!run.done) run.timer = setTimeout(() => poll(gen), 700);
}

export function flowStatus(status) {
  const over = ["completed", "stopped", "failed"].includes(status.status);
  run.status = status;  // kept for the graph drawn after it (flowMessage)
  if (!run.graph) return;
  if (!run.polled || over !== run.done) {  // over: once more, the last states; running again: poll again
    run.polled = true;
    run.done = over;
    poll(run.gen);
  }
  const again = $("rerun-failed");
  again.hidden = true;
  if (over && status.status !== "completed") can("rerun").then((yes) => { again.hidden = !yes; });
}

// When a wait ends by itself: "Takes send at 14:05 (in 4 min 10 s) if you do not decide."
export function deadline(action, expiresAt, now = Date.now()) {
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime())) return "";
  const left = Math.max(0, Math.round((at.getTime() - now) / 1000));
  const clock = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), sec = left % 60;
  const span = h ? `${h} h ${m} min` : m ? `${m} min ${sec} s` : `${sec} s`;
  const day = at.toDateString() === new Date(now).toDateString() ? "" : ` on ${at.toLocaleDateString()}`;
  return action ? `Takes “${action}” at ${clock}${day} (in ${span}) if you do not decide.`
    : `Stops the round at ${clock}${day} (in ${span}) if you do not decide.`;
}

// A human node's wait: its message, one button per action, and when it takes its default.
export function flowWait(status, messages) {
  const box = $("node-wait");
  const waiting = status.status === "waiting" && status.waitingFor && status.waitingFor.kind === "node" ? status.waitingFor : null;
  // Every human node waiting now (several in parallel branches), each answered by its own message id.
  const asks = !waiting ? [] : (waiting.nodes || []).length ? waiting.nodes
    : [{ messageId: waiting.messageId, actions: waiting.decisions }];
  const paths = asks.map((n) => n.path || ((messages.get(n.messageId) || {}).metadata || {}).node).filter(Boolean);
  if (paths.join("|") !== (run.waitingNodes || []).join("|")) {  // which human nodes wait changed
    run.waitingNodes = paths;
    if (run.graph) run.graph.update(states(run.runs));
  }
  clearInterval(ticking);
  if (!waiting) { box.hidden = true; return; }
  const many = asks.length > 1;
  $("node-wait-list").replaceChildren(...asks.map((ask) => {
    const message = messages.get(ask.messageId);
    const part = field("div", { className: "ask" });
    part.append(field("p", {}, message ? message.content : `Node ${ask.nodeId || ""} waits for you.`));
    const actions = field("div", { className: "actions" });
    for (const action of ask.actions || waiting.decisions || []) {
      const b = field("button", { type: "button" }, action);
      if (many) b.setAttribute("aria-label", `${action} (${ask.nodeId})`);  // the same action on two nodes
      b.addEventListener("click", () => attempt(async () => {
        await api("POST", `${wid(run.id)}/review`, { decision: action, messageId: ask.messageId });
        part.remove();
        if (!$("node-wait-list").children.length) box.hidden = true;
        return true;
      }, "review"));
      actions.append(b);
    }
    part.append(actions);
    if (ask.messageId === waiting.messageId) {  // the wait's deadline is this node's
      const line = field("p", { className: "deadline" });
      const tick = () => { line.textContent = deadline(ask.defaultAction, waiting.expiresAt); };
      tick();
      ticking = setInterval(tick, 1000);
      part.append(line);
    }
    return part;
  }));
  box.hidden = false;
}

function showNode(nodeId) {
  const box = $("node-detail");
  const runs = run.runs.filter((r) => r.nodeId === nodeId || (r.path || "").startsWith(`${nodeId}[`));
  box.dataset.node = nodeId;
  box.hidden = false;
  const rows = [];
  const head = document.createElement("h3");
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
  rerun.addEventListener("click", () => rerunForm(nodeId));
  rows.push(rerun);
  box.replaceChildren(...rows);
  can("rerun").then((yes) => { rerun.hidden = !yes || !run.done; });  // a round still running cannot be rerun yet
}

// The node a rerun without `fromNode` starts from: the round's failed node (a top-level one).
function failedNode() {
  const failed = run.runs.find((r) => r.status === "failed" && r.path === r.nodeId);
  return failed ? failed.nodeId : null;
}

// The inputs form of a rerun from `fromNode` (null: from the failure), filled with the run's inputs.
function rerunForm(fromNode) {
  const form = $("rerun-form");
  const from = fromNode || failedNode();
  const title = fromNode ? `Rerun from ${fromNode}` : `Rerun from the failure${from ? ` (${from})` : ""}`;
  form.setAttribute("aria-label", title);
  const go = field("button", { type: "submit", className: "primary" }, "Start the new round");
  const cancel = field("button", { type: "button" }, "Cancel");
  cancel.addEventListener("click", () => { form.hidden = true; });
  const actions = field("div", { className: "actions" });
  actions.append(cancel, go);
  const where = from ? `The new round starts at node ${from}; what ran before it and succeeded is reused.`
    : "The new round goes on from where this one stopped; what succeeded is reused.";
  form.replaceChildren(field("h3", {}, title), field("p", { className: "muted" }, where),
    ...inputFields((run.flow || {}).inputs, run.inputs), actions);
  form.onsubmit = (event) => {
    event.preventDefault();
    go.disabled = true;
    attempt(async () => {
      const body = { round: run.round, inputs: await readInputs(form), ...(fromNode ? { fromNode } : {}) };
      const answer = await api("POST", `${wid(run.id)}/rerun`, body);
      form.hidden = true;
      notify(`Round ${answer.currentRound} runs the flow again ${from ? `from node ${from}` : "from where it stopped"}.`, "info");
      return answer;
    }, "send").finally(() => { go.disabled = false; });  // a refusal keeps the form as it was typed
  };
  form.hidden = false;
  form.querySelector("input, textarea, button").focus();
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
    const tasks = ((flow.draft || {}).nodes || []).filter((n) => n.type === "agent").map((n) => n.id);
    notify(`Saved as the flow “${flow.name}”: ${tasks.length} task${tasks.length === 1 ? "" : "s"} (${tasks.join(", ")}) `
      + "between its start and end nodes, as a draft.", "info");
    location.hash = `#/flows/${flow.id}`;
    return flow;
  }, "send"));
  can("saveRound").then((yes) => { b.hidden = !yes; });
  return b;
}
