// The Flows view (#/flows, #/flows/<id>): the person's flows (search, rename, delete), the open
// flow's graph, its versions (publish with a name and a comment), the form that runs it (built from
// its inputs, with a version picker: the latest published one by default, or the draft) and the
// draft's editor (flow_edit.js). A run opens as a round of a conversation, like any other.
import { api, auth, problem } from "./api.js";
import { can } from "./caps.js";
import { attempt, notify } from "./notices.js";
import { drawGraph } from "./graph.js";
import { openEditor } from "./flow_edit.js";
import { comparePart } from "./flow_diff.js";
import { field, inputFields, labelled, readInputs } from "./flow_inputs.js";
import { when } from "./names.js";

const $ = (id) => document.getElementById(id);
let flows = [];
let open = null;  // { flow, versions, graph }

const fid = (id) => `/api/flows/${encodeURIComponent(id)}`;

export async function showFlows(id) {
  document.body.classList.add("flows-open");
  $("main").hidden = true;
  $("flows").hidden = false;
  await attempt(loadFlows, "flows");
  if (id) await attempt(() => openFlow(Number(id)), "flows");
  else { open = null; $("flow-detail").replaceChildren(field("p", { className: "empty" }, "Pick a flow to see its graph, its versions and to run it.")); }
}

export function hideFlows() {
  document.body.classList.remove("flows-open");
  $("flows").hidden = true;
  $("main").hidden = false;
}

async function loadFlows() {
  flows = (await api("GET", "/api/flows")).items;
  renderList();
}

function renderList() {
  const words = $("flow-search").value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const shown = flows.filter((f) => words.every((w) => `${f.name} ${f.description || ""}`.toLowerCase().includes(w)));
  $("flow-items").replaceChildren(...shown.map((f) => {
    const li = field("li");
    const link = field("a", { href: `#/flows/${f.id}` }, f.name);
    if (open && open.flow.id === f.id) link.setAttribute("aria-current", "page");
    li.append(link, field("span", { className: "item-meta" }, f.description || ""));
    return li;
  }));
  $("no-flows").hidden = flows.length > 0;
}

async function openFlow(id) {
  const [flow, versions] = await Promise.all([api("GET", fid(id)), api("GET", `${fid(id)}/versions`)]);
  open = { flow, versions, graph: null };
  renderList();
  renderFlow();
}

function renderFlow() {
  const { flow, versions } = open;
  const box = $("flow-detail");
  const head = field("div", { className: "flow-head" });
  const title = field("h3", { id: "flow-title" }, flow.name);
  const rename = field("button", { type: "button" }, "Rename flow");
  rename.addEventListener("click", () => renameFlow());
  const remove = field("button", { type: "button", className: "danger" }, "Delete flow");
  remove.addEventListener("click", () => attempt(async () => {
    if (!confirm(`Delete the flow "${flow.name}" and its versions? The rounds it ran stay.`)) return;
    await api("DELETE", fid(flow.id));
    location.hash = "#/flows";
    notify("The flow was deleted.", "info");
  }, "flows"));
  head.append(title, rename, remove);
  const graph = field("div", { className: "graph-box", id: "flow-graph" });
  box.replaceChildren(head, field("p", { className: "muted" }, flow.description || ""), graph,
    runForm(flow, versions), versionsPart(flow, versions), field("div", { id: "flow-editor" }));
  open.graph = drawGraph(graph, flow.draft, { title: `Graph of ${flow.name}`, onPick: (node) => openEditor(open, node, saved) });
  open.graph.update();
  openEditor(open, null, saved);
  document.dispatchEvent(new CustomEvent("flow-drawn"));
}

function saved(flow) {  // the editor saved the draft: the graph and the form follow it
  open.flow = flow;
  renderFlow();
}

function renameFlow() {
  const title = $("flow-title");
  const input = field("input", { value: open.flow.name, maxLength: 200 });
  input.setAttribute("aria-label", "Flow name");
  const form = field("form", { className: "rename" });
  form.append(input, field("button", { type: "submit", className: "primary" }, "Save name"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const { name: _old, ...rest } = open.flow.draft;
      open.flow = await api("PUT", fid(open.flow.id), { ...rest, name: input.value.trim() });
      await loadFlows();
      renderFlow();
      return true;
    }, "flows");
  });
  title.replaceWith(form);
  input.focus();
}

// ---- running -----------------------------------------------------------------------

function runForm(flow, versions) {
  const form = field("form", { className: "run-form", autocomplete: "off" });
  form.setAttribute("aria-label", "Run this flow");
  form.append(field("h4", {}, "Run"));
  form.append(...inputFields(flow.draft.inputs));
  const pick = field("select");
  for (const v of versions) pick.append(field("option", { value: String(v.version) }, `Version ${v.version}${v.name ? `: ${v.name}` : ""}`));
  pick.append(field("option", { value: "draft" }, "Draft (unpublished)"));
  pick.value = versions.length ? String(versions[0].version) : "draft";  // newest first: the latest published
  form.append(labelled("Version", pick));
  form.append(field("button", { type: "submit", className: "primary" }, "Run flow"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const inputs = await readInputs(form);
      const version = pick.value === "draft" ? "draft" : Number(pick.value);
      const started = await api("POST", "/api/workflows/start", { flow: { id: flow.id, version, inputs } });
      location.hash = `#/w/${encodeURIComponent(started.id)}`;
      return started;
    }, "flows");
  });
  return form;
}

