// Editing a flow's draft without writing JSON: a node picked in the graph gets a form for what a
// person changes most (prompt, instructions, agent, text, message, retry, timeout), can be removed
// with its edges, or followed by a new node; everything else in the draft as JSON beside it. Save is
// PUT /api/flows/{id}; a 400 lists its problems, shown on the nodes they concern, and nothing the
// person typed is lost (the JSON box keeps it).
import { api } from "./api.js";
import { notify } from "./notices.js";

const FIELDS = { llm: [["prompt", "Prompt", "textarea"], ["system", "System", "textarea"]],
                 agent: [["agent", "Agent", "input"], ["instructions", "Instructions", "textarea"]],
                 template: [["text", "Text", "textarea"]], human: [["message", "Message", "textarea"]],
                 condition: [["expression", "Expression", "input"]], code: [["code", "Code", "textarea"]] };
const TYPES = ["llm", "agent", "template", "condition", "human", "code"];

function make(tag, props = {}, text = "") {
  const node = Object.assign(document.createElement(tag), props);
  if (text) node.textContent = text;
  return node;
}

function labelled(text, input) {
  const label = make("label", { className: "field" });
  input.setAttribute("aria-label", text);
  label.append(make("span", {}, text), input);
  return label;
}

export function openEditor(open, nodeId, saved) {
  const box = document.getElementById("flow-editor");
  if (!box) return;
  let area = box.querySelector("textarea.raw");
  if (!area) {
    area = make("textarea", { className: "raw", rows: 12, spellcheck: false });
    area.value = JSON.stringify(open.flow.draft, null, 2);
    const save = make("button", { type: "button", className: "primary" }, "Save draft");
    save.addEventListener("click", () => saveDraft(open, area, box, saved));
    const problems = make("ul", { className: "problems" });
    problems.setAttribute("aria-label", "Problems");
    box.replaceChildren(make("h4", {}, "Edit the draft"), make("div", { className: "node-form" }), problems,
      labelled("Draft as JSON", area), save);
  }
  const form = box.querySelector(".node-form");
  let draft;
  try { draft = JSON.parse(area.value); } catch { draft = null; }
  const node = draft && (draft.nodes || []).find((n) => n.id === nodeId);
  if (!node) {
    form.replaceChildren(make("p", { className: "empty" }, "Pick a node in the graph to change it here."));
    return;
  }
  const write = () => { area.value = JSON.stringify(draft, null, 2); };
  form.replaceChildren(make("h5", {}, `Node ${node.id} (${node.type})`));
  node.config ||= {};
  for (const [key, text, tag] of FIELDS[node.type] || []) {
    const input = make(tag, { value: node.config[key] ?? "", rows: 3 });
    input.addEventListener("input", () => { node.config[key] = input.value; write(); });
    form.append(labelled(`${text} of ${node.id}`, input));
  }
  const retry = make("input", { type: "number", min: 0, value: (node.retry || {}).max ?? "" });
  retry.addEventListener("input", () => {
    if (retry.value === "") delete node.retry; else node.retry = { ...(node.retry || {}), max: Number(retry.value) };
    write();
  });
  const timeout = make("input", { type: "number", min: 0, step: "any", value: node.timeoutSeconds ?? "" });
  timeout.addEventListener("input", () => {
    if (timeout.value === "") delete node.timeoutSeconds; else node.timeoutSeconds = Number(timeout.value);
    write();
  });
  form.append(labelled(`Retries of ${node.id}`, retry), labelled(`Timeout in seconds of ${node.id}`, timeout));
  const remove = make("button", { type: "button", className: "danger" }, `Remove node ${node.id}`);
  remove.addEventListener("click", () => {
    draft.nodes = draft.nodes.filter((n) => n !== node);
    draft.edges = (draft.edges || []).filter((e) => e.source !== node.id && e.target !== node.id);
    write();
    form.replaceChildren(make("p", {}, `Node ${node.id} and its edges removed from the draft: Save draft to keep it.`));
  });
  const type = make("select");
  TYPES.forEach((t) => type.append(make("option", { value: t }, t)));
  type.value = "template";
  const add = make("button", { type: "button" }, `Add a node after ${node.id}`);
  add.addEventListener("click", () => {
    let n = 1;
    while (draft.nodes.some((x) => x.id === `${type.value}${n}`)) n += 1;
    const id = `${type.value}${n}`;
    draft.nodes.push({ id, type: type.value, config: {} });
    draft.edges = [...(draft.edges || []), { source: node.id, target: id }];
    write();
    openEditor(open, id, saved);
  });
  form.append(remove, labelled("Type of the new node", type), add);
}

async function saveDraft(open, area, box, saved) {
  const problems = box.querySelector(".problems");
  problems.replaceChildren();
  let draft;
  try { draft = JSON.parse(area.value); } catch (error) {
    problems.append(make("li", {}, `The draft is not JSON: ${error.message}`));
    return;
  }
  try {
    const flow = await api("PUT", `/api/flows/${open.flow.id}`, draft);
    notify("The draft was saved.", "info");
    saved(flow);
  } catch (error) {
    const list = (error.body && error.body.problems) || [];
    if (!list.length) problems.append(make("li", {}, error.message));
    const byNode = new Map();
    for (const p of list) {
      problems.append(make("li", {}, p.nodeId ? `${p.nodeId}: ${p.message}` : p.message));
      if (p.nodeId) byNode.set(p.nodeId, [...(byNode.get(p.nodeId) || []), p.message]);
    }
    if (open.graph) open.graph.update(new Map(), byNode);
  }
}
