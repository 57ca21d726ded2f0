// Projects: what is remembered for each, when it last changed, and
// forgetting a whole project (after showing what would go).
import { get, post } from "./api.js";
import { h, fill, when, datetime, errorBox } from "./ui.js";

function counts(removed) {
  return Object.entries(removed).map(([k, v]) => `${v} ${k}`).join(", ");
}

export async function projectsPage(main) {
  const { items } = await get("/api/projects");
  const message = h("div", { id: "message" });
  const forget = async (p) => {
    try {
      const dry = await post("/api/forget", { project: p.root, dry_run: true });
      fill(message, h("div", { class: "card" },
        h("p", {}, `Forget everything about ${p.name} (${p.root})? That removes ${counts(dry.removed)}.`),
        h("div", { class: "actions" },
          h("button", {
            class: "danger", id: "forget-project-yes",
            onclick: async () => {
              try {
                const done = await post("/api/forget", { project: p.root });
                await projectsPage(main);
                fill(document.getElementById("message"),
                  h("p", { class: "card" }, `Forgot ${counts(done.removed)} of ${p.name}.`));
              } catch (e) {
                fill(message, errorBox(e));
              }
            },
          }, "Forget the project"),
          h("button", { onclick: () => fill(message) }, "Keep it"))));
    } catch (e) {
      fill(message, errorBox(e));
    }
  };
  fill(
    main,
    h("h1", {}, "Projects"),
    message,
    items.length
      ? h("div", { class: "scroll" }, h(
        "table",
        { id: "projects" },
        h("thead", {}, h("tr", {},
          h("th", {}, "Project"), h("th", { class: "num" }, "Sessions"), h("th", { class: "num" }, "Prompts"),
          h("th", { class: "num" }, "Observations"), h("th", { class: "num" }, "Summaries"),
          h("th", {}, "Last activity"), h("th", {}, ""))),
        h("tbody", {}, items.map((p) => h("tr", {},
          h("td", {}, h("a", { href: `#/sessions?project=${encodeURIComponent(p.root)}` }, p.name),
            h("div", { class: "muted small" }, p.root)),
          h("td", { class: "num" }, p.sessions), h("td", { class: "num" }, p.prompts),
          h("td", { class: "num" }, p.observations), h("td", { class: "num" }, p.summaries),
          h("td", { class: "when", title: datetime(p.last_activity_ms) }, when(p.last_activity_ms)),
          h("td", {}, h("button", { class: "danger", onclick: () => forget(p) }, "Forget")))))))
      : h("p", { class: "muted" }, "No project yet."),
  );
}
