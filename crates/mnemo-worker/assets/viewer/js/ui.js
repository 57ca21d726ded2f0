// DOM helpers shared by the pages. Text from the store is only ever set as
// text (never parsed as HTML), so a stored `<script>` stays text.

/// An element: h("a", {href: "#/x", class: "item"}, "text", child, ...).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/// Replaces what `el` holds.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/// The words of a search, for highlighting.
export function terms(query) {
  return (query || "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((t) => t.length > 1 && !["and", "or", "not", "near"].includes(t));
}

/// `text` with every occurrence of `words` in <mark>.
export function highlight(text, words) {
  text = text || "";
  if (!words.length) return document.createTextNode(text);
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`(${escaped.join("|")})`, "giu");
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    frag.append(h("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}

/// "3 min ago", or the local date for older times.
export function when(ms) {
  if (!ms) return "";
  const s = (Date.now() - ms) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(ms).toLocaleString();
}

/// A path relative to the project's root when it is inside it.
export function relative(path, root) {
  if (root && path.startsWith(root.endsWith("/") ? root : `${root}/`)) {
    return path.slice(root.length).replace(/^\/+/, "");
  }
  return path;
}

/// The link of a record or a search hit.
export function hrefOf(item) {
  if (item.kind === "observation") return `#/o/${item.id}`;
  if (item.session) return `#/session/${encodeURIComponent(item.session.session_id)}`;
  return "#/feed";
}

/// One line in a list: an observation, summary or prompt record, or a hit.
export function card(item, words = []) {
  const title = item.title || item.request || item.host_text || item.text || "(untitled)";
  const sub = item.subtitle || item.learned || item.completed || "";
  const type = item.type || item.kind;
  return h(
    "a",
    { class: "item", href: hrefOf(item), "data-ref": item.ref },
    h("div", { class: "title" }, highlight(title, words)),
    sub ? h("div", { class: "sub" }, highlight(sub, words)) : null,
    h(
      "div",
      { class: "meta" },
      h("span", { class: "badge" }, type),
      item.pinned ? h("span", { class: "badge pinned" }, "pinned") : null,
      item.edited ? h("span", { class: "badge edited" }, "edited") : null,
      h("span", {}, item.ref),
      item.project ? h("span", {}, item.project.name) : null,
      item.session ? h("span", {}, `${item.session.platform} ${item.session.session_id.slice(0, 8)}`) : null,
      item.file ? h("code", { title: item.file }, relative(item.file, item.project ? item.project.root : "")) : null,
      h("span", { title: item.created_at }, when(item.created_at_ms)),
    ),
  );
}

/// An error box, with what to do when the session is gone.
export function errorBox(e) {
  const text = e && e.status === 401
    ? "Not signed in, or the worker restarted: run `mnemo open` for a new sign-in link."
    : `Error: ${e && e.message ? e.message : e}`;
  return h("div", { class: "error", role: "alert" }, text);
}

/// Debounces `f` by `ms`.
export function debounce(f, ms) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => f(...args), ms);
  };
}

/// A labelled form control.
export function labelled(text, control) {
  return h("label", {}, text, control);
}
