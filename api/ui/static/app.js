// The inspector's entry point: login, navigation by the URL's hash (which names pages
// and ids, never the key), and the conversations list.
import { ApiError, forgetKey, get, getKey, setKey } from "./api.js";
import { renderConversation } from "./conversation.js";
import { clear, fmtDate, fmtInt, h, section, table } from "./dom.js";
import { renderFiles } from "./files.js";

const main = document.getElementById("main");
let leavePage = null; // stops the current page's background work (the files page's stream)

function showLogin(message = "") {
  document.getElementById("nav").hidden = true;
  clear(main);
  const login = document.getElementById("login");
  login.hidden = false;
  document.getElementById("login-error").textContent = message;
  document.getElementById("api-key").focus();
}

async function onLogin(event) {
  event.preventDefault();
  const input = document.getElementById("api-key");
  const key = input.value.trim();
  const error = document.getElementById("login-error");
  error.textContent = "";
  try {
    await get("/v1/conversations", { limit: 1 }, key);
  } catch (err) {
    error.textContent = err instanceof ApiError && err.status === 401
      ? "That key was not accepted (401). Check it and try again."
      : `Could not sign in: ${err.message}`;
    return;
  }
  setKey(key);
  input.value = "";
  if (!window.location.hash || window.location.hash === "#/") window.location.hash = "#/conversations";
  else route();
}

function logout() {
  forgetKey();
  window.location.hash = "#/";
  showLogin("Signed out.");
}

async function renderConversations(root) {
  const data = await get("/v1/conversations", { limit: 200 });
  const rows = data.data.map((c) => h("tr", {},
    h("td", {}, h("a", { href: `#/conversations/${encodeURIComponent(c.id)}`, text: c.title || c.id })),
    h("td", { text: c.model || "(default)" }),
    h("td", { class: "num", text: fmtInt(c.message_count) }),
    h("td", { class: "num", text: fmtInt(c.total_tokens) }),
    h("td", { text: c.last_compacted_seq ? `through #${c.last_compacted_seq}` : "none" }),
    h("td", { text: fmtDate(c.updated_at) })));
  const body = rows.length
    ? table("Conversations", ["Conversation", "Model", "Messages", "Tokens", "Compacted", "Updated"], rows)
    : h("p", { text: "No conversations yet." });
  root.append(h("h1", { text: "Conversations" }),
    section("Newest first", "conversations-title", body,
      data.next_cursor ? h("p", { class: "muted", text: "Showing the newest 200." }) : null));
}

function parseHash() {
  const [path, query = ""] = window.location.hash.replace(/^#/, "").split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query) };
}

async function route() {
  if (leavePage) leavePage();
  leavePage = null;
  if (!getKey()) return showLogin();
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  const { parts, params } = parseHash();
  const root = clear(main);
  root.setAttribute("aria-busy", "true");
  try {
    if (parts[0] === "conversations" && parts[1]) await renderConversation(root, parts[1], params);
    else if (parts[0] === "files") leavePage = await renderFiles(root);
    else await renderConversations(root);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      forgetKey();
      return showLogin("The key was refused (401); sign in again.");
    }
    root.append(h("p", { class: "error", role: "alert", text: `Could not load this page: ${err.message}` }));
  } finally {
    root.removeAttribute("aria-busy");
  }
}

document.getElementById("login-form").addEventListener("submit", onLogin);
document.getElementById("logout").addEventListener("click", logout);
window.addEventListener("hashchange", route);
route();
