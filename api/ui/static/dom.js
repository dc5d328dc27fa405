// Building the page from API data: every value goes in as text (textContent or a text
// node), never as markup. Attributes are set one by one; nothing is parsed as HTML.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = String(value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function fmtInt(n) {
  return n === null || n === undefined ? "–" : Number(n).toLocaleString("en");
}

export function fmtDate(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

export function badge(text, kind) {
  return h("span", { class: `badge badge-${kind}`, text });
}

export function section(title, id, ...children) {
  return h("section", { class: "panel", "aria-labelledby": id },
    h("h2", { id, text: title }), ...children);
}

export function table(caption, headers, rows) {
  return h("table", {},
    h("caption", { class: "visually-hidden", text: caption }),
    h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col", text: t })))),
    h("tbody", {}, rows));
}
