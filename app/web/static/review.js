// Plan review on the chat page: the conversation's switch "Review plans before they run" (sent as
// `reviewDefault` with each start) and, while a round waits with kind "plan", the plan's tasks with
// Approve, Reject and a feedback box to Revise (POST /api/workflows/{id}/review). A chat post while
// the round waits is a revise too: the server takes it so, nothing to do here for it.
// chat.js owns the conversation; it hands over its API helpers with initReview.

const $ = (id) => document.getElementById(id);
let tools = null;  // { api, wid, notify } from chat.js
let current = { id: null, waitingFor: null, messages: null, shown: null, decided: new Set() };

export function initReview(helpers) {
  tools = helpers;
  $("review-approve").addEventListener("click", () => decide({ decision: "approve" }));
  $("review-reject").addEventListener("click", () => {
    const feedback = $("review-feedback").value.trim();
    decide(feedback ? { decision: "reject", feedback } : { decision: "reject" });
  });
  $("review-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const feedback = $("review-feedback").value.trim();
    if (!feedback) {
      tools.notify("Write what the plan should change first, then press Revise.", "info");
      $("review-feedback").focus();
      return;
    }
    decide({ decision: "revise", feedback });
  });
}

// What a start sends: the conversation's default for its rounds, from the switch.
export function reviewStartOptions() {
  return { reviewDefault: $("review-switch").checked ? "plan" : "none" };
}

// A conversation was opened (workflow null: a new one keeps the switch as the person set it).
export function reviewOpened(id, workflow, messages) {
  current = { id, waitingFor: null, messages, shown: null, decided: new Set() };
  if (workflow) $("review-switch").checked = workflow.review === "plan";
  render();
}

// The status line's words while something waits for the person (null: chat.js words it).
export function reviewStatusText(status) {
  if (status.status !== "waiting") return null;
  const kind = status.waitingFor && status.waitingFor.kind;
  return kind === "plan" || !kind ? `Waiting for your review · round ${status.currentRound}` :
    `Waiting for your answer · round ${status.currentRound}`;
}

export function reviewStatus(status) {
  current.waitingFor = status.status === "waiting" ? status.waitingFor || null : null;
  render();
}

// A message arrived: it may be the plan the round waits on.
export function reviewMessage(message) {
  if (current.waitingFor && current.waitingFor.messageId === message.id) render();
}

function render() {
  const panel = $("review");
  const waiting = current.waitingFor;
  const open = waiting && waiting.kind === "plan" && current.messages && !current.decided.has(waiting.messageId);
  const message = open ? current.messages.get(waiting.messageId) : null;
  if (!message) {
    panel.hidden = true;
    current.shown = null;
    return;
  }
  if (current.shown === message.id && !panel.hidden) return;  // keep what the person typed
  current.shown = message.id;
  const plan = (message.metadata && message.metadata.plan) || { tasks: [] };
  const list = $("review-tasks");
  list.replaceChildren();
  for (const task of plan.tasks || []) {
    const li = document.createElement("li");
    const agent = document.createElement("strong");
    agent.textContent = String(task.agent || "agent").replace(/_/g, " ");
    const what = document.createElement("span");
    what.textContent = `: ${task.instructions || ""}`;
    li.append(agent, what);
    const flow = [];
    if ((task.inputs || []).length) flow.push(`from ${task.inputs.join(", ")}`);
    if ((task.outputs || []).length) flow.push(`makes ${task.outputs.join(", ")}`);
    if ((task.dependsOn || []).length) flow.push(`after ${task.dependsOn.join(", ")}`);
    if (flow.length) {
      const detail = document.createElement("div");
      detail.className = "flow";
      detail.textContent = flow.join(" · ");
      li.append(detail);
    }
    list.append(li);
  }
  $("review-none").hidden = (plan.tasks || []).length > 0;
  $("review-feedback").value = "";
  setBusy(false);
  panel.hidden = false;
  panel.scrollIntoView({ block: "nearest" });
}

function setBusy(busy) {
  for (const id of ["review-approve", "review-reject", "review-revise"]) $(id).disabled = busy;
}

async function decide(body) {
  const waiting = current.waitingFor;
  if (!waiting || !current.id) return;
  setBusy(true);
  try {
    await tools.api("POST", `${tools.wid(current.id)}/review`, { ...body, messageId: waiting.messageId });
    // The answer's status is not shown: the stream may have brought newer ones meanwhile (a fast
    // round completes before this answer arrives); it brings the next status anyway.
    current.decided.add(waiting.messageId);
    $("review").hidden = true;
    current.shown = null;
  } catch (error) {
    tools.notify(error.message || String(error));
    setBusy(false);
  }
}
