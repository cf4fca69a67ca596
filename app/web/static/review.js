// Working with the user on the chat page: the conversation's switch "Review plans before they run"
// (sent as `reviewDefault` with each start) and, while a round waits, one panel for what it waits on
// (POST /api/workflows/{id}/review): a plan (its tasks with Approve, Edit, Reject and a feedback box
// to Revise), an agent's question (an answer box, Answer or Reject), a task that needs approval (what
// it will do, with the arguments made for it; Approve, or Reject with a reason in the box). A chat post
// while the round waits is a decision too: the server takes it so, nothing to do here for it. chat.js
// owns the conversation; it hands over its API helpers with initReview. The plan editor is plan_edit.js.

import { editedPlan, openEditor } from "./plan_edit.js";

const $ = (id) => document.getElementById(id);
const TITLES = { plan: "The plan waits for your review", question: "An agent asks you",
                 tool: "A task waits for your approval" };
const FEEDBACK = { plan: ["Feedback on the plan", "What should the plan change? (Revise), or why not (Reject)"],
                   question: ["Your answer", "Your answer to the question"],
                   tool: ["Why not", "Why not run it? (sent with Reject: the task fails with your reason)"] };
let tools = null;  // { api, wid, notify } from chat.js
let current = { id: null, waitingFor: null, messages: null, shown: null, decided: new Set() };

export function initReview(helpers) {
  tools = helpers;
  $("review-approve").addEventListener("click", () => decide({ decision: "approve" }));
  $("review-reject").addEventListener("click", () => {
    const feedback = $("review-feedback").value.trim();
    decide(feedback ? { decision: "reject", feedback } : { decision: "reject" });
  });
  $("review-edit").addEventListener("click", () => editing(true));
  $("review-edit-cancel").addEventListener("click", () => editing(false));
  $("review-edit-run").addEventListener("click", () => decide({ decision: "edit", plan: editedPlan() }));
  $("review-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const said = $("review-feedback").value.trim();
    const question = current.waitingFor && current.waitingFor.kind === "question";
    if (!said) {
      tools.notify(question ? "Write your answer first, then press Answer." :
        "Write what the plan should change first, then press Revise.", "info");
      $("review-feedback").focus();
      return;
    }
    decide(question ? { decision: "answer", answer: said } : { decision: "revise", feedback: said });
  });
}

function editing(on) {
  const waiting = current.waitingFor;
  const message = waiting && current.messages && current.messages.get(waiting.messageId);
  if (on && message) openEditor($("review-editor"), (message.metadata && message.metadata.plan) || { tasks: [] });
  $("review-editor-box").hidden = !on;
  $("review-tasks").hidden = on;
  $("review-form").hidden = on;
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
  const what = kind === "question" ? "answer" : kind === "tool" ? "approval" : kind === "node" ? "decision" : "review";
  return `Waiting for your ${what} · round ${status.currentRound}`;
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
  const open = waiting && TITLES[waiting.kind] && current.messages && !current.decided.has(waiting.messageId);
  const message = open ? current.messages.get(waiting.messageId) : null;
  if (!message) {
    panel.hidden = true;
    current.shown = null;
    return;
  }
  if (current.shown === message.id && !panel.hidden) return;  // keep what the person typed
  current.shown = message.id;
  const kind = waiting.kind;
  $("review-title").textContent = kind === "question" && waiting.agent ?
    `The ${waiting.agent.replace(/_/g, " ")} agent asks you` : TITLES[kind];
  const plan = kind === "plan" ? (message.metadata && message.metadata.plan) || { tasks: [] } : { tasks: [] };
  showTasks(plan.tasks || []);
  showAsked(kind, waiting);
  $("review-none").hidden = kind !== "plan" || (plan.tasks || []).length > 0;
  const [label, hint] = FEEDBACK[kind] || [];
  $("review-feedback").hidden = !label;
  if (label) {
    $("review-feedback").setAttribute("aria-label", label);
    $("review-feedback").placeholder = hint;
  }
  $("review-revise").textContent = kind === "question" ? "Answer" : "Revise";
  $("review-revise").hidden = kind === "tool";
  $("review-approve").hidden = kind === "question";
  $("review-edit").hidden = kind !== "plan";
  $("review-feedback").value = "";
  editing(false);
  setBusy(false);
  panel.hidden = false;
  panel.scrollIntoView({ block: "nearest" });
}

function showTasks(tasks) {
  const list = $("review-tasks");
  list.replaceChildren();
  for (const task of tasks) {
    const li = document.createElement("li");
    const agent = document.createElement("strong");
    agent.textContent = String(task.agent || "agent").replace(/_/g, " ");
    const what = document.createElement("span");
    what.textContent = `: ${task.instructions || ""}`;
    li.append(agent, what);
    const flow = [];
    if ((task.inputs || []).length) flow.push(`from ${task.inputs.join(", ")}`);
    if ((task.outputs || []).length) flow.push(`makes ${task.outputs.map((o) => o.name || o).join(", ")}`);
    if ((task.dependsOn || []).length) flow.push(`after ${task.dependsOn.join(", ")}`);
    if (flow.length) {
      const detail = document.createElement("div");
      detail.className = "flow";
      detail.textContent = flow.join(" · ");
      li.append(detail);
    }
    list.append(li);
  }
  list.hidden = !tasks.length;
}

// An agent's question, or what a task that needs approval will do.
function showAsked(kind, waiting) {
  const asked = $("review-asked");
  asked.replaceChildren();
  asked.hidden = kind === "plan";
  if (kind === "question") {
    const question = document.createElement("p");
    question.className = "question";
    question.textContent = waiting.question || "";
    asked.append(question);
  } else if (kind === "tool") {
    const tool = waiting.tool || {};
    const facts = [["Agent", tool.name || waiting.agent], ["What it does", tool.description],
                   ["Task", tool.instructions], ["Inputs", (tool.inputs || []).join(", ")]];
    if (tool.arguments) facts.push(["Arguments", JSON.stringify(tool.arguments)]);
    const list = document.createElement("dl");
    list.setAttribute("aria-label", "What the task will do");
    for (const [name, value] of facts) {
      if (!value) continue;
      const term = document.createElement("dt");
      term.textContent = name;
      const detail = document.createElement("dd");
      detail.textContent = String(value);
      list.append(term, detail);
    }
    asked.append(list);
  }
}

function setBusy(busy) {
  for (const id of ["review-approve", "review-reject", "review-revise", "review-edit", "review-edit-run"]) {
    $(id).disabled = busy;
  }
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
