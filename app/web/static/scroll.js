// Only the messages scroll (#thread): the header, the conversation list and the message box stay
// in place. New text keeps a person's place, or the bottom when they were there.

const $ = (id) => document.getElementById(id);

export function atBottom() {
  const scroller = $("thread");
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 8;
}

export function keepScroll(change) {
  // Replacing or growing a message keeps the view where it was, or at the bottom if it was there.
  // Only the messages scroll (#thread): the header, the list and the message box stay in place.
  const scroller = $("thread");
  const bottom = atBottom();
  const top = scroller.scrollTop;
  change();
  scroller.scrollTop = bottom ? scroller.scrollHeight : top;
}

// A round ended: its last message comes into view (its beginning, when it is taller than the view),
// unless the view follows the bottom already (a person who watched the text grow stays there).
export function showEnd() {
  const last = $("messages").lastElementChild;
  if (!last || atBottom()) return;
  const tall = last.getBoundingClientRect().height > $("thread").clientHeight;
  last.scrollIntoView({ block: tall ? "start" : "end" });
}
