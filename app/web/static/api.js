// The public API as the page calls it: the bearer key (kept in localStorage, asked for only when
// the server answers 401), errors as Error objects with the server's sentence and status.

const KEY = "foreman.apiKey";

export const storedKey = () => localStorage.getItem(KEY) || "";

export function storeKey(value) {
  if (value) localStorage.setItem(KEY, value);
  else localStorage.removeItem(KEY);
}

// The key field is there only when the server asks for keys (it answered 401) or a key is kept.
export function showKeyField(ask = false) {
  const field = document.getElementById("key-field");
  if (!field) return;
  field.hidden = false;
  if (ask) document.getElementById("api-key").focus();
}

export function auth(extra = {}) {
  const key = storedKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

export async function problem(response) {
  if (response.status === 401) {
    showKeyField(true);
    if (!storedKey()) return "This server asks for an API key: type yours in the API key field at the top.";
  }
  try {
    const body = await response.json();
    if (body && body.detail) return body.detail;
  } catch { /* not JSON */ }
  return `The server answered ${response.status} ${response.statusText}.`;
}

export async function api(method, path, body) {
  const init = { method, headers: auth(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new Error("The server cannot be reached. Is it running?");
  }
  if (!response.ok) {
    const body = await response.clone().json().catch(() => null);  // a flow's 400 lists its problems
    const error = new Error(await problem(response));
    error.status = response.status;
    error.body = body;
    throw error;
  }
  return response.json();
}

export function wid(id) {
  return `/api/workflows/${encodeURIComponent(id)}`;
}
