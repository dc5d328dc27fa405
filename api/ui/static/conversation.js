// One conversation: what the model will see for a chosen model, and why.
import { get, getAll } from "./api.js";
import { tokenBar } from "./bar.js";
import { fmtInt, h, section } from "./dom.js";
import { assembledMessages, historyList } from "./messages.js";
import { compactionsTimeline, filesTable, memoryPanel } from "./panels.js";

const SUGGESTED_MODELS = [
  "gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3", "gpt-3.5-turbo",
  "claude-sonnet-4-5", "claude-3-5-haiku-latest", "gemini-2.5-pro",
];
const MAX_HISTORY = 2000;
const MAX_EXTRA_FILES = 50;

function modelPicker(conversationId, model, defaultModel) {
  const input = h("input", { id: "model", name: "model", list: "models", value: model, spellcheck: "false", required: true });
  const form = h("form", { class: "model-picker", id: "model-form" },
    h("label", { for: "model", text: "Model " }), input,
    h("datalist", { id: "models" }, [...new Set([defaultModel, ...SUGGESTED_MODELS])].filter(Boolean).map((m) => h("option", { value: m }))),
    h("button", { type: "submit", text: "Show context" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = input.value.trim();
    window.location.hash = `#/conversations/${encodeURIComponent(conversationId)}?model=${encodeURIComponent(chosen)}`;
  });
  return form;
}

async function conversationFiles(id, history) {
  const files = await getAll("/v1/files", { conversation_id: id, limit: 200 }, 500);
  const known = new Set(files.map((f) => f.id));
  const named = [...new Set(history.flatMap((m) => m.file_ids || []))].filter((f) => !known.has(f));
  const extra = await Promise.all(named.slice(0, MAX_EXTRA_FILES).map((f) => get(`/v1/files/${encodeURIComponent(f)}`).catch(() => null)));
  return [...files, ...extra.filter(Boolean)];
}

function facts(ctx) {
  const items = [
    ["Strategy", `${ctx.strategy}${ctx.filtered ? " (filtered)" : ""}`],
    ["Messages sent", fmtInt(ctx.messages.length)],
    ["History", `${fmtInt(ctx.original_message_count)} messages, ${fmtInt(ctx.original_tokens)} tokens`],
    ["Removed", fmtInt(ctx.removed_message_ids?.length ?? 0)],
    ["Built in", `${Number(ctx.duration_ms).toFixed(1)} ms`],
  ];
  const dropped = ctx.reasoning_dropped || {};
  if (Object.values(dropped).some((n) => n > 0)) {
    // reasoning units left out, by why (docs/context.md#reasoning-state): another vendor's,
    // earlier turns' the model strips, and bound reasoning whose prefix changed
    const reasons = [["other_vendor", "other vendor"], ["earlier_turns", "earlier turns"], ["prefix_changed", "prefix changed"]];
    items.push(["Reasoning left out", reasons.map(([key, label]) => `${label} ${fmtInt(dropped[key] ?? 0)}`).join(" · ")]);
  }
  return h("dl", { class: "facts" }, items.map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { text: v }))));
}

function warnings(ctx) {
  const list = [...(ctx.warnings || []), ...(ctx.error ? [ctx.error] : [])];
  return list.length ? h("ul", { class: "warnings", role: "note" }, list.map((w) => h("li", { text: typeof w === "string" ? w : JSON.stringify(w) }))) : null;
}

export async function renderConversation(root, id, params) {
  const path = `/v1/conversations/${encodeURIComponent(id)}`;
  const conversation = await get(path);
  const model = params.get("model") || conversation.model || "";
  const [ctx, history, compactions, memory] = await Promise.all([
    get(`${path}/context`, { model }),
    getAll(`${path}/messages`, { limit: 1000 }, MAX_HISTORY),
    get(`${path}/compactions`).then((r) => r.data),
    get(`${path}/memory`),
  ]);
  const files = await conversationFiles(id, history);
  const used = compactions.find((c) => c.id === ctx.compaction_id) || null;
  root.append(
    h("p", {}, h("a", { href: "#/conversations", text: "← Conversations" })),
    h("h1", { text: conversation.title || conversation.id }),
    h("p", { class: "muted", text: `${conversation.id} · ${fmtInt(conversation.message_count)} messages · conversation model ${conversation.model || "(default)"}` }),
    section(`Context for ${ctx.model}`, "context-title", modelPicker(id, ctx.model, conversation.model), tokenBar(ctx), facts(ctx), warnings(ctx)),
    h("div", { class: "columns" },
      section("What the model will see", "assembled-title", assembledMessages(ctx, used, conversation)),
      section("Original history", "history-title",
        h("p", { class: "muted", text: history.length >= MAX_HISTORY ? `The first ${MAX_HISTORY} messages.` : "Every stored message; the marks say what this context left out." }),
        historyList(history, ctx, used))),
    section("Compactions", "compactions-title", compactionsTimeline(compactions, ctx.compaction_id)),
    section("Memory", "memory-title", memoryPanel(memory)),
    section("Files", "files-title",
      files.length ? filesTable(files, ctx.file_notes, "Files of this conversation") : h("p", { text: "No files." })));
}
