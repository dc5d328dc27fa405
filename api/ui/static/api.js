// The key lives in sessionStorage (this tab only) and travels only in the Authorization
// header of requests to this origin. It never goes into a URL or persistent storage.

const KEY = "contextq.apiKey";

export function getKey() {
  return sessionStorage.getItem(KEY);
}

export function setKey(key) {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

function headers(key) {
  return { Authorization: `Bearer ${key}`, Accept: "application/json" };
}

// GET a /v1 route; `params` become the query string (never the key).
export async function get(path, params = {}, key = getKey()) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(name, value);
  }
  const response = await fetch(url, { headers: headers(key), cache: "no-store" });
  if (!response.ok) {
    let detail = response.statusText;
    try {
      detail = (await response.json()).detail ?? detail;
    } catch {
      /* not JSON */
    }
    throw new ApiError(response.status, detail);
  }
  return response.json();
}

// Follow cursors until `max` rows (the inspector shows at most that many).
export async function getAll(path, params = {}, max = 1000) {
  const rows = [];
  let cursor = null;
  do {
    const page = await get(path, { ...params, cursor });
    rows.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor && rows.length < max);
  return rows;
}

// The events stream read with fetch (EventSource cannot send the Authorization header).
// Calls onOpen() once the stream answers, then onEvent({id, event, data}) per message
// until `signal` aborts; throws when the stream cannot be opened or ends.
export async function followEvents(onOpen, onEvent, signal) {
  const response = await fetch("/v1/events", {
    headers: { ...headers(getKey()), Accept: "text/event-stream" },
    cache: "no-store",
    signal,
  });
  if (!response.ok || !response.body) throw new ApiError(response.status, "events unavailable");
  onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("events stream ended");
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const message = parseEvent(block);
      if (message) onEvent(message);
    }
  }
}

export function parseEvent(block) {
  const message = { id: null, event: "message", data: "" };
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") message.event = value;
    else if (field === "id") message.id = value;
  }
  if (!data.length) return null;
  try {
    message.data = JSON.parse(data.join("\n"));
  } catch {
    return null;
  }
  return message;
}
