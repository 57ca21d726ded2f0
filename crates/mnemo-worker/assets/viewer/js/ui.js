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

/// Words a search skips and a highlight never marks: the query operators
/// and the short function words of a question ("why did we skip ...").
const STOP_WORDS = new Set(("and or not near a an the of to in on at by for from with as is are was " +
  "were be been it its this that these those we i you he she they them our us my your his her " +
  "their do does did done have has had why what when where which who how can could should would " +
  "will shall may might must if then than so but no yes all any some").split(" "));

/// The words of a search, for highlighting: no stop words.
export function terms(query) {
  return (query || "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((t) => t.length > 1 && !STOP_WORDS.has(t));
}

/// A word's stem, so that "fails", "failed" and "failing" meet at "fail"
/// (and "skipped" at "skip").
function stem(word) {
  for (const suffix of ["ing", "ed", "es", "s"]) {
    if (word.length - suffix.length >= 3 && word.endsWith(suffix)) {
      const base = word.slice(0, -suffix.length);
      const doubled = /([b-df-hj-np-tv-z])\1$/.test(base) && suffix !== "s" && suffix !== "es";
      return doubled ? base.slice(0, -1) : base;
    }
  }
  return word;
}

/// The stem, and the stem with its last consonant doubled ("skip",
/// "skipp"), as regular-expression alternatives.
function stemPatterns(word) {
  const s = stem(word).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return /[b-df-hj-np-tv-z]$/.test(s) ? [s, s + s.slice(-1)] : [s];
}

/// `text` with every whole word that is one of `words` or an inflection
/// of one (same stem, a common ending) in <mark>; never a piece of a
/// longer word ("we" is not marked inside "websearch").
export function highlight(text, words) {
  text = text || "";
  if (!words.length) return document.createTextNode(text);
  const escaped = [...new Set(words.flatMap(stemPatterns))];
  const endings = "(?:s|es|ed|d|ing|er|ers)?";
  const re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join("|")})${endings}(?![\\p{L}\\p{N}_])`, "giu");
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

/// How long ago, worded as the CLI words it: "just now", "5 min ago",
/// "2 h ago", "3 days ago", "3 weeks ago", "4 months ago", "2 years ago".
export function when(ms) {
  if (!ms) return "";
  const e = Math.max(0, Date.now() - ms);
  const MIN = 60000, HOUR = 60 * MIN, DAY = 24 * HOUR;
  const steps = [[HOUR, MIN, "min", "min"], [DAY, HOUR, "h", "h"], [14 * DAY, DAY, "day", "days"],
    [60 * DAY, 7 * DAY, "week", "weeks"], [365 * DAY, 30 * DAY, "month", "months"],
    [Infinity, 365 * DAY, "year", "years"]];
  if (e < MIN) return "just now";
  const [, unit, one, many] = steps.find(([below]) => e < below);
  const n = Math.floor(e / unit);
  return `${n} ${n === 1 ? one : many} ago`;
}

/// The local date and time as the CLI writes it: "2026-11-22 14:05 +01:00".
export function datetime(ms) {
  if (!ms) return "";
  const d = new Date(ms);
  const two = (n) => String(Math.abs(n)).padStart(2, "0");
  const off = -d.getTimezoneOffset();
  const zone = `${off < 0 ? "-" : "+"}${two(Math.trunc(off / 60))}:${two(off % 60)}`;
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())} ${zone}`;
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
      notedBy(item.author),
      item.freshness === "changed" || item.freshness === "deleted"
        ? h("span", { class: `badge ${item.freshness}` }, item.freshness)
        : null,
      h("span", {}, item.ref),
      item.project ? h("span", {}, item.project.name) : null,
      item.session ? h("span", {}, `${item.session.platform} ${item.session.session_id.slice(0, 8)}`) : null,
      item.file ? h("code", { title: item.file }, relative(item.file, item.project ? item.project.root : "")) : null,
      h("span", { title: datetime(item.created_at_ms) }, when(item.created_at_ms)),
    ),
  );
}

/// Another person's record (brought by sync): whose note it is, as text.
export function notedBy(author, id) {
  return author ? h("span", { class: "badge author", id, title: "a teammate's note, shared through sync" }, `noted by ${author}`) : null;
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
