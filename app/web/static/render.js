// A message as the page shows it. The project manager's answer (status "last") stands apart; its
// plan and the agents' steps are quieter and each can be collapsed. Every message can be copied;
// a request can be edited and sent again (a new round of the same conversation); a file that is
// encrypted gets a password field beside it, which sends `passwords` with the next round.
import { api, auth, problem, wid } from "./api.js";
import { attempt, notify } from "./notices.js";
import { fileName, friendlyType } from "./names.js";
import { saveAsFlowButton } from "./flowrun.js";
import { renderMarkdown } from "./markdown.js";

let hooks = null;  // { workflowId(), forget(messageId), resend({ prompt, fileIds, passwords }) } from chat.js

export function initRender(given) {
  hooks = given;
}

export function agentLabel(message) {
  if (message.role === "user") return "You";
  const name = (message.agentName || message.role || "assistant").replace(/_/g, " ");
  return name.charAt(0).toUpperCase() + name.slice(1);
}

// What a message is to a person: their request, the plan, a step of it, or the answer.
export function kindOf(message) {
  if (message.role === "user") return "request";
  if (message.status === "last") return "answer";
  if (message.metadata && message.metadata.plan) return "plan";
  return "step";
}

export function button(text, label, onClick, className = "") {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (label) b.setAttribute("aria-label", label);
  if (className) b.className = className;
  b.addEventListener("click", onClick);
  return b;
}

async function download(doc) {
  const response = await fetch(`/api/files/${doc.fileId}/content`, { headers: auth() });
  if (!response.ok) throw new Error(await problem(response));
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName(doc);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// A file none of whose contents could be read because it is encrypted.
export function locked(doc) {
  const contents = doc.contents || [];
  return contents.length > 0 && contents.every((c) => (c.metadata || {}).status === "encrypted");
}

const tried = new Set();  // files a password was sent for from this page: a second lock means a wrong one

function lockForm(message, doc, name) {
  const form = document.createElement("form");
  form.className = "lock";
  form.dataset.fileId = String(doc.fileId);
  form.autocomplete = "off";
  const why = document.createElement("span");
  why.className = "why";
  why.textContent = tried.has(doc.fileId) ? "That password does not open it. Try again:" : "Encrypted: its password";
  const field = document.createElement("input");
  field.type = "password";
  field.autocomplete = "off";
  field.setAttribute("aria-label", `Password for ${name}`);
  const go = document.createElement("button");
  go.type = "submit";
  go.textContent = "Open";
  go.setAttribute("aria-label", `Open ${name} with this password`);
  form.append(why, field, go);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!field.value) {
      notify(`Type the password of ${name} first.`, "info");
      field.focus();
      return;
    }
    tried.add(doc.fileId);
    // The request it came with, asked again with the file opened (the message box's text if any).
    hooks.resend({ prompt: message.content, fileIds: [doc.fileId], passwords: { [doc.fileId]: field.value } });
  });
  return form;
}

function renderDocuments(message) {
  const list = document.createElement("ul");
  list.className = "docs";
  for (const doc of message.documents || []) {
    const li = document.createElement("li");
    const name = fileName(doc);
    const get = button(name, `Download ${name}`, () => attempt(() => download(doc)), "doc");
    const type = document.createElement("span");
    type.className = "type";
    type.textContent = friendlyType(doc.mimeType, doc.ext);
    const remove = button("×", `Remove ${name} from this message`, () => attempt(async () => {
      if (!confirm(`Remove ${name} from this message? Later rounds will no longer see it.`)) return;
      await api("DELETE", `${wid(hooks.workflowId())}/messages/${message.id}/files/${doc.fileId}`);
      li.remove();
    }), "remove");
    li.append(get, type, remove);
    if (message.role === "user" && locked(doc)) li.append(lockForm(message, doc, name));
    list.append(li);
  }
  return list;
}

async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement("textarea");  // a page served over plain HTTP to another host
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  const done = document.execCommand("copy");
  area.remove();
  if (!done) throw new Error("The browser did not let the page copy; select the text and copy it by hand.");
}

function copyButton(message) {
  const b = button("Copy", `Copy message ${message.id}`, () => attempt(async () => {
    await copyText(message.content);
    b.textContent = "Copied";
    setTimeout(() => { b.textContent = "Copy"; }, 1500);
  }), "tool");
  return b;
}

