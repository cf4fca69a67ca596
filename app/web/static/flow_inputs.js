// The fields of a flow's inputs (text, number, a switch, a list one item a line, files to attach or
// pick from a conversation), filled with given values or the inputs' defaults, and what a person
// entered read back (files uploaded first; a files field left empty keeps the files it was given).
// The run form and the rerun form share it.
import { api, auth, problem, wid } from "./api.js";
import { attempt } from "./notices.js";
import { fileName } from "./names.js";

export function field(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key in node && key !== "list") node[key] = value; else node.setAttribute(key, value);
  }
  if (text) node.textContent = text;
  return node;
}

export function labelled(text, input) {
  const label = field("label", { className: "field" });
  label.append(field("span", {}, text), input);
  return label;
}

function inputField(name, spec, given) {
  const type = spec.type || "string";
  const value = given === undefined ? spec.default : given;
  const label = spec.description ? `${name} (${spec.description})` : name;
  let input;
  if (type === "boolean") {
    input = field("input", { type: "checkbox", checked: Boolean(value) });
    input.setAttribute("role", "switch");
  } else if (type === "number") {
    input = field("input", { type: "number", step: "any", value: value ?? "" });
  } else if (type === "list") {
    input = field("textarea", { rows: 2, value: (value || []).join("\n"), placeholder: "one item a line" });
  } else if (type === "files") {
    input = field("input", { type: "file", multiple: true });
    if (Array.isArray(given) && given.length) input.dataset.keep = JSON.stringify(given);
  } else {
    input = field("input", { value: value ?? "" });
  }
  input.dataset.input = name;
  input.dataset.type = type;
  input.setAttribute("aria-label", label);
  const wrap = labelled(label, input);
  if (input.dataset.keep) {
    const n = given.length;
    wrap.append(field("small", {}, `Keeps the ${n} file${n === 1 ? "" : "s"} of the run unless you pick others.`));
  }
  return wrap;
}

// Files of one of the person's conversations to pick for the files input `name` (loaded when opened).
function picker(name) {
  const box = field("details", { className: "pick-files" });
  const choose = field("select");
  choose.append(field("option", { value: "" }, "Choose a conversation"));
  const files = field("fieldset");
  files.append(field("legend", {}, `Files for ${name}`));
  files.hidden = true;
  box.append(field("summary", {}, `Pick files for ${name} from a conversation`), labelled(`Conversation for ${name}`, choose), files);
  choose.setAttribute("aria-label", `Conversation for ${name}`);
  box.addEventListener("toggle", () => attempt(async () => {
    if (!box.open || choose.options.length > 1) return;
    for (const w of (await api("GET", "/api/workflows")).items) choose.append(field("option", { value: w.id }, w.name || w.id));
  }, "flows"));
  choose.addEventListener("change", () => attempt(async () => {
    files.replaceChildren(files.firstChild);
    files.hidden = !choose.value;
    if (!choose.value) return;
    const seen = new Map();
    for (const m of (await api("GET", wid(choose.value))).messages) for (const d of m.documents || []) seen.set(d.fileId, fileName(d));
    if (!seen.size) files.append(field("p", { className: "empty" }, "This conversation has no files."));
    for (const [id, shown] of seen) {
      const tick = field("input", { type: "checkbox", value: String(id) });
      tick.dataset.pickFor = name;
      files.append(labelled(shown, tick));
    }
  }, "flows"));
  return box;
}

// One field per input of `specs` ({name: {type, default, description}}), filled from `values`.
export function inputFields(specs, values = {}) {
  return Object.entries(specs || {}).flatMap(([name, spec]) => {
    const one = inputField(name, spec, values[name]);
    return (spec.type || "string") === "files" ? [one, picker(name)] : [one];
  });
}

async function uploadAll(files) {
  const ids = [];
  for (const file of files) {
    const form = new FormData();
    form.append("files", file, file.name);
    const response = await fetch("/api/files", { method: "POST", body: form, headers: auth() });
    if (!response.ok) throw new Error(await problem(response));
    ids.push((await response.json())[0].id);
  }
  return ids;
}

// What the fields of `form` hold, as a flow's inputs.
export async function readInputs(form) {
  const inputs = {};
  for (const input of form.querySelectorAll("[data-input]")) {
    const { type, input: name } = input.dataset;
    if (type === "boolean") inputs[name] = input.checked;
    else if (type === "number") { if (input.value !== "") inputs[name] = Number(input.value); }
    else if (type === "list") inputs[name] = input.value.split("\n").map((s) => s.trim()).filter(Boolean);
    else if (type === "files") {
      const picked = [...form.querySelectorAll("input[data-pick-for]:checked")]
        .filter((tick) => tick.dataset.pickFor === name).map((tick) => Number(tick.value));
      const kept = input.dataset.keep && !input.files.length && !picked.length ? JSON.parse(input.dataset.keep) : [];
      inputs[name] = [...kept, ...picked, ...(await uploadAll([...input.files]))];
    } else inputs[name] = input.value;
  }
  return inputs;
}
