// The live feed: the newest observations and summaries, then each new one
// as the worker stores it (server-sent events).
import { get, stream } from "./api.js";
import { h, fill, card } from "./ui.js";
import { refreshQueue } from "./app.js";

export async function feedPage(main) {
  const [obs, sums] = await Promise.all([
    get("/api/observations?limit=50"),
    get("/api/summaries?limit=20"),
  ]);
  const items = [...obs.items, ...sums.items].sort((a, b) => b.created_at_ms - a.created_at_ms);
  const state = h("span", { id: "live", class: "muted small" }, "connecting…");
  const list = h("div", { class: "list", id: "feed" }, items.map((i) => card(i)));
  const empty = h(
    "p",
    { class: items.length ? "hidden" : "muted" },
    "Nothing remembered yet. Observations appear here as your agent works.",
  );
  fill(
    main,
    h("h1", {}, "Live feed ", state),
    h("p", { class: "muted small" }, `${obs.total} observations, ${sums.total} summaries stored.`),
    empty,
    list,
  );
  const source = stream(
    (_kind, record) => {
      const el = card(record);
      el.classList.add("fresh");
      list.prepend(el);
      empty.classList.add("hidden");
      refreshQueue();
    },
    (s) => fill(state, s),
  );
  return () => source.close();
}
