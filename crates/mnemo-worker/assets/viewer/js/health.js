// Spend and health: LLM calls and tokens per day and per provider against
// the budgets, the doctor's checks, failed events with retry, and sync.
import { get, post } from "./api.js";
import { h, fill, errorBox, when } from "./ui.js";
import { refreshQueue } from "./app.js";

const fmt = (n) => Number(n || 0).toLocaleString();

function spendTable(stats) {
  const rows = stats.spend.by_day;
  const max = Math.max(1, ...rows.map((r) => r.input_tokens + r.output_tokens));
  const daily = stats.budget.daily_tokens;
  return rows.length
    ? h("div", { class: "scroll" }, h("table", { id: "spend" },
      h("thead", {}, h("tr", {}, ["Day", "Provider", "Model", "Calls", "Failed", "Input", "Output", ""]
        .map((t, i) => h("th", { class: i >= 3 && i < 7 ? "num" : "" }, t)))),
      h("tbody", {}, rows.map((r) => {
        const bar = h("div", { class: "bar" });
        bar.style.width = `${Math.round((100 * (r.input_tokens + r.output_tokens)) / Math.max(max, daily || 0))}%`;
        return h("tr", {},
          h("td", {}, r.key), h("td", {}, r.provider), h("td", {}, r.model),
          h("td", { class: "num" }, fmt(r.calls)), h("td", { class: "num" }, fmt(r.failed_calls)),
          h("td", { class: "num" }, fmt(r.input_tokens)), h("td", { class: "num" }, fmt(r.output_tokens)),
          h("td", {}, bar));
      }))))
    : h("p", { class: "muted" }, `No LLM calls in the last ${stats.days} days.`);
}

function budget(stats) {
  const b = stats.budget;
  const cap = (n) => (n ? fmt(n) : "unlimited");
  return h("div", { class: "card" },
    h("div", {}, `Compressing with `, h("b", {}, stats.compressing_with),
      stats.provider_error ? h("span", { class: "bad" }, ` (${stats.provider_error})`) : null),
    h("div", {}, `Today: ${fmt(b.today_tokens)} tokens of a daily budget of ${cap(b.daily_tokens)}; `,
      `per session: ${cap(b.session_tokens)}.`),
    b.exhausted ? h("div", { class: "bad" }, `Budget spent: ${JSON.stringify(b.exhausted)}`) : null);
}

function doctor(d) {
  const checks = (d.report && d.report.checks) || [];
  const verdict = (d.report && d.report.verdict) || "";
  const tone = verdict === "ok" ? "ok" : verdict === "warn" ? "warn" : "bad";
  return h("div", {},
    d.report && d.report.summary ? h("p", { id: "doctor-verdict", class: `verdict ${tone}` }, d.report.summary) : null,
    h("div", { class: "scroll" }, h("table", { id: "doctor" },
    h("tbody", {}, checks.map((c) => h("tr", {},
      h("td", { class: c.status === "ok" ? "ok" : c.status === "warn" ? "warn" : "bad" }, c.status),
      h("td", {}, c.name || c.id || ""),
      h("td", {}, c.detail || c.message || "", c.fix ? h("div", { class: "muted small" }, `fix: ${c.fix}`) : null)))))));
}

function failed(queue, reload) {
  if (!queue.failed.length) return h("p", { class: "muted" }, "No failed events.");
  const retry = async (body) => {
    await post("/api/queue/retry", body);
    refreshQueue();
    reload();
  };
  return h("div", {},
    h("div", { class: "actions" }, h("button", { id: "retry-all", onclick: () => retry({ all: true }) }, "Retry all")),
    h("div", { class: "scroll" }, h("table", { id: "failed" },
      h("tbody", {}, queue.failed.map((f) => h("tr", {},
        h("td", {}, f.id), h("td", {}, f.kind, f.tool_name ? ` ${f.tool_name}` : ""),
        h("td", {}, `${f.attempts} attempts`), h("td", { class: "bad" }, f.error || ""),
        h("td", {}, h("button", { onclick: () => retry({ ids: [f.id] }) }, "Retry"))))))));
}

function syncBlock(s) {
  if (!s.configured) {
    return h("p", { id: "sync-state", class: "muted" },
      "This machine does not sync (`mnemo sync register` or `join` sets it up).");
  }
  const last = s.last_sync_at ? when(s.last_sync_at) : "never";
  return h("div", { class: "card", id: "sync-state" },
    h("div", {}, "Server ", h("code", { id: "sync-server" }, s.server),
      `, device ${s.device_id}; last sync `, h("span", { id: "sync-last" }, last), "."),
    h("div", { id: "sync-pending" }, `${fmt(s.pending_push)} versions waiting to be pushed, `,
      `${fmt(s.pending_changes)} changes not yet queued.`),
    s.last_error ? h("div", { class: "bad", id: "sync-error" }, `Last error: ${s.last_error}`) : null,
    h("div", { class: "scroll" }, h("table", { id: "sync-spaces" },
      h("tbody", {}, s.spaces.map((sp) => h("tr", {},
        h("td", {}, `space ${sp.space_id}`), h("td", {}, sp.kind),
        h("td", {}, sp.project_root || ""),
        h("td", {}, sp.last_sync_at ? when(sp.last_sync_at) : "never"),
        h("td", { class: sp.last_error ? "bad" : "" }, sp.last_error || "")))))));
}

export async function healthPage(main) {
  const reload = () => healthPage(main);
  const [stats, queue] = await Promise.all([get("/api/stats?days=14"), get("/api/queue")]);
  const checks = h("div", { id: "checks" }, h("p", { class: "muted" }, "Running the doctor's checks…"));
  const syncBox = h("div", { id: "sync" });
  fill(
    main,
    h("h1", {}, "Spend and health"),
    budget(stats),
    h("h2", {}, "LLM calls and tokens per day and provider (14 days)"),
    spendTable(stats),
    h("h2", {}, "Queue"),
    h("p", {}, `${fmt(queue.counts.pending)} pending, ${fmt(queue.counts.leased)} leased, `,
      `${fmt(queue.counts.failed)} failed, ${fmt(queue.counts.done)} done.`),
    failed(queue, reload),
    h("h2", {}, "Sync"),
    syncBox,
    h("h2", {}, "Doctor"),
    checks,
  );
  get("/api/sync").then((s) => fill(syncBox, syncBlock(s))).catch((e) => fill(syncBox, errorBox(e)));
  get("/api/doctor").then((d) => fill(checks, doctor(d))).catch((e) => fill(checks, errorBox(e)));
}
