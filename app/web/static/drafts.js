// Live text: a message as the model writes it, in a draft with a caret that its message replaces
// in place. `drafts` is the open conversation's map of draft id to draft.
import { renderMarkdown } from "./markdown.js";
import { keepScroll } from "./scroll.js";

const $ = (id) => document.getElementById(id);

export function showDelta(drafts, delta) {
  let draft = drafts.get(delta.messageId);
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
    drafts.set(delta.messageId, draft);
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

export function dropDraft(drafts, id) {
  const draft = drafts.get(id);
  if (!draft) return null;
  drafts.delete(id);
  return draft.li;
}
