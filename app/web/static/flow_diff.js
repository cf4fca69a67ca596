// What changed between two versions of a flow (or a version and the draft), from
// GET /api/flows/{id}/diff?from=&to=: a readable list (a node added or removed, a node's prompt
// changed with its old and new text side by side, edges, inputs and outputs, the flow's name).
import { api } from "./api.js";
import { attempt } from "./notices.js";
import { field, labelled } from "./flow_inputs.js";

const SECTIONS = [["nodes", "Node"], ["edges", "Edge"], ["inputs", "Input"], ["outputs", "Output"]];

const named = (which) => (which === "draft" ? "the draft" : `version ${which}`);
const arrowed = (id) => id.replace(" -> ", " → ");  // an edge: "source → target [branch]"
const fieldName = (change) => change.field.replace(/^config\./, "");  // "prompt", "body.config.text", "retry.max"

function shown(value) {
  if (value === null || value === undefined) return "(none)";
  return typeof value === "string" ? value : JSON.stringify(value, null, 1);
}

// One field's old and new value side by side.
function sideBySide(change, before, after, what) {
  const table = field("table", { className: "sides" });
  table.setAttribute("aria-label", `${fieldName(change)} of ${what}`);
  const head = field("tr");
  head.append(field("th", { scope: "col" }, `${fieldName(change)} in ${named(before)}`),
    field("th", { scope: "col" }, `in ${named(after)}`));
  const row = field("tr");
  row.append(field("td", { className: "old" }, shown(change.from)), field("td", { className: "new" }, shown(change.to)));
  table.append(field("thead"), field("tbody"));
  table.tHead.append(head);
  table.tBodies[0].append(row);
  return table;
}

// The diff as list items, in the order a reader checks them.
export function changeItems(diff, before, after) {
  const items = [];
  const item = (text, ...more) => { const li = field("li", {}, text); li.append(...more); items.push(li); };
  for (const change of diff.flow || []) {
    item(`The flow's ${change.field} changed`, sideBySide(change, before, after, "the flow"));
  }
  for (const [key, word] of SECTIONS) {
    const part = diff[key] || {};
    for (const id of part.added || []) item(`${word} ${arrowed(id)} added`);
    for (const id of part.removed || []) item(`${word} ${arrowed(id)} removed`);
    for (const changed of part.changed || []) {
      const fields = changed.fields || [];
      item(`${word} ${arrowed(changed.key)} changed: ${fields.map(fieldName).join(", ")}`,
        ...fields.map((f) => sideBySide(f, before, after, `${word.toLowerCase()} ${arrowed(changed.key)}`)));
    }
  }
  return items;
}

function choice(label, versions, value) {
  const pick = field("select");
  for (const v of versions) pick.append(field("option", { value: String(v.version) }, `Version ${v.version}${v.name ? `: ${v.name}` : ""}`));
  pick.append(field("option", { value: "draft" }, "Draft"));
  pick.value = value;
  return [labelled(label, pick), pick];
}

// The form that compares two versions, and the changes it found.
export function comparePart(flow, versions) {
  const part = field("form", { className: "compare", autocomplete: "off" });
  part.setAttribute("aria-label", "Compare versions");
  const [fromField, from] = choice("From", versions, String(versions[Math.min(1, versions.length - 1)].version));
  const [toField, to] = choice("To", versions, versions.length > 1 ? String(versions[0].version) : "draft");
  const found = field("section", { className: "changes" });
  found.hidden = true;
  part.append(field("h5", {}, "Compare versions"), fromField, toField,
    field("button", { type: "submit" }, "Show changes"), found);
  part.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const before = from.value, after = to.value;
      const diff = await api("GET", `/api/flows/${flow.id}/diff?from=${before}&to=${after}`);
      const title = `Changes from ${named(before)} to ${named(after)}`;
      const items = changeItems(diff, before, after);
      const list = field("ul", { className: "change-list" });
      list.setAttribute("aria-label", title);
      list.append(...items);
      found.setAttribute("aria-label", title);
      found.replaceChildren(field("h5", {}, title),
        items.length ? list : field("p", { className: "empty" }, `No changes: ${named(before)} and ${named(after)} are the same.`));
      found.hidden = false;
      return diff;
    }, "flows");
  });
  return part;
}
