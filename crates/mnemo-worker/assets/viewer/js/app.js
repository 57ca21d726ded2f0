// The viewer's shell: hash routes to pages, the theme, the queue's state
// in the header, and keyboard navigation (/ search, j/k move, Enter open,
// Esc back).
import { get } from "./api.js";
import { h, fill, errorBox } from "./ui.js";
import { feedPage } from "./feed.js";
import { searchPage } from "./search.js";
import { detailPage } from "./detail.js";
import { sessionsPage, sessionPage } from "./sessions.js";
import { projectsPage } from "./projects.js";
import { healthPage } from "./health.js";
import { contextPage } from "./context.js";

const routes = [
  [/^feed$/, feedPage, "feed"],
  [/^search$/, searchPage, "search"],
  [/^o\/(\d+)$/, detailPage, "search"],
  [/^sessions$/, sessionsPage, "sessions"],
  [/^session\/(.+)$/, sessionPage, "sessions"],
  [/^projects$/, projectsPage, "projects"],
  [/^health$/, healthPage, "health"],
  [/^context$/, contextPage, "context"],
];

let cleanup = null;

/// The current route: its path and its query parameters.
export function location() {
  const raw = window.location.hash.replace(/^#\/?/, "") || "feed";
  const [path, query] = raw.split("?");
  return { path: decodeURIComponent(path), params: new URLSearchParams(query || "") };
}

/// Changes the query parameters of the current route without reloading it.
export function setParams(params) {
  const { path } = location();
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  history.replaceState(null, "", `#/${path}${s ? `?${s}` : ""}`);
}

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  const main = document.getElementById("main");
  let path, params;
  try {
    ({ path, params } = location());
  } catch {
    fill(main, h("div", { class: "error", role: "alert" }, "This link is malformed (it does not decode). "),
      h("p", {}, h("a", { href: "#/feed" }, "Back to the feed")));
    return;
  }
  for (const [re, page, tab] of routes) {
    const m = path.match(re);
    if (!m) continue;
    for (const a of document.querySelectorAll("#nav a")) {
      a.classList.toggle("active", a.dataset.page === tab);
    }
    fill(main, h("p", { class: "muted" }, "Loading…"));
    try {
      cleanup = (await page(main, { match: m, params })) || null;
    } catch (e) {
      fill(main, errorBox(e));
    }
    return;
  }
  fill(main, h("p", {}, "No such page. ", h("a", { href: "#/feed" }, "Back to the feed")));
}

function theme() {
  const saved = localStorage.getItem("mnemo-theme");
  if (saved) document.documentElement.dataset.theme = saved;
  document.getElementById("theme").addEventListener("click", () => {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
    const next = dark ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    localStorage.setItem("mnemo-theme", next);
  });
}

/// The queue's counts in the header, refreshed while the page is open.
export async function refreshQueue() {
  const el = document.getElementById("queue");
  try {
    const q = await get("/api/queue");
    const c = q.counts;
    fill(
      el,
      `queue: ${c.pending} pending · ${c.leased ?? 0} leased · `,
      h("span", { class: c.failed ? "bad" : "" }, `${c.failed} failed`),
    );
  } catch {
    fill(el, "");
  }
}

function items() {
  return [...document.querySelectorAll("#main .item")];
}

function select(step) {
  const all = items();
  if (!all.length) return;
  let i = all.findIndex((el) => el.classList.contains("selected"));
  if (i >= 0) all[i].classList.remove("selected");
  i = i < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, i + step));
  all[i].classList.add("selected");
  all[i].scrollIntoView({ block: "nearest" });
}

function keys(e) {
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
  if (e.key === "Escape") {
    if (typing) document.activeElement.blur();
    else if (location().path !== "feed") history.back();
    return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "/") {
    e.preventDefault();
    const q = document.getElementById("q");
    if (q) q.focus();
    else window.location.hash = "#/search";
  } else if (e.key === "j") {
    select(1);
  } else if (e.key === "k") {
    select(-1);
  } else if (e.key === "Enter") {
    const sel = document.querySelector("#main .item.selected");
    if (sel) sel.click();
  }
}

theme();
window.addEventListener("hashchange", route);
document.addEventListener("keydown", keys);
refreshQueue();
setInterval(refreshQueue, 5000);
route();
