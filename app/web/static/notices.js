// Notices above the conversation: one per distinct text (the same error again counts up on the
// notice it already has, never a pile of copies), each dismissable; information fades by itself.
// A notice may belong to a scope (the action that raised it: "send", "review", "round"): it goes
// with `clearScope` when the state it describes is gone (the round it was refused for ended, the
// corrected plan ran) or the same action succeeds.

const box = () => document.getElementById("notices");

export function notify(text, kind = "error", scope = "") {
  const same = [...box().children].find((n) => n.dataset.text === text && n.dataset.kind === kind);
  if (same) {
    const times = Number(same.dataset.times) + 1;
    same.dataset.times = String(times);
    same.querySelector(".times").textContent = `×${times}`;
    if (same.timer) { clearTimeout(same.timer); same.timer = setTimeout(() => same.remove(), 6000); }
    return;
  }
  const notice = document.createElement("div");
  notice.className = `notice ${kind}`;
  notice.dataset.text = text;
  notice.dataset.kind = kind;
  notice.dataset.times = "1";
  notice.dataset.scope = scope;
  const words = document.createElement("span");
  words.className = "words";
  words.textContent = text;
  const times = document.createElement("span");
  times.className = "times";
  times.setAttribute("aria-label", "times");
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = "Dismiss";
  close.addEventListener("click", () => notice.remove());
  notice.append(words, times, close);
  box().append(notice);
  if (kind !== "error") notice.timer = setTimeout(() => notice.remove(), 6000);
}

export function clearNotices() {
  box().replaceChildren();
}

export function clearScope(...scopes) {
  [...box().children].filter((n) => scopes.includes(n.dataset.scope)).forEach((n) => n.remove());
}

// `work`'s error as a notice of `scope`; its success ends the scope's earlier notices.
export async function attempt(work, scope = "") {
  try {
    const result = await work();
    if (scope && result !== undefined) clearScope(scope);
    return result;
  } catch (error) {
    notify(error.message || String(error), "error", scope);
    return undefined;
  }
}
