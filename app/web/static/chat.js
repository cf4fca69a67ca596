// The chat page: plain JavaScript on the public API only. It follows a conversation through
// the event stream (fetch, so the API key can travel as a bearer header) and falls back to
// polling by cursor when the stream cannot be had. It stores the API key and UI preferences.
import { renderMarkdown } from "./markdown.js";
import { initReview, reviewMessage, reviewOpened, reviewStartOptions, reviewStatus, reviewStatusText } from "./review.js";

const $ = (id) => document.getElementById(id);
const KEY = "foreman.apiKey";
const LOGS_OPEN = "foreman.logsOpen";
const TERMINAL = new Set(["completed", "stopped", "failed"]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let view = fresh(null);

function fresh(id) {
  return { id, gen: 0, controller: null, cursor: { m: 0, l: 0 }, status: null, messages: new Map(), logs: 0,
    drafts: new Map(), lastEventId: "" };
}

// ---- talking to the API -------------------------------------------------------------

function auth(extra = {}) {
  const key = localStorage.getItem(KEY);
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

async function problem(response) {
  try {
    const body = await response.json();
    if (body && body.detail) return body.detail;
  } catch { /* not JSON */ }
  return `The server answered ${response.status} ${response.statusText}.`;
}

async function api(method, path, body) {
  const init = { method, headers: auth(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new Error("The server cannot be reached. Is it running?");
  }
  if (!response.ok) {
    const error = new Error(await problem(response));
    error.status = response.status;
    throw error;
  }
  return response.json();
}

function wid(id) {
  return `/api/workflows/${encodeURIComponent(id)}`;
}

// ---- notices ------------------------------------------------------------------------

function notify(text, kind = "error") {
  const box = document.createElement("div");
  box.className = `notice ${kind}`;
  const words = document.createElement("span");
  words.textContent = text;
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = "Dismiss";
  close.addEventListener("click", () => box.remove());
  box.append(words, close);
  $("notices").append(box);
  if (kind !== "error") setTimeout(() => box.remove(), 6000);
}

async function attempt(work) {
  try {
    return await work();
  } catch (error) {
    notify(error.message || String(error));
    return undefined;
  }
}

// ---- the conversation list ----------------------------------------------------------

async function loadList() {
  const body = await api("GET", "/api/workflows");
  const list = $("conversations");
  list.replaceChildren();
  for (const item of body.items) {
    const li = document.createElement("li");
    const link = document.createElement("a");
    link.href = `#/w/${encodeURIComponent(item.id)}`;
    link.textContent = shortTitle(item.name || "Untitled");
    link.title = item.name || "Untitled";
    if (item.id === view.id) link.setAttribute("aria-current", "page");
    const status = document.createElement("span");
    status.className = `status ${item.status}`;
    status.textContent = item.status;
    li.append(link, status);
    list.append(li);
  }
}

// ---- names a person reads --------------------------------------------------------------

const TYPES = {
  "application/pdf": "PDF document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel workbook",
  "application/vnd.ms-excel": "Excel workbook (old format)",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
  "application/msword": "Word document (old format)",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint presentation",
  "application/vnd.oasis.opendocument.text": "OpenDocument text",
  "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument spreadsheet",
  "application/vnd.oasis.opendocument.presentation": "OpenDocument presentation",
  "text/plain": "Text file", "text/csv": "CSV table", "text/tab-separated-values": "TSV table",
  "text/markdown": "Markdown text", "text/html": "Web page (HTML)", "application/json": "JSON data",
  "application/xml": "XML data", "text/xml": "XML data", "application/zip": "ZIP archive",
  "image/png": "PNG image", "image/jpeg": "JPEG image", "image/gif": "GIF image", "image/tiff": "TIFF image",
  "image/webp": "WebP image", "image/bmp": "BMP image",
};

// A file's type as a person names it ("Excel workbook"), not its MIME type.
function friendlyType(mime, ext) {
  const bare = (mime || "").split(";")[0].trim().toLowerCase();
  if (TYPES[bare]) return TYPES[bare];
  if (ext) return `${String(ext).toUpperCase()} file`;
  return bare ? "File" : "";
}

// A title cut at a word, with an ellipsis, when it is too long for the list.
function shortTitle(title, max = 48) {
  const text = String(title).replace(/\s+/g, " ").trim();
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s.,;:!?-]+$/, "")}…`;
}

// ---- rendering ----------------------------------------------------------------------

function agentLabel(message) {
  if (message.role === "user") return "You";
  const name = (message.agentName || message.role || "assistant").replace(/_/g, " ");
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function button(text, label, onClick, className = "") {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (label) b.setAttribute("aria-label", label);
  if (className) b.className = className;
  b.addEventListener("click", onClick);
  return b;
}

function fileName(doc) {
  return doc.ext && !doc.name.endsWith(`.${doc.ext}`) ? `${doc.name}.${doc.ext}` : doc.name;
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
      await api("DELETE", `${wid(view.id)}/messages/${message.id}/files/${doc.fileId}`);
      li.remove();
    }), "remove");
    li.append(get, type, remove);
    list.append(li);
  }
  return list;
}

function renderMessage(message) {
  const li = document.createElement("li");
  li.className = `message ${message.role} ${message.status}`;
  li.dataset.id = message.id;
  const meta = document.createElement("div");
  meta.className = "meta";
  const agent = document.createElement("span");
  agent.className = "agent";
  agent.textContent = agentLabel(message);
  const status = document.createElement("span");
  status.className = "badge";
  status.textContent = message.status;
  const round = document.createElement("span");
  round.className = "round";
  round.textContent = `round ${message.round ?? ""}`;
  const time = document.createElement("time");
  time.dateTime = message.finishedAt || message.startedAt || "";
  time.textContent = time.dateTime ? new Date(time.dateTime).toLocaleTimeString() : "";
  const remove = button("Delete", "Delete message", () => attempt(async () => {
    if (!confirm("Delete this message? Later rounds will no longer see it or its files.")) return;
    await api("DELETE", `${wid(view.id)}/messages/${message.id}`);
    view.messages.delete(message.id);
    li.remove();
  }), "remove");
  meta.append(agent, status, round, time, remove);
  const body = document.createElement("div");
  body.className = "body";
  body.append(renderMarkdown(message.content));
  li.append(meta, body);
  if ((message.documents || []).length) li.append(renderDocuments(message));
  return li;
}

// ---- live text: a message as the model writes it ------------------------------------

function keepScroll(change) {
  // Replacing or growing a message keeps the view where it was, or at the bottom if it was there.
  const scroller = document.scrollingElement;
  const bottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 8;
  const top = scroller.scrollTop;
  change();
  scroller.scrollTop = bottom ? scroller.scrollHeight : top;
}

function showDelta(delta) {
  let draft = view.drafts.get(delta.messageId);
  if (!draft) {
    if (delta.offset !== 0) return;  // its beginning was never seen here: its message will come whole
    const li = document.createElement("li");
    li.className = "message assistant draft";
    li.dataset.draft = delta.messageId;
    const meta = document.createElement("div");
    meta.className = "meta";
    const agent = document.createElement("span");
    agent.className = "agent";
    agent.textContent = "writing…";
    meta.append(agent);
    const body = document.createElement("div");
    body.className = "body";
    li.append(meta, body);
    draft = { text: "", li, body, queued: false };
    view.drafts.set(delta.messageId, draft);
    keepScroll(() => $("messages").append(li));
    $("empty").hidden = true;
  }
  if (delta.offset !== draft.text.length) return;
  draft.text += delta.text;
  if (!draft.queued) {  // one render per frame, however many deltas came
    draft.queued = true;
    requestAnimationFrame(() => {
      draft.queued = false;
      const caret = document.createElement("span");
      caret.className = "caret";
      caret.setAttribute("aria-hidden", "true");
      keepScroll(() => draft.body.replaceChildren(renderMarkdown(draft.text), caret));
    });
  }
}

function dropDraft(id) {
  const draft = view.drafts.get(id);
  if (!draft) return null;
  view.drafts.delete(id);
  return draft.li;
}

function showMessage(message) {
  const list = $("messages");
  const node = renderMessage(message);
  const old = list.querySelector(`li[data-id="${message.id}"]`);
  const draft = dropDraft((message.metadata || {}).draftId);
  if (draft) keepScroll(() => draft.replaceWith(node));  // in place: no flicker, no jump
  else if (old) old.replaceWith(node);
  else {
    const after = [...list.children].find((li) => Number(li.dataset.id) > message.id);
    list.insertBefore(node, after || null);
  }
  view.messages.set(message.id, message);
  view.cursor.m = Math.max(view.cursor.m, message.id);
  $("empty").hidden = true;
  if (!draft) node.scrollIntoView({ block: "nearest" });
  reviewMessage(message);
}

function showLog(entry) {
  view.cursor.l = Math.max(view.cursor.l, entry.id);
  const li = document.createElement("li");
  li.className = entry.type;
  const time = new Date(entry.timestamp).toLocaleTimeString();
  const progress = entry.progress == null ? "" : ` (${entry.progress}%)`;
  li.textContent = `${time} ${entry.agentName || "system"}: ${entry.message}${progress}`;
  $("logs").append(li);
  view.logs += 1;
  $("log-count").textContent = `(${view.logs})`;
  if (entry.type === "error") notify(entry.message);
  if (entry.progress != null && (!view.status || entry.round === view.status.currentRound)) {
    setProgress(Math.max(entry.progress, Number($("progress").getAttribute("aria-valuenow"))));
  }
}

function setProgress(value) {
  $("progress-row").hidden = false;
  $("progress").setAttribute("aria-valuenow", String(value));
  $("progress").querySelector(".fill").style.width = `${value}%`;
  $("progress-text").textContent = `${value}%`;
}

function showStatus(status) {
  const before = view.status;
  view.status = status;
  $("status").textContent = reviewStatusText(status) || `${status.status} · round ${status.currentRound}`;
  $("status").className = `status ${status.status}`;
  $("stop").disabled = status.status !== "running" && status.status !== "waiting";
  reviewStatus(status);
  setProgress(before && before.currentRound !== status.currentRound ? status.progress
    : Math.max(status.progress, Number($("progress").getAttribute("aria-valuenow"))));
  if (!before || before.status !== status.status) attempt(loadList);
}

// ---- following a conversation -------------------------------------------------------

function dispatch(kind, data) {
  if (kind === "delta") showDelta(data);
  else if (kind === "discard") { const li = dropDraft(data.messageId); if (li) li.remove(); }
  else if (kind === "message" || kind === "update") showMessage(data);  // update: a file's contents filled in
  else if (kind === "log") showLog(data);
  else if (kind === "status") showStatus(data);
}

async function readStream(body, gen) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (gen === view.gen) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let kind = "message";
      let id = "";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) kind = line.slice(6).trim();
        else if (line.startsWith("id:")) id = line.slice(3).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length && gen === view.gen) {
        dispatch(kind, JSON.parse(data.join("\n")));
        if (id) view.lastEventId = id;  // a reconnect goes on with each draft where it was
      }
    }
  }
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
        page.items.forEach(show);
        page.items.forEach((item) => { if (item.updatedMessageId) updated.add(item.updatedMessageId); });
      }
      if (updated.size) {  // a file was read: its contents were filled into a message already shown
        const all = await api("GET", `${wid(view.id)}/messages?limit=500`);
        all.items.filter((message) => updated.has(message.id)).forEach(showMessage);
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
  leave();
  const gen = view.gen;
  view = { ...fresh(id), gen, controller: new AbortController() };
  $("messages").replaceChildren();
  $("logs").replaceChildren();
  $("log-count").textContent = "";
  $("progress-row").hidden = true;
  setProgress(0);
  $("progress-row").hidden = !id;
  $("status").textContent = "";
  $("stop").disabled = true;
  $("empty").hidden = Boolean(id);
  $("delete-conversation").hidden = !id;
  $("title").textContent = "New conversation";
  reviewOpened(id, null, view.messages);
  document.querySelectorAll("#conversations a").forEach((a) => {
    if (a.getAttribute("href") === `#/w/${encodeURIComponent(id)}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
  if (!id) return;
  const workflow = await attempt(() => api("GET", wid(id)));
  if (!workflow || gen !== view.gen) return;
  $("title").textContent = shortTitle(workflow.name || "Untitled", 79);  // the server keeps 80 characters
  reviewOpened(id, workflow, view.messages);
  workflow.messages.forEach(showMessage);
  workflow.logs.forEach(showLog);
  follow(gen);
}

