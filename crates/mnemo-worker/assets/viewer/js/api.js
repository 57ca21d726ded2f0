// The worker's HTTP API, as the viewer calls it. The session cookie goes
// with every same-origin request; the API token never reaches the page.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
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

/// Server-sent events of new observations and summaries.
export function stream(onEvent, onState) {
  const source = new EventSource("/api/stream");
  source.addEventListener("ready", () => onState("live"));
  source.addEventListener("observation", (e) => onEvent("observation", JSON.parse(e.data)));
  source.addEventListener("summary", (e) => onEvent("summary", JSON.parse(e.data)));
  source.addEventListener("lagged", () => onState("lagged"));
  source.onerror = () => onState("reconnecting");
  return source;
}
