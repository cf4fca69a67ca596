// Live text: a message as the model writes it, in a draft with a caret that its message replaces
// in place. `drafts` is the open conversation's map of draft id to draft.
import { renderMarkdown } from "./markdown.js";
import { agentLabel } from "./render.js";
import { keepScroll } from "./scroll.js";

const $ = (id) => document.getElementById(id);

export function showDelta(drafts, delta) {
  let draft = drafts.get(delta.messageId);
  if (!draft) {
    if (delta.offset !== 0) return;  // its beginning was never seen here: its message will come whole
    const li = sketch(delta);
    draft = { text: "", li, body: li.querySelector(".body"), queued: false };
    drafts.set(delta.messageId, draft);
    keepScroll(() => $("messages").append(li));
    $("empty").hidden = true;
  }
  if (delta.offset !== draft.text.length) return;
  draft.text += delta.text;
  draft.li.dataset.deltas = String(Number(draft.li.dataset.deltas || 0) + 1);
  if (!draft.queued) {  // one render per frame, however many deltas came
    draft.queued = true;
    requestAnimationFrame(() => {
      draft.queued = false;
      const caret = document.createElement("span");
      caret.className = "caret";
      caret.setAttribute("aria-hidden", "true");
      keepScroll(() => draft.body.replaceChildren(withCaret(renderMarkdown(draft.text), caret)));
    });
  }
}

// A draft drawn as the message it becomes (a step of the plan is quieter and smaller than the answer),
// so the message replaces it in place without the thread jumping: its agent, its kind, "writing…".
function sketch(delta) {
  const kind = ["plan", "step", "answer"].includes(delta.kind) ? delta.kind : "answer";
  const li = document.createElement("li");
  li.className = `message assistant draft ${kind}`;
  li.dataset.draft = delta.messageId;
  const meta = document.createElement("div");
  meta.className = "meta";
  const agent = document.createElement("span");
  agent.className = "agent";
  agent.textContent = delta.agentName ? agentLabel({ agentName: delta.agentName }) : "Assistant";
  const badge = document.createElement("span");
  badge.className = "badge";
  badge.textContent = kind === "step" && delta.taskId ? `step ${delta.taskId}` : kind;
  const state = document.createElement("span");
  state.className = "writing";
  state.textContent = "writing…";
  meta.append(agent, badge, state);
  const content = document.createElement("div");
  content.className = "content";
  const body = document.createElement("div");
  body.className = "body";
  content.append(body);
  li.append(meta, content);
  return li;
}

// The caret at the end of the text, inside its last block (a paragraph, a list's last item, a table's
// last cell): after the block it would take a line of its own, which the message then loses.
function withCaret(fragment, caret) {
  let holder = fragment.lastElementChild;
  while (holder && holder.lastElementChild && !["CODE", "BR"].includes(holder.lastElementChild.tagName)
         && holder.tagName !== "PRE") holder = holder.lastElementChild;
  (holder && holder.tagName !== "HR" ? holder : fragment).append(caret);
  return fragment;
}

export function dropDraft(drafts, id) {
  const draft = drafts.get(id);
  if (!draft) return null;
  drafts.delete(id);
  return draft.li;
}

// A message that came whole (an offline model writes no live text) is put on the page sentence by
// sentence, as a reader would follow it; nothing pretends a model is writing (no caret, no
// "writing…"); the message is aria-busy meanwhile, so a screen reader reads it once, whole.
export function reveal(li, markdown, done = () => {}) {
  const body = li.querySelector(".body");
  const cuts = sentenceEnds(String(markdown || ""));
  if (!body || cuts.length < 2 || matchMedia("(prefers-reduced-motion: reduce)").matches) return;
  const whole = [...body.childNodes];
  const step = Math.max(1, Math.ceil(cuts.length / 40));  // at most ~40 steps, ~2 s for a long answer
  let shown = 0;
  li.setAttribute("aria-busy", "true");
  body.replaceChildren(renderMarkdown(markdown.slice(0, cuts[0])));
  const timer = setInterval(() => {
    shown += step;
    if (!li.isConnected) { clearInterval(timer); return; }  // replaced meanwhile (an update)
    if (shown >= cuts.length - 1) {
      clearInterval(timer);
      body.replaceChildren(...whole);
      li.removeAttribute("aria-busy");
      done();
      return;
    }
    body.replaceChildren(renderMarkdown(markdown.slice(0, cuts[shown])));  // grows below: the view stays
  }, 50);
}

// Where each sentence of a Markdown text ends (after its full stop and spaces, or its line).
function sentenceEnds(markdown) {
  const ends = [];
  const pattern = /[.!?]+["')\]*_]*(?:\s+|$)|\n+/g;
  let match;
  while ((match = pattern.exec(markdown))) {
    const end = match.index + match[0].length;
    if (!ends.length || end > ends[ends.length - 1]) ends.push(end);
  }
  if (!ends.length || ends[ends.length - 1] < markdown.length) ends.push(markdown.length);
  return ends;
}
