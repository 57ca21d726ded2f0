// Context preview: exactly the index the next session in a project
// receives (what `mnemo context` prints), with its size.
import { get, qs } from "./api.js";
import { h, fill, labelled, errorBox } from "./ui.js";
import { setParams } from "./app.js";

export async function contextPage(main, { params }) {
  const { items } = await get("/api/projects");
  if (!items.length) {
    fill(main, h("h1", {}, "Context preview"), h("p", { class: "muted" }, "No project yet."));
    return;
  }
  const pick = h("select", { id: "c-project" }, items.map((p) => h("option", { value: p.root }, `${p.name} — ${p.root}`)));
  // A link may name the project by its root or by its name.
  const asked = params.get("project");
  if (asked) {
    const found = items.filter((p) => p.root === asked || p.name === asked);
    if (found.length !== 1) {
      const why = found.length ? `Several projects are named ${asked}` : `No project ${asked}`;
      fill(main, h("h1", {}, "Context preview"),
        h("div", { class: "error", role: "alert" }, `${why}: pick one below.`),
        labelled("Project", pick));
      pick.value = "";
      pick.addEventListener("change", () => {
        window.location.hash = `#/context?project=${encodeURIComponent(pick.value)}`;
      });
      return;
    }
    pick.value = found[0].root;
  }
  const size = h("p", { id: "c-size", class: "muted" });
  const text = h("pre", { id: "c-text" });
  const show = async () => {
    setParams({ project: pick.value });
    try {
      const c = await get(`/api/context${qs({ project: pick.value })}`);
      fill(size, `${c.chars.toLocaleString()} characters, about ${Math.ceil(c.chars / 4).toLocaleString()} tokens `,
        `(budget ${c.budget_chars.toLocaleString()} characters); ${c.observations_shown.length} of `,
        `${c.observations_total} observation${c.observations_total === 1 ? "" : "s"} shown.`);
      fill(text, c.text);
    } catch (e) {
      fill(text, errorBox(e));
    }
  };
  pick.addEventListener("change", show);
  fill(main, h("h1", {}, "Context preview"), labelled("Project", pick), size, text);
  await show();
}
