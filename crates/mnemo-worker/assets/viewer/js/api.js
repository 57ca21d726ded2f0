// The worker's HTTP API, as the viewer calls it. The session secret lives
// in this tab's sessionStorage (scoped to the viewer's origin, port
// included) and goes with every request as the X-Mnemo-Session header; no
// cookie is involved, so no other service on 127.0.0.1 ever receives it.
// A new tab of the viewer asks the open ones for it over a BroadcastChannel,
// which is scoped to the origin as well (port included): another tab opens
// the viewer without a new `mnemo open`, and no other origin can ask.
// The API token never reaches the page.

const SESSION = "mnemo-session";
/// How long a new tab waits for an open tab of the viewer to answer.
const ASK_MS = 400;

const tabs = typeof BroadcastChannel === "function" ? new BroadcastChannel(SESSION) : null;

if (tabs) {
  tabs.onmessage = (e) => {
    const id = sessionStorage.getItem(SESSION);
    if (e.data && e.data.ask && id) tabs.postMessage({ session: id });
  };
}

/// This tab's session: its own, or one an open tab of the viewer hands
/// over (none after ASK_MS: the page then says to run `mnemo open`).
const ready = new Promise((done) => {
  if (sessionStorage.getItem(SESSION) || !tabs) return done();
  const ask = new BroadcastChannel(SESSION);
  const finish = () => {
    ask.close();
    done();
  };
  ask.onmessage = (e) => {
    if (e.data && typeof e.data.session === "string" && !sessionStorage.getItem(SESSION)) {
      sessionStorage.setItem(SESSION, e.data.session);
    }
    finish();
  };
  ask.postMessage({ ask: true });
  setTimeout(finish, ASK_MS);
});

/// The header that carries the session, when this tab has one.
function auth() {
  const id = sessionStorage.getItem(SESSION);
  return id ? { "X-Mnemo-Session": id } : {};
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(method, path, body) {
  await ready;
  const init = { method, headers: { Accept: "application/json", ...auth() } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const message = (json && json.error) || `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message);
  }
  return json;
}

/// A query string from an object, leaving out empty values.
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && String(v).trim() !== "") p.set(k, v);
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
export const patch = (path, body) => call("PATCH", path, body);
export const put = (path, body) => call("PUT", path, body);

/// Trades a one-time sign-in link's secret for a session, kept in this
/// tab's sessionStorage.
export async function signIn(link) {
  const { session } = await post("/login", { t: link });
  sessionStorage.setItem(SESSION, session);
}

/// Server-sent events of new observations and summaries, read with fetch()
/// (EventSource cannot send the session header). Reconnects until closed.
export function stream(onEvent, onState) {
  const abort = new AbortController();
  const dispatch = (type, data) => {
    if (type === "ready") onState("live");
    else if (type === "lagged") onState("lagged");
    else if (type === "observation" || type === "summary") onEvent(type, JSON.parse(data));
  };
  (async () => {
    await ready;
    while (!abort.signal.aborted) {
      try {
        const headers = { Accept: "text/event-stream", ...auth() };
        const res = await fetch("/api/stream", { headers, signal: abort.signal });
        if (res.ok) await readEvents(res.body, dispatch);
      } catch {
        // dropped or aborted: retried below unless closed
      }
      if (abort.signal.aborted) return;
      onState("reconnecting");
      await new Promise((ok) => setTimeout(ok, 3000));
    }
  })();
  return { close: () => abort.abort() };
}

/// Reads a text/event-stream body, calling dispatch(type, data) per event.
async function readEvents(body, dispatch) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r/g, "");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length || type !== "message") dispatch(type, data.join("\n"));
    }
  }
}
