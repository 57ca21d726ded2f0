// Sessions, and one session's turns: its prompts, observations and
// summaries in order.
import { get, qs } from "./api.js";
import { h, fill, card, when, datetime } from "./ui.js";

export async function sessionsPage(main, { params }) {
  const page = await get(`/api/sessions${qs({ limit: 100, project: params.get("project") })}`);
  fill(
    main,
    h("h1", {}, "Sessions"),
    h("p", { class: "muted small" }, `${page.total} sessions`),
    h(
      "div",
      { class: "list" },
      page.items.map((s) =>
        h(
          "a",
          { class: "item", href: `#/session/${encodeURIComponent(s.session_id)}` },
          h("div", { class: "title" }, s.project ? s.project.name : "(no project)", " · ", s.session_id.slice(0, 8)),
          h(
            "div",
            { class: "meta" },
            h("span", { class: "badge" }, s.platform),
            h("span", {}, `${s.prompt_count} prompts`),
            h("span", {}, `${s.observations} observations`),
            h("span", {}, `${s.summaries} summaries`),
            s.events_pending ? h("span", {}, `${s.events_pending} pending`) : null,
            h("span", {}, s.status),
            h("span", { title: datetime(s.started_at_ms) }, when(s.started_at_ms)),
          ),
        )),
    ),
  );
}

export async function sessionPage(main, { match }) {
  const session = match[1];
  const q = qs({ session, limit: 500 });
  const [sessions, prompts, obs, sums] = await Promise.all([
    get(`/api/sessions${q}`),
    get(`/api/prompts${q}`),
    get(`/api/observations${q}`),
    get(`/api/summaries${q}`),
  ]);
  const s = sessions.items[0];
  const turns = new Map();
  const turn = (n) => {
    const k = n ?? 0;
    if (!turns.has(k)) turns.set(k, { prompt: null, items: [] });
    return turns.get(k);
  };
  for (const p of prompts.items) turn(p.prompt_number).prompt = p;
  for (const x of [...obs.items, ...sums.items]) turn(x.prompt_number).items.push(x);
  const ordered = [...turns.entries()].sort((a, b) => a[0] - b[0]);
  fill(
    main,
    h("h1", {}, "Session ", h("code", {}, session)),
    s
      ? h("p", { class: "muted small" },
        `${s.platform} · ${s.project ? s.project.root : "no project"} · started ${datetime(s.started_at_ms)} · ${s.status}`)
      : null,
    ordered.map(([n, t]) =>
      h(
        "div",
        { class: "turn" },
        h("div", { class: "muted small" }, n ? `Turn ${n}` : "Outside a turn"),
        t.prompt ? h("div", { class: "prompt" }, t.prompt.host_text || t.prompt.text) : null,
        h("div", { class: "list" },
          t.items.sort((a, b) => a.created_at_ms - b.created_at_ms).map((x) => card(x))),
      )),
    ordered.length ? null : h("p", { class: "muted" }, "Nothing recorded in this session."),
  );
}