// A request's text becomes a box to edit; Send posts it as the conversation's next round, with the
// same files.
function editor(message, body) {
  const form = document.createElement("form");
  form.className = "edit";
  const area = document.createElement("textarea");
  area.value = message.content;
  area.rows = Math.min(8, Math.max(2, message.content.split("\n").length));
  area.setAttribute("aria-label", "Edit your message");
  const send = document.createElement("button");
  send.type = "submit";
  send.className = "primary";
  send.textContent = "Send edited";
  const cancel = button("Cancel", "", () => form.replaceWith(body));
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(cancel, send);
  form.append(area, actions);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const prompt = area.value.trim();
    const fileIds = (message.documents || []).map((doc) => doc.fileId);
    if (!prompt && !fileIds.length) return;
    send.disabled = true;
    if (await hooks.resend({ prompt, fileIds, passwords: {} })) form.replaceWith(body);
    else send.disabled = false;
  });
  area.addEventListener("keydown", (event) => {
    if (event.key === "Escape") form.replaceWith(body);
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); form.requestSubmit(); }
  });
  return form;
}

export function renderMessage(message) {
  const kind = kindOf(message);
  const li = document.createElement("li");
  li.className = `message ${message.role} ${message.status} ${kind}`;
  li.dataset.id = message.id;
  li.dataset.round = message.round;
  const meta = document.createElement("div");
  meta.className = "meta";
  const agent = document.createElement("span");
  agent.className = "agent";
  agent.textContent = agentLabel(message);
  const badge = document.createElement("span");
  badge.className = "badge";
  badge.textContent = kind === "step" && message.metadata && message.metadata.taskId ? `step ${message.metadata.taskId}` : kind;
  const round = document.createElement("span");
  round.className = "round";
  round.textContent = `round ${message.round ?? ""}`;
  const time = document.createElement("time");
  time.dateTime = message.finishedAt || message.startedAt || "";
  time.textContent = time.dateTime ? new Date(time.dateTime).toLocaleTimeString() : "";
  const tools = document.createElement("span");
  tools.className = "tools";
  const content = document.createElement("div");
  content.className = "content";
  const body = document.createElement("div");
  body.className = "body";
  body.append(renderMarkdown(message.content));
  content.append(body);
  if ((message.documents || []).length) content.append(renderDocuments(message));
  const fork = (message.metadata || {}).forkOf;
  if (fork) {  // a flow's rerun says where it starts
    const note = document.createElement("p");
    note.className = "fork";
    note.textContent = `Rerun of round ${fork.round}${fork.node ? ` from node ${fork.node}` : ""}: what ran before it is reused.`;
    content.append(note);
  }
  if (kind === "plan" || kind === "step") {  // the work behind the answer: collapsible
    const toggle = button("Hide", `Hide ${kind} of ${agentLabel(message)}`, () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      content.hidden = !open;
      toggle.textContent = open ? "Hide" : "Show";
      toggle.setAttribute("aria-label", `${open ? "Hide" : "Show"} ${kind} of ${agentLabel(message)}`);
    }, "tool toggle");
    toggle.setAttribute("aria-expanded", "true");
    tools.append(toggle);
  }
  if (message.content) tools.append(copyButton(message));
  if (kind === "plan") tools.append(saveAsFlowButton(message, hooks.workflowId));
  if (kind === "request") tools.append(button("Edit", "Edit this request", () => body.replaceWith(editor(message, body)), "tool"));
  tools.append(button("Delete", "Delete message", () => attempt(async () => {
    if (!confirm("Delete this message? Later rounds will no longer see it or its files.")) return;
    await api("DELETE", `${wid(hooks.workflowId())}/messages/${message.id}`);
    hooks.forget(message.id);
    li.remove();
  }), "remove"));
  meta.append(agent, badge, round, time, tools);
  li.append(meta, content);
  return li;
}

// The line a stopped round leaves in the list of messages.
export function stoppedNote(round) {
  const li = document.createElement("li");
  li.className = "event stopped";
  li.dataset.stoppedRound = String(round);
  li.textContent = `Round ${round} was stopped before it finished. Send a message to go on.`;
  return li;
}
