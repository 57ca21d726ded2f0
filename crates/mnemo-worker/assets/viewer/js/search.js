// Search as you type, with the filters of `mnemo search` (project, type,
// dates, file, session) and the agent (the session's platform).
import { get, qs } from "./api.js";
import { h, fill, card, terms, debounce, labelled, errorBox } from "./ui.js";
import { setParams } from "./app.js";

const TYPES = ["", "bugfix", "feature", "refactor", "change", "discovery", "decision", "memory", "summary", "prompt"];
const FILTERS = ["project", "type", "since", "until", "file", "session", "agent"];

export async function searchPage(main, { params }) {
  const projects = await get("/api/projects").catch(() => ({ items: [] }));
  const q = h("input", {
    id: "q", type: "search", placeholder: "Search memory…  (press / anywhere)",
    autocomplete: "off", value: params.get("q") || "", "aria-label": "Search",
  });
  const f = {
    project: h("select", { id: "f-project" }, h("option", { value: "" }, "all projects"),
      projects.items.map((p) => h("option", { value: p.root }, p.name))),
    type: h("select", { id: "f-type" }, TYPES.map((t) => h("option", { value: t }, t || "any type"))),
    since: h("input", { id: "f-since", placeholder: "7d, 2026-11-01" }),
    until: h("input", { id: "f-until", placeholder: "today" }),
    file: h("input", { id: "f-file", placeholder: "src/main.rs" }),
    session: h("input", { id: "f-session", placeholder: "session id" }),
    agent: h("select", { id: "f-agent" }, h("option", { value: "" }, "any agent"),
      h("option", { value: "claude-code" }, "claude-code")),
  };
  for (const k of FILTERS) {
    const v = params.get(k);
    if (!v) continue;
    // A select takes an option's value or its label (a project's name).
    const option = f[k].tagName === "SELECT" && [...f[k].options].find((o) => o.textContent === v);
    f[k].value = option ? option.value : v;
  }
  const status = h("p", { class: "muted small", id: "status" });
  const results = h("div", { class: "list", id: "results" });
  fill(
    main,
    q,
    h("div", { class: "filters" }, FILTERS.map((k) => labelled(k, f[k]))),
    status,
    results,
  );

  let seq = 0;
  const run = async () => {
    const mine = ++seq;
    const values = Object.fromEntries(FILTERS.map((k) => [k, f[k].value.trim()]));
    setParams({ q: q.value, ...values });
    const { agent, ...filters } = values;
    try {
      const r = await get(`/api/search${qs({ q: q.value, limit: 50, ...filters })}`);
      if (mine !== seq) return;
      const hits = agent ? r.hits.filter((x) => x.session && x.session.platform === agent) : r.hits;
      const words = terms(q.value);
      const skipped = r.meaning && r.meaning.skipped ? ` (search by meaning skipped: ${r.meaning.skipped})` : "";
      fill(status, `${hits.length} result${hits.length === 1 ? "" : "s"}${r.relaxed ? " (any word matched)" : ""}${skipped}`);
      fill(results, hits.map((x) => card(x, words)));
    } catch (e) {
      if (mine === seq) fill(results, errorBox(e));
    }
  };
  const later = debounce(run, 120);
  q.addEventListener("input", later);
  for (const k of FILTERS) f[k].addEventListener(f[k].tagName === "SELECT" ? "change" : "input", later);
  q.focus();
  await run();
}
