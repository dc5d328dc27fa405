// The conversation page's other panels: compactions timeline, memory, files.
import { badge, fmtDate, fmtInt, h, table } from "./dom.js";
import { citedText } from "./provenance.js";

function provenanceNote(c) {
  if (c.unsourced_items === null || c.unsourced_items === undefined) return null;
  const items = c.details?.structured_items;
  const total = typeof items === "number" ? `${fmtInt(items)} structured items cite their messages` : "Structured items cite their messages";
  return h("p", { class: "provenance-note" }, `${total}; `,
    h("strong", { text: `${fmtInt(c.unsourced_items)} unsourced` }), " (marked #?). Each #n opens the original.");
}

export function compactionsTimeline(compactions, usedId) {
  if (!compactions.length) return h("p", { text: "No compaction yet." });
  return h("ol", { class: "timeline", id: "compactions" }, compactions.map((c) => {
    const retention = c.retention === null || c.retention === undefined
      ? "not checked" : `${Math.round(c.retention * 100)}%`;
    return h("li", { class: "compaction", "data-compaction-id": c.id },
      h("div", { class: "message-head" },
        h("strong", { text: fmtDate(c.created_at) }), " ",
        badge(c.method, "kind"),
        c.id === usedId ? badge("used by this context", "used") : null),
      h("p", { text: `Covers messages #1–#${c.through_seq}: ${fmtInt(c.original_message_count)} messages, ${fmtInt(c.original_tokens)} → ${fmtInt(c.compacted_tokens)} tokens, in ${Math.round(c.duration_ms)} ms.` }),
      h("p", {}, "Retention: ", h("strong", { text: retention }),
        c.repaired?.length ? ` — repaired (${c.repaired.length} item${c.repaired.length === 1 ? "" : "s"} restored):` : ""),
      c.repaired?.length ? h("ul", { class: "repaired" }, c.repaired.map((item) => h("li", { text: item }))) : null,
      provenanceNote(c),
      h("details", {}, h("summary", { text: "Summary text" }), citedText(c.conversation_id, c.summary)));
  }));
}

function goalBlock(goal) {
  if (!goal || !goal.text) return h("p", { text: "No goal set." });
  const subtasks = goal.subtasks || [];
  const done = subtasks.filter((s) => s.done).length;
  const progress = typeof goal.progress === "number" ? goal.progress : subtasks.length ? done / subtasks.length : 0;
  const ratio = progress > 1 ? progress / 100 : progress;
  return h("div", { class: "goal" },
    h("p", {}, h("strong", { text: "Goal: " }), goal.text),
    h("label", { for: "goal-progress", text: `Subtasks: ${done} of ${subtasks.length} done ` }),
    h("progress", { id: "goal-progress", max: 100, value: Math.round(ratio * 100) }, `${Math.round(ratio * 100)}%`),
    h("ul", { class: "subtasks" }, subtasks.map((s) => h("li", { class: s.done ? "done" : "open" },
      h("span", { "aria-hidden": "true", text: s.done ? "✔ " : "○ " }),
      h("span", { class: "visually-hidden", text: s.done ? "done: " : "open: " }), s.name))));
}

export function memoryPanel(memory) {
  const decisions = memory.decisions || [];
  const errors = memory.error_patterns || [];
  return h("div", { id: "memory" },
    goalBlock(memory.goal),
    memory.phase ? h("p", {}, h("strong", { text: "Phase: " }), memory.phase) : null,
    h("h3", { text: `Decisions (${decisions.length})` }),
    decisions.length
      ? h("ul", { class: "decisions" }, decisions.map((d) => h("li", {},
        badge(d.impact || "medium", `impact-${d.impact || "medium"}`), " ", h("strong", { text: d.decision }),
        d.rationale ? h("span", { class: "muted", text: ` — ${d.rationale}` }) : null)))
      : h("p", { text: "No decisions recorded." }),
    h("h3", { text: `Error patterns (${errors.length})` }),
    errors.length
      ? h("ul", { class: "errors" }, errors.map((e) => h("li", { class: e.alert ? "alert" : "" },
        e.alert ? badge("alert", "alert") : null, " ", h("code", { text: e.pattern }),
        h("span", { class: "muted", text: ` × ${e.count} · last seen ${fmtDate(e.last_seen)}` }))))
      : h("p", { text: "No errors tracked." }));
}

export function truncationText(file) {
  const t = file.truncation;
  if (!t) return file.status === "ready" ? "nothing left out" : "–";
  return t.truncated ? `truncated: ${t.summary || "yes"}` : "nothing left out";
}

export function statusBadge(status) {
  return badge(status, `status-${status}`);
}

function noteText(error, note) {
  if (note && error && note.includes(error)) return note;
  return [error, note].filter(Boolean).join(" — ");
}

function conversationCell(f) {
  return h("td", {}, f.conversation_id
    ? h("a", { href: `#/conversations/${encodeURIComponent(f.conversation_id)}`, text: f.conversation_id.slice(0, 8) })
    : "–");
}

// withConversation: the files page adds a column linking each file's conversation
export function filesTable(files, notes, caption, withConversation = false) {
  const noteOf = new Map((notes || []).map((n) => [n.file_id, n.reason]));
  const rows = files.map((f) => h("tr", { "data-file-id": f.id, "data-status": f.status },
    h("td", { text: f.filename }),
    withConversation ? conversationCell(f) : null,
    h("td", { text: f.category }),
    h("td", { class: "status" }, statusBadge(f.status)),
    h("td", { class: "num", text: fmtInt(f.token_count) }),
    h("td", { class: "num", text: fmtInt(f.processed_token_count) }),
    h("td", { text: truncationText(f) }),
    h("td", { text: noteText(f.error, noteOf.get(f.id)) })));
  const headers = ["File", "Category", "Status", "Tokens", "In context", "Truncation", "Notes"];
  if (withConversation) headers.splice(1, 0, "Conversation");
  return table(caption, headers, rows);
}