function route() {
  const match = /^#\/w\/(.+)$/.exec(location.hash);
  open(match ? decodeURIComponent(match[1]) : null);
  document.body.classList.remove("list-open");
}

// ---- attachments and sending --------------------------------------------------------

const attachments = [];

function upload(file) {
  const item = { file, id: null, done: null };
  const chip = document.createElement("div");
  chip.className = "chip";
  const name = document.createElement("span");
  name.textContent = file.name;
  const progress = document.createElement("progress");
  progress.max = 100;
  progress.value = 0;
  progress.setAttribute("aria-label", `Uploading ${file.name}`);
  const type = document.createElement("span");
  type.className = "type";
  const remove = button("×", `Remove attachment ${file.name}`, () => {
    attachments.splice(attachments.indexOf(item), 1);
    chip.remove();
  }, "remove");
  chip.append(name, progress, type, remove);
  $("attachments").append(chip);
  attachments.push(item);
  item.done = new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    const form = new FormData();
    form.append("files", file, file.name);
    xhr.open("POST", "/api/files");
    for (const [header, value] of Object.entries(auth())) xhr.setRequestHeader(header, value);
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) progress.value = Math.round((100 * event.loaded) / event.total);
    });
    xhr.addEventListener("load", () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status === 201 && body && body[0]) {
        item.id = body[0].id;
        progress.value = 100;
        type.textContent = friendlyType(body[0].mimeType, body[0].ext);
        chip.classList.add("ready");
      } else {
        notify(`${file.name}: ${(body && body.detail) || `upload failed (${xhr.status})`}`);
        attachments.splice(attachments.indexOf(item), 1);
        chip.remove();
      }
      resolve();
    });
    xhr.addEventListener("error", () => {
      notify(`${file.name}: the upload did not reach the server.`);
      attachments.splice(attachments.indexOf(item), 1);
      chip.remove();
      resolve();
    });
    xhr.send(form);
  });
}

