// The fields of a flow's inputs (text, number, a switch, a list one item a line, files), filled with
// given values or the inputs' defaults, and what a person entered read back (files uploaded first;
// a files field left empty keeps the files it was given). The run form and the rerun form share it.
import { auth, problem } from "./api.js";

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

// One field per input of `specs` ({name: {type, default, description}}), filled from `values`.
export function inputFields(specs, values = {}) {
  return Object.entries(specs || {}).map(([name, spec]) => inputField(name, spec, values[name]));
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
      inputs[name] = input.files.length || !input.dataset.keep ? await uploadAll([...input.files]) : JSON.parse(input.dataset.keep);
    } else inputs[name] = input.value;
  }
  return inputs;
}
