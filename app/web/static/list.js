// The conversation list: newest activity first with each one's date and status, a search over the
// titles of the loaded list (client-side: the first page of GET /api/workflows, 100 conversations),
// and renaming the open conversation (PATCH /api/workflows/{id} {"name"}).
import { api, wid } from "./api.js";
import { attempt, notify } from "./notices.js";
import { shortTitle, when } from "./names.js";

const $ = (id) => document.getElementById(id);
let items = [];
let current = null;

export async function loadList(currentId = current) {
  current = currentId;
  const body = await api("GET", "/api/workflows");
  items = body.items;
  render();
}

export function markCurrent(id) {
  current = id;
  document.querySelectorAll("#conversations a").forEach((a) => {
    if (a.dataset.id === id) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
}

function render() {
  const words = $("search").value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const shown = items.filter((item) => {
    const title = (item.name || "Untitled").toLowerCase();
    return words.every((word) => title.includes(word));
  });
  const list = $("conversations");
  list.replaceChildren();
  for (const item of shown) {
    const li = document.createElement("li");
    const link = document.createElement("a");
    link.href = `#/w/${encodeURIComponent(item.id)}`;
    link.dataset.id = item.id;
    link.textContent = shortTitle(item.name || "Untitled");
    link.title = item.name || "Untitled";
    if (item.id === current) link.setAttribute("aria-current", "page");
    const meta = document.createElement("div");
    meta.className = "item-meta";
    const date = document.createElement("time");
    date.dateTime = item.lastActivity || item.startedAt || "";
    date.textContent = when(date.dateTime);
    date.title = date.dateTime ? new Date(date.dateTime).toLocaleString() : "";
    const status = document.createElement("span");
    status.className = `status ${item.status}`;
    status.textContent = item.status;
    meta.append(date, status);
    li.append(link, meta);
    list.append(li);
  }
  $("no-match").hidden = shown.length > 0 || !words.length;
  $("no-conversations").hidden = items.length > 0;
}

// The open conversation's title turns into a field: Enter or Save renames it, Escape leaves it.
function startRename() {
  if (!current) return;
  const item = items.find((i) => i.id === current);
  $("rename-name").value = item ? item.name : $("title").textContent;
  $("rename-form").hidden = false;
  $("title-row").hidden = true;
  $("rename-name").focus();
  $("rename-name").select();
}

function endRename() {
  $("rename-form").hidden = true;
  $("title-row").hidden = false;
}

async function saveRename() {
  const name = $("rename-name").value.trim();
  if (!name) {
    notify("Give the conversation a name first, or press Escape to keep the one it has.", "info");
    return;
  }
  const id = current;
  const renamed = await attempt(() => api("PATCH", wid(id), { name }));
  if (!renamed) return;
  endRename();
  if (id === current) setTitle(renamed.name);
  await attempt(() => loadList());
}

export function setTitle(name) {
  $("title").textContent = shortTitle(name || "Untitled", 79);  // the server keeps 80 characters
  $("title").title = name || "";
}

export function initList() {
  $("search").addEventListener("input", render);
  $("rename").addEventListener("click", startRename);
  $("rename-form").addEventListener("submit", (event) => { event.preventDefault(); saveRename(); });
  $("rename-cancel").addEventListener("click", endRename);
  $("rename-name").addEventListener("keydown", (event) => {
    if (event.key === "Escape") { event.preventDefault(); endRename(); }
  });
}

export function listOpened(id) {
  endRename();
  markCurrent(id);
  $("rename").hidden = !id;
}
