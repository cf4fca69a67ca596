// A small Markdown renderer that builds DOM nodes, never HTML strings: whatever a model or a
// document writes (including <img onerror=...>) can only ever become text.
// Covers what the agents write: headings, paragraphs, lists, code blocks, tables, quotes,
// **bold**, *emphasis*, `code` and [links](http...).

// Underscores mark emphasis only at word edges, as CommonMark has it: `a_b_c.docx` and
// `__init__.py` are text, not italics (file names are named that way in every plan).
const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|((?<![\p{L}\p{N}_])__[^_\s](?:[^_\n]*[^_\s])?__(?![\p{L}\p{N}_]|\.[\p{L}\p{N}]))|(\*[^*\s][^*\n]*\*)|((?<![\p{L}\p{N}_])_[^_\s](?:[^_\n]*[^_\s])?_(?![\p{L}\p{N}_]|\.[\p{L}\p{N}]))|(\[[^\]\n]+\]\([^)\s]+\))/u;

function inline(parent, text) {
  while (text) {
    const m = INLINE.exec(text);
    if (!m) { parent.append(text); return; }
    if (m.index) parent.append(text.slice(0, m.index));
    const token = m[0];
    let node;
    if (m[1]) { node = document.createElement("code"); node.textContent = token.slice(1, -1); }
    else if (m[2] || m[3]) { node = document.createElement("strong"); inline(node, token.slice(2, -2)); }
    else if (m[4] || m[5]) { node = document.createElement("em"); inline(node, token.slice(1, -1)); }
    else {
      const close = token.indexOf("](");
      const href = token.slice(close + 2, -1);
      if (/^(https?:\/\/|\/|#)/i.test(href)) {
        node = document.createElement("a");
        node.href = href;
        node.rel = "noopener noreferrer";
        node.target = "_blank";
        inline(node, token.slice(1, close));
      } else {
        node = document.createTextNode(token);
      }
    }
    parent.append(node);
    text = text.slice(m.index + token.length);
  }
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

export function renderMarkdown(source) {
  const root = document.createDocumentFragment();
  const lines = String(source || "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    let m;
    if (line.startsWith("```")) {
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      const body = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) body.push(lines[i]);
      i++;
      code.textContent = body.join("\n");
      pre.append(code);
      root.append(pre);
    } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      const h = document.createElement("h" + Math.min(6, m[1].length + 2));
      inline(h, m[2]);
      root.append(h);
      i++;
    } else if (line.trim().startsWith("|") && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1])) {
      const table = document.createElement("table");
      const head = table.createTHead().insertRow();
      for (const c of cells(line)) { const th = document.createElement("th"); inline(th, c); head.append(th); }
      const body = table.createTBody();
      for (i += 2; i < lines.length && lines[i].trim().startsWith("|"); i++) {
        const row = body.insertRow();
        for (const c of cells(lines[i])) inline(row.insertCell(), c);
      }
      const wrap = document.createElement("div");
      wrap.className = "table-wrap";
      wrap.append(table);
      root.append(wrap);
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = document.createElement(ordered ? "ol" : "ul");
      for (; i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i]); i++) {
        const li = document.createElement("li");
        inline(li, lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""));
        list.append(li);
      }
      root.append(list);
    } else if (line.startsWith(">")) {
      const quote = document.createElement("blockquote");
      const body = [];
      for (; i < lines.length && lines[i].startsWith(">"); i++) body.push(lines[i].replace(/^>\s?/, ""));
      inline(quote, body.join(" "));
      root.append(quote);
    } else {
      const p = document.createElement("p");
      const body = [];
      for (; i < lines.length && lines[i].trim() && !/^(#{1,6}\s|```|>|\s*([-*+]|\d+[.)])\s+)/.test(lines[i]); i++) {
        body.push(lines[i]);
      }
      if (!body.length) { body.push(lines[i]); i++; }
      body.forEach((text, n) => { if (n) p.append(document.createElement("br")); inline(p, text); });
      root.append(p);
    }
  }
  return root;
}
