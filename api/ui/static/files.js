// The files page: every file of the key's owner with its status, kept live by the events
// stream (file.ready / file.failed, read with fetch since EventSource sends no headers),
// with polling while the stream is down.
import { followEvents, get, getAll } from "./api.js";
import { clear, h, section } from "./dom.js";
import { filesTable } from "./panels.js";

const POLL_MS = 5000; // while the stream is down
const LIVE_POLL_MS = 15000; // while it is up: new uploads (they have no event until they finish)
const RETRY_MS = 3000;
const MAX_FILES = 500;

export async function renderFiles(root) {
  const files = new Map((await getAll("/v1/files", { limit: 200 }, MAX_FILES)).map((f) => [f.id, f]));
  const status = h("p", { id: "live-status", role: "status", class: "muted", text: "Connecting to the events stream…" });
  const holder = h("div", { id: "files-table" });
  const controller = new AbortController();
  let pollTimer = null;
  let pollEvery = 0;

  function draw() {
    const list = [...files.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    clear(holder).append(list.length ? filesTable(list, [], "Files", true) : h("p", { text: "No files yet." }));
  }

  async function refresh(id) {
    try {
      files.set(id, await get(`/v1/files/${encodeURIComponent(id)}`));
    } catch {
      files.delete(id); // deleted since
    }
    draw();
  }

  async function poll() {
    try {
      const latest = await getAll("/v1/files", { limit: 200 }, MAX_FILES);
      files.clear();
      for (const f of latest) files.set(f.id, f);
      draw();
    } catch {
      /* the next poll tries again */
    }
  }

  function startPolling(every) {
    if (pollTimer && pollEvery === every) return;
    stopPolling();
    pollEvery = every;
    pollTimer = setInterval(poll, every);
  }

  function stopPolling() {
    clearInterval(pollTimer);
    pollTimer = null;
  }

  async function follow() {
    while (!controller.signal.aborted) {
      try {
        await followEvents(() => {
          status.dataset.mode = "live";
          status.textContent = "Live: status changes arrive on the events stream.";
          startPolling(LIVE_POLL_MS);
          poll(); // whatever changed while connecting
        }, (message) => {
          const id = message.data?.data?.id;
          if (message.event.startsWith("file.") && id) refresh(id);
        }, controller.signal);
      } catch {
        if (controller.signal.aborted) return;
      }
      status.dataset.mode = "polling";
      status.textContent = `Events stream unavailable: polling every ${POLL_MS / 1000} s.`;
      startPolling(POLL_MS);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  draw();
  root.append(h("h1", { text: "Files" }),
    section("Newest first", "files-page-title", status,
      h("p", {}, h("button", { type: "button", id: "refresh-files", onclick: poll, text: "Refresh" })), holder));
  follow();
  return () => {
    controller.abort();
    stopPolling();
  };
}