async function send() {
  const prompt = $("prompt").value.trim();
  $("send").disabled = true;
  try {
    await Promise.all(attachments.map((a) => a.done));
    const ids = attachments.filter((a) => a.id).map((a) => a.id);
    if (!prompt && !ids.length) {
      notify("Write a message or attach a file first.", "info");
      return;
    }
    const path = view.id ? `/api/workflows/start?id=${encodeURIComponent(view.id)}` : "/api/workflows/start";
    const answer = await attempt(() => api("POST", path, { prompt, listFileId: ids, ...reviewStartOptions() }));
    if (!answer) return;
    $("prompt").value = "";
    attachments.length = 0;
    $("attachments").replaceChildren();
    if (answer.id !== view.id) location.hash = `#/w/${encodeURIComponent(answer.id)}`;
    await attempt(loadList);
  } finally {
    $("send").disabled = false;
  }
}

// ---- wiring -------------------------------------------------------------------------

function start() {
  initReview({ api, wid, notify });
  const key = $("api-key");
  key.value = localStorage.getItem(KEY) || "";
  key.addEventListener("change", () => {
    if (key.value.trim()) localStorage.setItem(KEY, key.value.trim());
    else localStorage.removeItem(KEY);
    attempt(loadList);
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
    for (const id of [...view.drafts.keys()]) dropDraft(id).remove();  // Stop ends the text at once
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
    notify("The conversation was deleted.", "info");
    await loadList();
  }));
  $("toggle-list").addEventListener("click", () => {
    const open = document.body.classList.toggle("list-open");
    $("toggle-list").setAttribute("aria-expanded", String(open));
  });
  window.addEventListener("hashchange", route);
  attempt(loadList);
  route();
}

start();
