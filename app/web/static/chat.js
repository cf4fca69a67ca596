// The chat page: plain JavaScript on the public API only. It follows a conversation through
// the event stream (fetch, so the API key can travel as a bearer header) and falls back to
// polling by cursor when the stream cannot be had. Beside it: api.js (calls, the key), notices.js,
// names.js (types, titles, dates), list.js (the conversation list, search, rename), render.js (a
// message, copy, edit and resend, password fields), drafts.js (live text), scroll.js, stream.js
// (the event stream's text), uploads.js (attachments), review.js (plan review), markdown.js.
import { dropDraft, reveal, showDelta } from "./drafts.js";
import { keepScroll, showEnd } from "./scroll.js";
import { api, auth, problem, showKeyField, storedKey, storeKey, wid } from "./api.js";
import { readEvents } from "./stream.js";
import { attached, clearAttachments, upload } from "./uploads.js";
import { attempt, clearNotices, clearScope, notify } from "./notices.js";
import { initList, listOpened, loadList, setTitle } from "./list.js";
import { initRender, renderMessage, stoppedNote } from "./render.js";
import { flowMessage, flowOpened, flowStatus, flowWait, initFlowRun } from "./flowrun.js";
import { hideFlows, initFlows, showFlows } from "./flows.js";
import { initReview, reviewMessage, reviewOpened, reviewStartOptions, reviewStatus, reviewStatusText } from "./review.js";

