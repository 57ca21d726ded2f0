// One observation: every field, its files relative to the project, the
// prompt of its turn, its neighbours in time, and edit / pin / forget.
import { get, post, patch, put } from "./api.js";
import { h, fill, card, relative, when, datetime, labelled, errorBox, notedBy } from "./ui.js";

const TYPES = ["bugfix", "feature", "refactor", "change", "discovery", "decision", "memory"];

function field(name, ...content) {
  return h("div", { class: "field" }, h("div", { class: "name" }, name), ...content);
}

function list(items) {
  return items.length ? h("ul", {}, items.map((i) => h("li", {}, i))) : h("span", { class: "muted" }, "none");
}

function view(o) {
  const root = o.project ? o.project.root : "";
  const files = (paths) => list(paths.map((p) => h("code", { title: p }, relative(p, root))));
  return h(
    "div",
    { class: "card", id: "record" },
    h("h1", { id: "o-title" }, o.title),
    o.subtitle ? h("p", { class: "muted", id: "o-subtitle" }, o.subtitle) : null,
    h(
      "div",
      { class: "meta" },
      h("span", { class: "badge", id: "o-type" }, o.type),
      o.pinned ? h("span", { class: "badge pinned", id: "o-pinned" }, "pinned") : null,
      o.edited ? h("span", { class: "badge edited" }, "edited by you") : null,
      notedBy(o.author, "o-author"),
      stale(o.freshness, "o-freshness"),
      h("span", {}, o.ref),
      h("span", { title: datetime(o.created_at_ms) }, when(o.created_at_ms)),
      h("span", {}, `source: ${o.source}`),
    ),
    field("Narrative", h("p", { id: "o-narrative" }, o.narrative || "—")),
    field("Facts", list(o.facts)),
    field("Concepts", list(o.concepts)),
    field("Files modified", files(o.files_modified)),
    field("Files read", files(o.files_read)),
    field("Project", o.project ? `${o.project.name} (${o.project.root})` : "—"),
    field(
      "Session and turn",
      o.session
        ? h("a", { href: `#/session/${encodeURIComponent(o.session.session_id)}` },
          `${o.session.platform} ${o.session.session_id}`, o.prompt_number ? `, turn ${o.prompt_number}` : "")
        : "—",
    ),
    field("Prompt of its turn", turnPrompt(o)),
    field("uid", h("code", {}, o.uid)),
  );
}

function editor(o, done) {
  const title = h("input", { id: "e-title", value: o.title });
  const subtitle = h("input", { id: "e-subtitle", value: o.subtitle });
  const type = h("select", { id: "e-type" }, TYPES.map((t) => h("option", { value: t }, t)));
  type.value = o.type;
  const narrative = h("textarea", { id: "e-narrative" });
  narrative.value = o.narrative;
  const facts = h("textarea", { id: "e-facts" });
  facts.value = o.facts.join("\n");
  const error = h("div");
  const save = h("button", { class: "primary", id: "e-save", type: "submit" }, "Save");
  const form = h(
    "form",
    { class: "card", id: "editor" },
    labelled("Title", title),
    labelled("Subtitle", subtitle),
    labelled("Type", type),
    labelled("Narrative", narrative),
    labelled("Facts (one a line)", facts),
    error,
    h("div", { class: "actions" }, save, h("button", { type: "button", onclick: () => done(null) }, "Cancel")),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const updated = await patch(`/api/observations/${o.id}`, {
        title: title.value,
        subtitle: subtitle.value,
        type: type.value,
        narrative: narrative.value,
        facts: facts.value.split("\n").map((f) => f.trim()).filter(Boolean),
      });
      done(updated);
    } catch (err) {
      fill(error, errorBox(err));
    }
  });
  return form;
}

export async function detailPage(main, { match }) {
  const id = match[1];
  const [o, timeline] = await Promise.all([
    get(`/api/observations/${id}`),
    get(`/api/timeline/${id}?before=4&after=4`).catch(() => null),
  ]);
  const body = h("div");
  const message = h("div", { id: "message" });
  const show = (record) => {
    const actions = h(
      "div",
      { class: "actions" },
      h("button", { id: "edit", onclick: () => fill(body, editor(record, (u) => show(u || record))) }, "Edit"),
      h("button", { id: "pin", onclick: () => pin(record) }, record.pinned ? "Unpin" : "Pin"),
      h("button", { id: "forget", class: "danger", onclick: () => forget(record) }, "Forget"),
    );
    fill(body, actions, view(record));
  };
  const pin = async (record) => {
    try {
      show(await put(`/api/observations/${record.id}/pin`, { pinned: !record.pinned }));
    } catch (e) {
      fill(message, errorBox(e));
    }
  };
  const forget = (record) => {
    fill(message, h("div", { class: "card" },
      h("p", {}, `Forget ${record.ref} “${record.title}”? It is removed for good from the store and from every file mnemo keeps.`),
      h("div", { class: "actions" },
        h("button", { class: "danger", id: "forget-yes", onclick: () => forgetNow(record) }, "Forget it"),
        h("button", { onclick: () => fill(message) }, "Keep it"))));
  };
  const forgetNow = async (record) => {
    fill(message);
    try {
      const done = await post("/api/forget", { ids: [record.id] });
      fill(body, h("p", { id: "forgotten" }, `${record.ref} is forgotten.`), leftCopies(done.remaining));
    } catch (e) {
      fill(message, errorBox(e));
    }
  };
  show(o);
  const neighbours = timeline
    ? h(
      "div",
      { class: "list neighbours" },
      timeline.entries.map((e) => {
        const el = card(e);
        if (e.ref === timeline.anchor) el.classList.add("anchor");
        return el;
      }),
    )
    : h("p", { class: "muted" }, "No timeline.");
  fill(main, message, body, h("h2", {}, "Around it in time"), neighbours);
}

/** The files a forget could not reach, which may still hold a copy. */
function leftCopies(remaining) {
  if (!remaining || remaining.length === 0) return null;
  return h(
    "div",
    { class: "card", id: "remaining" },
    h("p", {}, "A copy may remain in:"),
    h("ul", {}, remaining.map((place) => h("li", {}, place))),
  );
}

/** A badge when the record's files changed or are gone since it was written. */
function stale(freshness, id) {
  if (freshness !== "changed" && freshness !== "deleted") return null;
  const tip = freshness === "changed" ? "its files changed since it was recorded" : "its files are gone";
  return h("span", { class: `badge ${freshness}`, id, title: tip }, freshness);
}

// The turn's prompt as the user wrote it; a prompt the host wrote (a
// background task's notification) as what it is, not as raw markup.
function turnPrompt(o) {
  if (o.prompt_host_text) return h("span", { id: "o-prompt", class: "muted" }, o.prompt_host_text);
  if (o.prompt) return h("pre", { id: "o-prompt" }, o.prompt);
  return h("span", { class: "muted" }, "not recorded");
}