// ---- versions ----------------------------------------------------------------------

function versionsPart(flow, versions) {
  const part = field("section", { className: "versions" });
  part.setAttribute("aria-label", "Versions");
  part.append(field("h4", {}, "Versions"));
  const list = field("ol", { className: "version-list" });
  list.setAttribute("aria-label", "Published versions");
  for (const v of versions) {
    const li = field("li");
    li.append(field("strong", {}, `Version ${v.version}`), ` ${v.name || ""}`);
    if (v === versions[0]) li.append(" ", field("span", { className: "used" }, "runs use this one"));
    li.append(field("span", { className: "item-meta" }, [v.comment, v.author, when(v.createdAt)].filter(Boolean).join(" · ")));
    versionTools(flow, v, li);
    list.append(li);
  }
  if (!versions.length) part.append(field("p", { className: "empty" }, "Not published yet: runs use the draft."));
  const form = field("form", { className: "publish", autocomplete: "off" });
  const name = field("input", { maxLength: 200 });
  name.setAttribute("aria-label", "Version name");
  const comment = field("input", { maxLength: 2000 });
  comment.setAttribute("aria-label", "Version comment");
  form.append(labelled("Name", name), labelled("Comment", comment),
    field("button", { type: "submit" }, "Publish the draft"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const v = await api("POST", `${fid(flow.id)}/versions`, { name: name.value.trim(), comment: comment.value.trim() });
      await openFlow(flow.id);  // the page shows the new version before it says so
      notify(`Published as version ${v.version}.`, "info");
      return v;
    }, "flows");
  });
  part.append(list, form);
  if (versions.length) part.append(comparePart(flow, versions));
  return part;
}

// Restore and export, where the server has them.
async function versionTools(flow, v, li) {
  if (await can("restore")) {
    const b = field("button", { type: "button", className: "tool" }, `Restore version ${v.version}`);
    b.addEventListener("click", () => attempt(async () => {
      await api("POST", `${fid(flow.id)}/restore`, { version: v.version });
      await openFlow(flow.id);  // the page shows the restored draft before it says so
      notify(`Version ${v.version} is the draft again.`, "info");
      return true;
    }, "flows"));
    li.append(b);
  }
  if (await can("exportVersion")) {
    const b = field("button", { type: "button", className: "tool" }, `Export version ${v.version}`);
    b.addEventListener("click", () => attempt(async () => {
      const response = await fetch(`${fid(flow.id)}/versions/${v.version}?format=yaml`, { headers: auth() });
      if (!response.ok) throw new Error(await problem(response));
      const link = field("a", { href: URL.createObjectURL(await response.blob()), download: `${flow.name}-v${v.version}.yaml` });
      document.body.append(link);
      link.click();
      link.remove();
      return true;
    }, "flows"));
    li.append(b);
  }
}

async function importFlow(file) {
  const yaml = /\.ya?ml$/i.test(file.name);
  const response = await fetch("/api/flows/import", { method: "POST", body: await file.text(),
    headers: auth({ "Content-Type": yaml ? "application/yaml" : "application/json" }) });
  if (!response.ok) throw new Error(await problem(response));
  const created = await response.json();  // {flow, source, nodes, imported}
  const from = created.source === "dify" ? "a Dify app" : "a Foreman flow";
  notify(`Imported “${created.flow.name}” from ${file.name} (${from}, ${created.nodes} nodes).`, "info");
  location.hash = `#/flows/${created.flow.id}`;
  return created;
}

async function newFlow() {
  const name = `New flow ${flows.length + 1}`;
  const created = await api("POST", "/api/flows", { name, inputs: { text: { type: "string" } },
    nodes: [{ id: "start", type: "start", config: {} }, { id: "answer", type: "template", config: { text: "{{ inputs.text }}" } },
            { id: "end", type: "end", config: {} }],
    edges: [{ source: "start", target: "answer" }, { source: "answer", target: "end" }],
    outputs: { answer: "{{ answer.output }}" } });
  location.hash = `#/flows/${created.id}`;
  return created;
}

export function initFlows() {
  $("flow-search").addEventListener("input", renderList);
  $("new-flow").addEventListener("click", () => attempt(newFlow, "flows"));
  $("flow-import").addEventListener("change", (event) => {
    const [file] = event.target.files;
    event.target.value = "";
    if (file) attempt(() => importFlow(file), "flows");
  });
  can("import").then((yes) => { $("flow-import-label").hidden = !yes; });
}