const $ = (id) => document.getElementById(id);
const LOGS_OPEN = "foreman.logsOpen";
const TERMINAL = new Set(["completed", "stopped", "failed"]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let view = fresh(null);

function fresh(id) {
  return { id, gen: 0, controller: null, cursor: { m: 0, l: 0 }, status: null, messages: new Map(), logs: 0,
    drafts: new Map(), lastEventId: "", reached: 0, ended: null };
}

// A message's documents as a key: the same files, as they were, keep their chips across a redraw.
const docsKey = (message) => JSON.stringify(message.documents || []);

function showMessage(message, live = true) {
  const list = $("messages");
  const old = list.querySelector(`li[data-id="${message.id}"]`);
  const known = view.messages.get(message.id);
  // The same message again (the stream and a poll both brought it): nothing to redraw, and a click on
  // one of its chips in that moment is not lost to a replaced node.
  if (old && known && JSON.stringify(known) === JSON.stringify(message)) return;
  const node = renderMessage(message);
  const chips = old && known && docsKey(known) === docsKey(message) ? old.querySelector("ul.docs") : null;
  if (chips) node.querySelector("ul.docs").replaceWith(chips);  // kept, not redrawn: a click on one lands
  const draft = dropDraft(view.drafts, (message.metadata || {}).draftId);
  // A message that came whole (no live text, or all of it in one delta, as an offline model's does).
  const whole = !old && live && message.role !== "user" && (!draft || Number(draft.dataset.deltas || 0) <= 1);
  // Once put there whole, the round's end is in view again if the round has ended (text grew above it).
  if (whole) reveal(node, message.content, () => { if (view.status && TERMINAL.has(view.status.status)) showEnd(); });
  if (draft) keepScroll(() => draft.replaceWith(node));  // in place: no flicker, no jump
  else if (old) {
    const toggle = old.querySelector(".toggle[aria-expanded=false]");  // a collapsed step stays collapsed
    old.replaceWith(node);
    if (toggle) node.querySelector(".toggle").click();
  } else {
    const after = [...list.children].find((li) => Number(li.dataset.id) > message.id);
    keepScroll(() => list.insertBefore(node, after || null));  // followed at the bottom, left alone above
  }
  const fresh = !view.messages.has(message.id);
  view.messages.set(message.id, message);
  view.cursor.m = Math.max(view.cursor.m, message.id);
  if (fresh && message.status === "last" && live) requestAnimationFrame(showEnd);  // the round's answer
  $("empty").hidden = true;
  refreshLocks();
  reviewMessage(message);
  if (fresh) attempt(() => flowMessage(message));
  if (view.status) flowWait(view.status, view.messages);  // a human node's message came after its wait
}

// A password field only on a file's latest showing, and none once a later round opened it.
function refreshLocks() {
  const latest = new Map();  // file id -> the latest user message that carries it
  for (const message of [...view.messages.values()].sort((a, b) => a.id - b.id)) {
    if (message.role !== "user") continue;
    for (const doc of message.documents || []) latest.set(doc.fileId, message.id);
  }
  document.querySelectorAll("#messages .lock").forEach((form) => {
    const id = Number(form.closest("li.message").dataset.id);
    form.hidden = latest.get(Number(form.dataset.fileId)) !== id;
  });
}

function showLog(entry, live = true) {
  view.cursor.l = Math.max(view.cursor.l, entry.id);
  const li = document.createElement("li");
  li.className = entry.type;
  const time = new Date(entry.timestamp).toLocaleTimeString();
  const progress = entry.progress == null ? "" : ` (${entry.progress}%)`;
  li.textContent = `${time} ${entry.agentName || "system"}: ${entry.message}${progress}`;
  $("logs").append(li);
  view.logs += 1;
  $("log-count").textContent = `(${view.logs})`;
  if (entry.type === "error" && live) notify(entry.message, "error", "round");  // not again for a conversation reopened
  if (entry.status === "stopped" && entry.agentName === "system") showStopped(entry.round);
  if (!view.status || entry.round === view.status.currentRound) {
    // A stopped or failed round's last log says 100: the bar stays where the work got to.
    if (entry.status === "stopped" || entry.status === "failed") view.ended = entry.status;
    else if (entry.progress != null) view.reached = Math.max(view.reached, entry.progress);
    setProgress(view.reached);
  }
}

function showStopped(round) {
  const list = $("messages");
  if (list.querySelector(`li[data-stopped-round="${round}"]`)) return;
  // After the round's messages, before the next round's.
  const after = [...list.children].find((li) => Number(li.dataset.round) > round);
  keepScroll(() => list.insertBefore(stoppedNote(round), after || null));
}

function setProgress(value) {
  const words = view.ended ? `${value}% · ${view.ended}` : `${value}%`;
  $("progress-row").hidden = false;
  $("progress").setAttribute("aria-valuenow", String(value));
  $("progress").setAttribute("aria-valuetext", words);
  $("progress").classList.toggle("ended", Boolean(view.ended));
  $("progress").querySelector(".fill").style.width = `${value}%`;
  $("progress-text").textContent = words;
}

function showStatus(status) {
  const before = view.status;
  view.status = status;
  $("status").textContent = reviewStatusText(status) || `${status.status} · round ${status.currentRound}`;
  $("status").className = `status ${status.status}`;
  $("stop").disabled = status.status !== "running" && status.status !== "waiting";
  $("multitask").hidden = status.status !== "running";
  reviewStatus(status);
  flowStatus(status);
  flowWait(status, view.messages);
  const newRound = before && before.currentRound !== status.currentRound;
  if (before && (newRound || before.status !== status.status)) clearScope("send", "review");  // what they said is past
  if (newRound) { clearScope("round"); view.reached = 0; view.ended = null; }
  if (status.status === "stopped" || status.status === "failed") view.ended = status.status;
  else { view.ended = null; view.reached = Math.max(view.reached, status.progress); }
  if (!view.reached && view.ended && status.progress < 100) view.reached = status.progress;
  setProgress(view.reached);
  if (!before || before.status !== status.status) attempt(() => loadList(view.id));
  if (before && !TERMINAL.has(before.status) && TERMINAL.has(status.status)) {
    requestAnimationFrame(showEnd);  // after the round's last message is drawn
  }
}

// ---- following a conversation -------------------------------------------------------

function dispatch(kind, data) {
  if (kind === "delta") showDelta(view.drafts, data);
  else if (kind === "discard") { const li = dropDraft(view.drafts, data.messageId); if (li) li.remove(); }
  else if (kind === "message" || kind === "update") showMessage(data);  // update: a file's contents filled in
  else if (kind === "log") showLog(data);
  else if (kind === "status") showStatus(data);
}

async function readStream(body, gen) {
  await readEvents(body, () => gen === view.gen, (kind, data, id) => {
    dispatch(kind, data);
    if (id) view.lastEventId = id;  // a reconnect goes on with each draft where it was
  });
}

async function follow(gen) {
  let failures = 0;
  while (gen === view.gen) {
    try {
      const query = `messageId=${view.cursor.m}&logId=${view.cursor.l}`;
      const resume = view.lastEventId ? { "Last-Event-ID": view.lastEventId } : {};
      const response = await fetch(`${wid(view.id)}/events?${query}`, {
        headers: auth({ Accept: "text/event-stream", ...resume }), signal: view.controller.signal,
      });
      if (response.status === 404) {
        notify("This conversation does not exist (any more), or belongs to another key.");
        return;
      }
      if (!response.ok || !response.body) throw new Error(await problem(response));
      failures = 0;
      await readStream(response.body, gen);
    } catch (error) {
      if (view.controller.signal.aborted || gen !== view.gen) return;
      failures += 1;
      if (failures >= 3) return poll(gen);
    }
    await sleep(500 * 2 ** failures);
  }
}

async function poll(gen) {
  notify("Live updates are not available; following the conversation by polling.", "info");
  while (gen === view.gen) {
    const ok = await attempt(async () => {
      const updated = new Set();
      for (const [kind, key, show] of [["messages", "m", showMessage], ["logs", "l", showLog]]) {
        const page = await api("GET", `${wid(view.id)}/${kind}?id=${view.cursor[key] || ""}`);
        page.items.forEach((item) => show(item));
        page.items.forEach((item) => { if (item.updatedMessageId) updated.add(item.updatedMessageId); });
      }
      if (updated.size) {  // a file was read: its contents were filled into a message already shown
        const all = await api("GET", `${wid(view.id)}/messages?limit=500`);
        all.items.filter((message) => updated.has(message.id)).forEach((message) => showMessage(message));
      }
      showStatus(await api("GET", `${wid(view.id)}/status`));
    });
    if (ok === undefined && gen !== view.gen) return;
    await sleep(view.status && TERMINAL.has(view.status.status) ? 5000 : 1000);
  }
}

function leave() {
  view.gen += 1;
  if (view.controller) view.controller.abort();
}

async function open(id) {
  if (id !== view.id) clearNotices();  // notices speak of the conversation that was open
  leave();
  const gen = view.gen;
  view = { ...fresh(id), gen, controller: new AbortController() };
  $("messages").replaceChildren();
  $("logs").replaceChildren();
  $("log-count").textContent = "";
  $("progress-row").hidden = true;
  $("multitask").hidden = true;
  setProgress(0);
  $("progress-row").hidden = !id;
  $("status").textContent = "";
  $("stop").disabled = true;
  $("empty").hidden = Boolean(id);
  $("delete-conversation").hidden = !id;
  $("title").textContent = "New conversation";
  reviewOpened(id, null, view.messages);
  flowOpened(id);
  listOpened(id);
  if (!id) return;
  const workflow = await attempt(() => api("GET", wid(id)));
  if (!workflow || gen !== view.gen) return;
  setTitle(workflow.name);
  reviewOpened(id, workflow, view.messages);
  workflow.messages.forEach((message) => showMessage(message, false));
  workflow.logs.forEach((entry) => showLog(entry, false));
  $("thread").scrollTop = $("thread").scrollHeight;
  follow(gen);
}

// The conversation a location's hash names: "#/w/<id>" as the page writes it, or a bare "#<id>" (or
// "#w/<id>") as a person pastes or types it; null for none.
function hashId(hash) {
  const match = /^#\/?(?:w\/)?([^/?#\s]+)\/?$/.exec(hash || "");
  if (!match) return null;
  try { return decodeURIComponent(match[1]); } catch { return null; }
}

function route() {
  const flows = /^#\/flows(?:\/(\d+))?\/?$/.exec(location.hash);
  document.body.classList.remove("list-open");
  if (flows) { leave(); showFlows(flows[1]); return; }
  hideFlows();
  const id = hashId(location.hash);
  const canonical = id ? `#/w/${encodeURIComponent(id)}` : "";
  if (location.hash !== canonical) {  // one form in the address bar; no second hashchange for it
    history.replaceState(null, "", `${location.pathname}${location.search}${canonical}`);
  }
  open(id);
  document.body.classList.remove("list-open");
}

// ---- sending ------------------------------------------------------------------------

// A new round: of the open conversation, or a new conversation. True when the server took it.
async function startRound({ prompt, fileIds, passwords }) {
  const path = view.id ? `/api/workflows/start?id=${encodeURIComponent(view.id)}` : "/api/workflows/start";
  const body = { prompt, listFileId: fileIds, ...reviewStartOptions() };
  if (passwords && Object.keys(passwords).length) body.passwords = passwords;
  let queuedWhy = "your message";
  if (view.status && view.status.status === "running") {  // steer, queue or interrupt, as the person chose
    body.multitaskStrategy = document.querySelector("input[name=multitask]:checked").value;
    if (body.multitaskStrategy === "steer" && fileIds.length) {
      // Files cannot join a running round (a steer is words only): a post with files, a password's
      // resend among them, runs next. Clicked as a round ends, before its status arrived, it was refused.
      body.multitaskStrategy = "enqueue";
      queuedWhy = "a message with files";
    }
  }
  const answer = await attempt(() => api("POST", path, body), "send");
  if (!answer) return false;
  if (answer.queued) notify(`Queued: ${queuedWhy} runs as the next round when this one ends.`, "info");
  if (answer.id !== view.id) location.hash = `#/w/${encodeURIComponent(answer.id)}`;
  await attempt(() => loadList());
  return true;
}

async function send() {
  const prompt = $("prompt").value.trim();
  $("send").disabled = true;
  try {
    const ids = await attached();
    if (!prompt && !ids.length) {
      notify("Write a message or attach a file first.", "info");
      return;
    }
    if (!await startRound({ prompt, fileIds: ids, passwords: {} })) return;
    $("prompt").value = "";
    clearAttachments();
  } finally {
    $("send").disabled = false;
  }
}

// ---- wiring -------------------------------------------------------------------------

function start() {
  initReview({ api, wid, notify: (text, kind) => notify(text, kind, "review") });
  initList();
  initFlows();
  initFlowRun();
  initRender({
    workflowId: () => view.id,
    forget: (id) => view.messages.delete(id),
    resend: (request) => startRound(request),
  });
  const key = $("api-key");
  key.value = storedKey();
  if (key.value) showKeyField();
  $("key-field").addEventListener("submit", (event) => event.preventDefault());
  key.addEventListener("change", () => {
    storeKey(key.value.trim());
    attempt(() => loadList());
    route();
  });
  const panel = $("logs-panel");
  panel.open = localStorage.getItem(LOGS_OPEN) === "1";
  panel.addEventListener("toggle", () => localStorage.setItem(LOGS_OPEN, panel.open ? "1" : "0"));
  $("composer").addEventListener("submit", (event) => { event.preventDefault(); send(); });
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });
  $("files").addEventListener("change", (event) => {
    [...event.target.files].forEach(upload);
    event.target.value = "";
  });
  const drop = $("drop");
  drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    [...event.dataTransfer.files].forEach(upload);
  });
  $("stop").addEventListener("click", () => attempt(async () => {
    for (const id of [...view.drafts.keys()]) dropDraft(view.drafts, id).remove();  // Stop ends the text at once
    showStatus(await api("POST", `${wid(view.id)}/stop`));
  }));
  $("new-conversation").addEventListener("click", () => {
    location.hash = "";
    route();
    $("prompt").focus();
  });
  $("delete-conversation").addEventListener("click", () => attempt(async () => {
    if (!confirm(`Delete the conversation "${$("title").textContent}" with its messages and files?`)) return;
    const id = view.id;
    leave();
    await api("DELETE", wid(id));
    location.hash = "";
    await loadList(null);
    notify("The conversation was deleted.", "info");
  }));
  $("toggle-list").addEventListener("click", () => {
    const open = document.body.classList.toggle("list-open");
    $("toggle-list").setAttribute("aria-expanded", String(open));
  });
  window.addEventListener("hashchange", route);
  attempt(() => loadList());
  route();
}

start();
