// Files attached to the next message: each uploaded at once (POST /api/files) with its progress,
// shown as a chip with the type the server detected from the bytes.
import { auth, showKeyField } from "./api.js";
import { notify } from "./notices.js";
import { friendlyType } from "./names.js";
import { button } from "./render.js";

const $ = (id) => document.getElementById(id);

export const attachments = [];

export function upload(file) {
  const item = { file, id: null, done: null };
  const chip = document.createElement("div");
  chip.className = "chip";
  const name = document.createElement("span");
  name.textContent = file.name;
  const progress = document.createElement("progress");
  progress.max = 100;
  progress.value = 0;
  progress.setAttribute("aria-label", `Uploading ${file.name}`);
  const type = document.createElement("span");
  type.className = "type";
  const remove = button("×", `Remove attachment ${file.name}`, () => {
    attachments.splice(attachments.indexOf(item), 1);
    chip.remove();
  }, "remove");
  chip.append(name, progress, type, remove);
  $("attachments").append(chip);
  attachments.push(item);
  item.done = new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    const form = new FormData();
    form.append("files", file, file.name);
    xhr.open("POST", "/api/files");
    for (const [header, value] of Object.entries(auth())) xhr.setRequestHeader(header, value);
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) progress.value = Math.round((100 * event.loaded) / event.total);
    });
    xhr.addEventListener("load", () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status === 201 && body && body[0]) {
        item.id = body[0].id;
        progress.value = 100;
        type.textContent = friendlyType(body[0].mimeType, body[0].ext);
        chip.classList.add("ready");
      } else {
        if (xhr.status === 401) showKeyField(true);
        notify(`${file.name}: ${(body && body.detail) || `upload failed (${xhr.status})`}`);
        attachments.splice(attachments.indexOf(item), 1);
        chip.remove();
      }
      resolve();
    });
    xhr.addEventListener("error", () => {
      notify(`${file.name}: the upload did not reach the server.`);
      attachments.splice(attachments.indexOf(item), 1);
      chip.remove();
      resolve();
    });
    xhr.send(form);
  });
}

// The ids of the uploaded files, once every upload has ended.
export async function attached() {
  await Promise.all(attachments.map((a) => a.done));
  return attachments.filter((a) => a.id).map((a) => a.id);
}

export function clearAttachments() {
  attachments.length = 0;
  $("attachments").replaceChildren();
}
