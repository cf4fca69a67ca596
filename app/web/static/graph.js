// A flow's graph drawn as inline SVG: a layered layout of our own (top to bottom: a node's layer is
// its longest path from a start; within a layer the order that crosses fewest edges by a few
// barycenter sweeps, so branches stand side by side), the branch names on their edges, each node
// with its type and name and, on a run, its state; a map or a loop is a box drawn around its body. Zoom with the wheel or the buttons, pan by
// dragging; a node is a button (click or Enter) that `onPick` answers.

const NS = "http://www.w3.org/2000/svg";
const W = 168, H = 52, GAP_X = 28, GAP_Y = 46;
const BODY_TOP = 46, BODY_H = 36, BOX_H = BODY_TOP + BODY_H + 10;  // a map's or loop's box: its header, its body
const STATES = { pending: "waiting", running: "running", waiting: "waiting for you", succeeded: "done",
                 failed: "failed", skipped: "skipped" };

function el(name, attrs = {}, text = "") {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text) node.textContent = text;
  return node;
}

const boxed = (node) => (node.type === "map" || node.type === "loop") && node.config && node.config.body;
const height = (node) => (boxed(node) ? BOX_H : H);

// Layers by longest path from the nodes nothing points to; edges that close a cycle (a loop drawn
// back) are left out of the ranking. A layer is as tall as its tallest node (a map's box).
export function layout(nodes, edges) {
  const ids = nodes.map((n) => n.id);
  const out = new Map(ids.map((id) => [id, []]));
  const into = new Map(ids.map((id) => [id, []]));
  const state = new Map();
  const forward = [];
  const visit = (id) => {  // depth first: an edge to a node still on the stack is a back edge
    state.set(id, 1);
    for (const e of edges.filter((e) => e.source === id && out.has(e.target))) {
      if (state.get(e.target) === 1) continue;
      forward.push(e);
      if (!state.get(e.target)) visit(e.target);
    }
    state.set(id, 2);
  };
  const roots = ids.filter((id) => !edges.some((e) => e.target === id));
  [...roots, ...ids].forEach((id) => { if (!state.get(id)) visit(id); });
  for (const e of forward) { out.get(e.source).push(e.target); into.get(e.target).push(e.source); }
  const layer = new Map();
  const rank = (id) => {
    if (layer.has(id)) return layer.get(id);
    layer.set(id, 0);
    const value = into.get(id).length ? Math.max(...into.get(id).map(rank)) + 1 : 0;
    layer.set(id, value);
    return value;
  };
  ids.forEach(rank);
  // An edge across several layers goes through a waypoint in each layer between (ordered like a
  // node), so it runs beside the nodes, never through them.
  const via = new Map();  // "source>target" -> its waypoints, top to bottom
  for (const e of forward) {
    const from = layer.get(e.source), to = layer.get(e.target);
    if (to - from < 2) continue;
    const chain = [];
    let prev = e.source;
    for (let l = from + 1; l < to; l++) {
      const id = `\u0000${e.source}>${e.target}@${l}`;
      layer.set(id, l);
      out.set(id, []); into.set(id, [prev]);
      out.get(prev).push(id);
      chain.push(id);
      prev = id;
    }
    out.get(prev).push(e.target);
    into.get(e.target).push(prev);
    out.set(e.source, out.get(e.source).filter((t) => t !== e.target));
    into.set(e.target, into.get(e.target).filter((t) => t !== e.source));
    via.set(`${e.source}>${e.target}`, chain);
  }
  const layers = [];
  [...layer.keys()].forEach((id) => { (layers[layer.get(id)] ||= []).push(id); });
  const order = new Map();
  const place = () => layers.forEach((row) => row.forEach((id, i) => order.set(id, i)));
  place();
  for (let sweep = 0; sweep < 4; sweep++) {  // down, up, down, up: each by the mean place of its neighbours
    const rows = sweep % 2 ? [...layers].reverse() : layers;
    for (const row of rows) {
      const near = (id) => (sweep % 2 ? out : into).get(id);
      const mean = (id) => (near(id).length ? near(id).reduce((s, n) => s + order.get(n), 0) / near(id).length
        : order.get(id));
      row.sort((a, b) => mean(a) - mean(b));
      row.forEach((id, i) => order.set(id, i));
    }
  }
  const widest = Math.max(1, ...layers.map((row) => row.length));
  const tall = new Map(nodes.map((n) => [n.id, height(n)]));
  const at = new Map();
  let top = 0;
  layers.forEach((row) => {
    const offset = ((widest - row.length) * (W + GAP_X)) / 2;
    const h = Math.max(H, ...row.map((id) => tall.get(id) || H));
    row.forEach((id, x) => at.set(id, { x: offset + x * (W + GAP_X), y: top, h: tall.get(id) || h }));
    top += h + GAP_Y;
  });
  const routes = new Map([...via].map(([key, chain]) => [key, chain.map((id) => at.get(id))]));
  return { at, routes, width: widest * (W + GAP_X) - GAP_X, height: top - GAP_Y };
}

