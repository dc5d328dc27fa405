// The assembled messages (what the model will see) and the original history with what
// was removed, summarised or cleared marked.
import { badge, fmtInt, h } from "./dom.js";
import { citedText } from "./provenance.js";

const PREVIEW_CHARS = 4000;

function clip(text, max = PREVIEW_CHARS) {
  return text.length > max ? `${text.slice(0, max)}\n… (${fmtInt(text.length - max)} more characters)` : text;
}

function documentsOf(text) {
  if (typeof text !== "string" || !text.startsWith("{\"documents\"")) return null;
  try {
    const value = JSON.parse(text);
    return Array.isArray(value.documents) ? value.documents : null;
  } catch {
    return null;
  }
}

function documentsBlock(docs) {
  const titles = docs.map((d) => `[${d.citation_id}] ${d.title}`).join(", ");
  return h("details", { class: "documents" },
    h("summary", { text: `${docs.length} document${docs.length === 1 ? "" : "s"}: ${titles}` }),
    docs.map((d) => h("div", { class: "document" },
      h("p", {}, h("strong", { text: `[${d.citation_id}] ${d.title}` }), " — ", h("span", { class: "muted", text: d.metadata || "" })),
      h("pre", { class: "content", text: clip(String(d.contents ?? "")) }))));
}

function textBlock(text) {
  const docs = documentsOf(text);
  return docs ? documentsBlock(docs) : h("pre", { class: "content", text: clip(text) });
}

function partBlock(part) {
  if (part.type === "text") return textBlock(part.text ?? "");
  if (part.type === "image_url") {
    const url = part.image_url?.url ?? "";
    return url.startsWith("data:image/")
      ? h("img", { class: "thumb", src: url, alt: "image part of this message" })
      : h("p", { class: "muted", text: "image (not a data: URL; not shown)" });
  }
  if (part.type === "input_audio") return h("p", { class: "muted", text: `audio part (${part.input_audio?.format ?? "?"})` });
  return h("pre", { class: "content", text: clip(JSON.stringify(part)) });
}

// the compaction summary as the context sends it: a user turn that ends in
// <conversation_summary>…</conversation_summary> (contextq.history.plan.summary_wrapper)
function isSummary(message, text) {
  return message.role === "user" && /\n<conversation_summary>\n[\s\S]*\n<\/conversation_summary>$/.test(text);
}

// the slots the answer does not tag, told by what docs/history.md#the-ready-to-send-context
// says of them: the custom agent prompt is a user message of exactly its text; the
// reminders are the last message
function kindOf(message, index, ctx, conversation) {
  const text = typeof message.content === "string" ? message.content : "";
  if (isSummary(message, text)) return "summary";
  const last = index === ctx.messages.length - 1;
  if (last && message.role === "user" && ctx.token_breakdown?.reminders > 0) return "reminders";
  if (message.role === "user" && conversation.custom_agent_prompt && text === conversation.custom_agent_prompt) return "custom agent";
  if (documentsOf(text) || (Array.isArray(message.content) && message.content.some((p) => documentsOf(p.text)))) return "documents";
  if (message.role === "tool") return "tool result";
  if (message.tool_calls?.length) return "tool call";
  if (Array.isArray(message.content) && message.content.some((p) => p.type === "image_url")) return "image";
  return message.role;
}

function toolCalls(calls) {
  return calls.map((call) => h("pre", { class: "content tool-call",
    text: `${call.function?.name ?? "?"}(${clip(typeof call.function?.arguments === "string" ? call.function.arguments : JSON.stringify(call.function?.arguments ?? {}), 1000)})` }));
}

function summaryNote(compaction) {
  if (!compaction) return null;
  return h("p", { class: "mark-note" }, badge("summarised", "summarised"),
    ` stands in for messages #1–#${compaction.through_seq} (${compaction.method}, ${fmtInt(compaction.original_tokens)} → ${fmtInt(compaction.compacted_tokens)} tokens)`);
}

export function assembledMessages(ctx, compaction, conversation) {
  const items = ctx.messages.map((message, index) => {
    const kind = kindOf(message, index, ctx, conversation);
    const body = kind === "summary"
      ? citedText(ctx.conversation_id, message.content)
      : typeof message.content === "string"
      ? textBlock(message.content)
      : Array.isArray(message.content) ? message.content.map(partBlock) : null;
    return h("li", { class: `message role-${message.role} kind-${kind.replace(/ /g, "-")}`, "data-kind": kind, "data-index": index },
      h("div", { class: "message-head" },
        h("span", { class: "role", text: message.role }),
        kind !== message.role ? badge(kind, "kind") : null,
        message.tool_call_id ? h("span", { class: "muted", text: ` for ${message.tool_call_id}` }) : null),
      kind === "summary" ? summaryNote(compaction) : null,
      body,
      message.tool_calls?.length ? toolCalls(message.tool_calls) : null);
  });
  return h("ol", { class: "messages", id: "assembled" }, items);
}

function historyText(message) {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) {
    return message.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join(" ");
  }
  if (message.tool_calls?.length) return message.tool_calls.map((c) => `${c.function?.name}(…)`).join(", ");
  return "";
}

// marks: removed (the filter left it out), summarised (the compaction in use covers it),
// cleared (its tool result was cleared); pinned messages stay verbatim.
export function marksOf(message, ctx, compaction) {
  const marks = [];
  if (ctx.removed_message_ids?.includes(message.id)) marks.push("removed");
  if (compaction && message.seq <= compaction.through_seq && !message.pinned) marks.push("summarised");
  const cleared = ctx.cleared_tool_result_ids || [];
  if (cleared.includes(message.id) || (message.tool_call_id && cleared.includes(message.tool_call_id))) marks.push("cleared");
  return marks;
}

export function historyList(history, ctx, compaction) {
  const items = history.map((message) => {
    const marks = marksOf(message, ctx, compaction);
    return h("li", { class: `history-item ${marks.map((m) => `is-${m}`).join(" ")}`, "data-message-id": message.id, "data-marks": marks.join(" ") },
      h("div", { class: "message-head" },
        h("span", { class: "seq", text: `#${message.seq}` }),
        h("span", { class: "role", text: message.role }),
        message.kind ? badge(message.kind, "kind") : null,
        message.pinned ? badge("pinned", "pinned") : null,
        marks.map((m) => badge(m, m)),
        h("span", { class: "muted", text: ` ${fmtInt(message.token_count)} tokens` }),
        message.file_ids?.length ? h("span", { class: "muted", text: ` · ${message.file_ids.length} file(s)` }) : null),
      h("p", { class: "history-text", text: clip(historyText(message), 300) }));
  });
  return h("ol", { class: "history", id: "history" }, items);
}
