// The plan editor of the review panel (review.js): a form over the waiting plan's tasks (agent,
// instructions, inputs, order; remove and add tasks) whose result is posted as
// {"decision": "edit", "plan": {...}} in the shape of the plan message's metadata.plan. The server
// checks it as it checks a model's plan: a 400 lists every problem and changes nothing.

let rows = [];  // [{ task, el }] in the plan's order
let finalDocuments = [];
let added = 0;

const list = (text) => text.split(",").map((part) => part.trim()).filter(Boolean);

// Show the editor over `plan` in `box` (an element emptied first).
export function openEditor(box, plan) {
  rows = [];
  added = 0;
  finalDocuments = plan.finalDocuments || [];
  box.replaceChildren();
  const tasks = document.createElement("ol");
  tasks.className = "edit-tasks";
  tasks.setAttribute("aria-label", "Tasks to run");
  box.append(tasks);
  for (const task of plan.tasks || []) addRow(tasks, { ...task });
  const add = document.createElement("button");
  add.type = "button";
  add.textContent = "Add task";
  add.addEventListener("click", () => {
    added += 1;
    let id = `n${added}`;
    while (rows.some((row) => row.task.id === id)) id = `n${++added}`;
    const row = addRow(tasks, { id, agent: "", instructions: "", inputs: [], outputs: [], dependsOn: [] });
    row.el.querySelector("input").focus();
  });
  box.append(add);
}

// The edited plan, read from the form.
export function editedPlan() {
  return {
    tasks: rows.map(({ task, el }) => ({
      id: task.id,
      agent: el.querySelector(".agent-field").value.trim(),
      instructions: el.querySelector(".instructions-field").value.trim(),
      inputs: list(el.querySelector(".inputs-field").value),
      outputs: task.outputs || [],
      dependsOn: (task.dependsOn || []).filter((id) => rows.some((row) => row.task.id === id)),
    })),
    finalDocuments,
  };
}

function field(label, kind, value, className) {
  const wrap = document.createElement("label");
  wrap.textContent = label;
  const input = document.createElement(kind);
  if (kind === "textarea") input.rows = 2;
  input.className = className;
  input.value = value;
  wrap.append(input);
  return { wrap, input };
}

function addRow(container, task) {
  const el = document.createElement("li");
  const title = document.createElement("strong");
  title.textContent = `Task ${task.id}`;
  const agent = field("Agent", "input", task.agent || "", "agent-field");
  const instructions = field("Instructions", "textarea", task.instructions || "", "instructions-field");
  const inputs = field("Inputs (comma-separated)", "input", (task.inputs || []).join(", "), "inputs-field");
  agent.input.setAttribute("aria-label", `Agent of task ${task.id}`);
  instructions.input.setAttribute("aria-label", `Instructions of task ${task.id}`);
  inputs.input.setAttribute("aria-label", `Inputs of task ${task.id}`);
  const buttons = document.createElement("div");
  buttons.className = "edit-actions";
  for (const [text, move] of [["Move up", -1], ["Move down", 1], ["Remove", 0]]) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = text;
    button.setAttribute("aria-label", `${text} task ${task.id}`);
    button.addEventListener("click", () => (move ? shift(container, row, move) : remove(row)));
    buttons.append(button);
  }
  if ((task.dependsOn || []).length) {
    const after = document.createElement("div");
    after.className = "flow";
    after.textContent = `after ${task.dependsOn.join(", ")}`;
    el.append(title, after);
  } else {
    el.append(title);
  }
  el.append(agent.wrap, instructions.wrap, inputs.wrap, buttons);
  container.append(el);
  const row = { task, el };
  rows.push(row);
  return row;
}

function shift(container, row, by) {
  const at = rows.indexOf(row);
  const to = at + by;
  if (to < 0 || to >= rows.length) return;
  rows.splice(at, 1);
  rows.splice(to, 0, row);
  container.replaceChildren(...rows.map((r) => r.el));
  row.el.querySelector("button").focus();
}

function remove(row) {
  rows = rows.filter((r) => r !== row);
  row.el.remove();
}