// What a node shows, in the order it is read: its type, its name and, for a map or a loop, its body.
function label(node) {
  const body = boxed(node) ? node.config.body : null;
  return { name: node.name || node.id, type: node.type,
           body: body ? `body: ${body.type} ${body.name || body.id}` : "" };
}

function cut(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// The graph in `box`; answers { update(states, problems) } to show a run's states or a draft's problems.
export function drawGraph(box, definition, { onPick = () => {}, title = "Flow graph" } = {}) {
  const nodes = definition.nodes || [];
  const edges = (definition.edges || []).filter((e) => nodes.some((n) => n.id === e.source) &&
                                                      nodes.some((n) => n.id === e.target));
  const { at, routes, width, height } = layout(nodes, edges);
  const pad = 16;
  const svg = el("svg", { role: "group", "aria-label": title, class: "graph", xmlns: NS });
  const view = { x: -pad, y: -pad, w: width + 2 * pad, h: height + 2 * pad };
  const fit = { ...view };
  const apply = () => svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  const defs = el("defs");
  const arrow = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
                               orient: "auto-start-reverse" });
  arrow.append(el("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" }));
  defs.append(arrow);
  svg.append(defs);
  for (const e of edges) {
    const a = at.get(e.source), b = at.get(e.target);
    const x1 = a.x + W / 2, y1 = a.y + a.h, x2 = b.x + W / 2, y2 = b.y;
    const back = y2 <= y1;
    const points = [[x1, y1]];
    for (const p of routes.get(`${e.source}>${e.target}`) || []) points.push([p.x + W / 2, p.y], [p.x + W / 2, p.y + p.h]);
    points.push([x2, y2]);
    const d = back ? `M${x1},${y1} C${x1 + W},${y1 + GAP_Y} ${x2 + W},${y2 - GAP_Y} ${x2},${y2}`
      : points.slice(1).map(([bx, by], i) => {
        const [ax, ay] = points[i];
        return i % 2 ? `L${bx},${by}` : `${i ? "" : `M${ax},${ay} `}C${ax},${(ay + by) / 2} ${bx},${(ay + by) / 2} ${bx},${by}`;
      }).join(" ");
    svg.append(el("path", { d, class: "edge", "marker-end": "url(#arrow)" }));
    if (e.branch) {
      const tx = (x1 + x2) / 2 + (back ? W : 0), ty = (y1 + y2) / 2;
      svg.append(el("text", { x: tx, y: ty, class: "branch", "text-anchor": "middle" }, cut(e.branch, 18)));
    }
  }
  const shapes = new Map();
  for (const node of nodes) {
    const { x, y, h } = at.get(node.id);
    const { name, type, body } = label(node);
    const shown = [type, name, body].filter(Boolean).join(" ");
    const g = el("g", { class: `node ${node.type}`, transform: `translate(${x},${y})`, tabindex: 0, role: "button",
                        "data-node": node.id, "aria-label": shown });
    const title = el("title", {}, shown);
    g.append(title, el("rect", { width: W, height: h, rx: 8, class: body ? "box" : "" }),
      el("text", { x: 10, y: 18, class: "type" }, `${cut(type, 24)} `),  // the space: read as words, not "templatehello"
      el("text", { x: 10, y: 38, class: "name" }, `${cut(name, 22)} `));
    if (body) {  // the body drawn inside the map's or loop's box
      g.append(el("rect", { x: 10, y: BODY_TOP, width: W - 20, height: BODY_H, rx: 6, class: "body" }),
        el("text", { x: 20, y: BODY_TOP + 22, class: "body-name" }, `${cut(body, 26)} `));
    }
    const state = el("text", { x: W - 8, y: 18, class: "state", "text-anchor": "end" });
    g.append(state);
    g.addEventListener("click", () => onPick(node.id));
    g.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); onPick(node.id); }
    });
    svg.append(g);
    shapes.set(node.id, { g, state, shown, title, kind: node.type });
  }
  apply();
  const zoom = (factor, cx = view.x + view.w / 2, cy = view.y + view.h / 2) => {
    view.x = cx - (cx - view.x) * factor; view.y = cy - (cy - view.y) * factor;
    view.w *= factor; view.h *= factor;
    apply();
  };
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const r = svg.getBoundingClientRect();
    zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, view.x + ((event.clientX - r.left) / r.width) * view.w,
      view.y + ((event.clientY - r.top) / r.height) * view.h);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    if (event.target.closest("g.node")) return;
    drag = { x: event.clientX, y: event.clientY };
    svg.setPointerCapture(event.pointerId);
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const r = svg.getBoundingClientRect();
    view.x -= ((event.clientX - drag.x) / r.width) * view.w;
    view.y -= ((event.clientY - drag.y) / r.height) * view.h;
    drag = { x: event.clientX, y: event.clientY };
    apply();
  });
  svg.addEventListener("pointerup", () => { drag = null; });
  const tools = document.createElement("div");
  tools.className = "graph-tools";
  for (const [text, act] of [["Zoom in", () => zoom(1 / 1.25)], ["Zoom out", () => zoom(1.25)],
                             ["Fit", () => { Object.assign(view, fit); apply(); }]]) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.addEventListener("click", act);
    tools.append(b);
  }
  box.replaceChildren(tools, svg);
  requestAnimationFrame(() => {  // a big flow opens readable (its whole width if it reads, from the top), Fit shows it whole
    const cw = svg.clientWidth, ch = svg.clientHeight;
    if (!cw || Math.min(cw / fit.w, ch / fit.h) >= 0.55) return;  // small text still reads at 0.55
    const scale = Math.min(1, Math.max(0.55, cw / fit.w));
    Object.assign(view, { x: fit.x + fit.w / 2 - cw / scale / 2, y: fit.y, w: cw / scale, h: ch / scale });
    apply();
  });
  return {
    svg,
    // states: nodeId -> { status, done, total, iteration }; problems: nodeId -> [message]
    update(states = new Map(), problems = new Map()) {
      for (const [id, shape] of shapes) {
        const run = states.get(id);
        const trouble = problems.get(id) || [];
        let words = run ? STATES[run.status] || run.status : "";
        if (run && run.total != null) words += ` ${run.done}/${run.total}`;
        if (run && run.iteration) words += ` #${run.iteration}`;
        if (trouble.length) words = "problem";
        shape.state.textContent = words;
        shape.g.setAttribute("class", `node ${shape.kind} ${run ? run.status : ""}${trouble.length ? " problem" : ""}`);
        const said = [shape.shown, words, ...trouble].filter(Boolean).join(" ");  // as it reads
        shape.g.setAttribute("aria-label", said);
        shape.title.textContent = said;
      }
    },
  };
}
