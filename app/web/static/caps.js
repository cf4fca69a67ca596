// What this server offers beyond the flows routes every version has: read once from its OpenAPI
// schema. A control for a route the server does not have is not shown (export, import, restore,
// rerun, save a round as a flow come with a later version of the flows API).
import { auth } from "./api.js";

let known = null;

function load() {
  known ||= fetch("/schema/openapi.json", { headers: auth() })
    .then((r) => (r.ok ? r.json() : { paths: {} }))
    .catch(() => ({ paths: {} }));
  return known;
}

const ROUTES = {
  exportVersion: /^\/api\/flows\/\{[^}]+\}\/versions\/\{[^}]+\}$/,
  restore: /^\/api\/flows\/\{[^}]+\}\/restore$/,
  import: /^\/api\/flows\/import$/,
  rerun: /^\/api\/workflows\/\{[^}]+\}\/rerun$/,
};

// True when the server has `what` (a key of ROUTES, or "saveRound": POST /api/flows takes fromRound).
export async function can(what) {
  const schema = await load();
  const paths = Object.keys(schema.paths || {});
  if (what === "saveRound") return JSON.stringify(schema).includes("fromRound");
  return paths.some((path) => ROUTES[what].test(path));
}
