// Provenance (docs/provenance.md): every structured line of a summary ends with the seqs of the
// messages it came from, (#12) or (#12, #40); the narrative's lines start with one. Each
// #n becomes a link that opens the original, read with GET …/messages?seqs=n.
import { get } from "./api.js";
import { badge, clear, h } from "./dom.js";

// a parenthesised citation: (#12), (#12, #40), (#3, …, #90), (#12 assistant), (#1-#66)
const CITATION = /\((#\d+[^()\n]*)\)/g;
const SEQ = /#(\d+)/g;

function seqLink(conversationId, seq) {
  return h("a", {
    href: `#/conversations/${encodeURIComponent(conversationId)}`,
    class: "seq-link",
    "data-seq": seq,
    title: `Show message #${seq}`,
    onclick: (event) => {
      event.preventDefault();
      showOriginal(conversationId, seq, event.currentTarget);
    },
  }, `#${seq}`);
}

// the citation's text with each #n a link, as nodes
function citationNodes(conversationId, inner) {
  const nodes = [];
  let last = 0;
  for (const match of inner.matchAll(SEQ)) {
    nodes.push(inner.slice(last, match.index), seqLink(conversationId, match[1]));
    last = match.index + match[0].length;
  }
  nodes.push(inner.slice(last));
  return nodes;
}

// `text` in a <pre>, its citations turned into links (the rest stays text nodes)
export function citedText(conversationId, text, className = "content") {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    nodes.push(text.slice(last, match.index), "(", citationNodes(conversationId, match[1]), ")");
    last = match.index + match[0].length;
  }
  nodes.push(text.slice(last));
  return h("pre", { class: `${className} cited` }, nodes);
}

function dialog() {
  let box = document.getElementById("original");
  if (box) return box;
  box = h("dialog", { id: "original", "aria-labelledby": "original-title" },
    h("div", { class: "dialog-head" },
      h("h2", { id: "original-title", text: "Original message" }),
      h("button", { type: "button", class: "close", text: "Close", onclick: () => box.close() })),
    h("div", { id: "original-body" }));
  document.body.append(box);
  return box;
}

function originalText(message) {
  const parts = [];
  if (typeof message.content === "string") parts.push(message.content);
  else if (Array.isArray(message.content)) parts.push(message.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n"));
  for (const call of message.tool_calls || []) {
    const args = call.function?.arguments;
    parts.push(`${call.function?.name ?? "?"}(${typeof args === "string" ? args : JSON.stringify(args ?? {})})`);
  }
  return parts.filter(Boolean).join("\n");
}

async function showOriginal(conversationId, seq, opener) {
  const box = dialog();
  const body = clear(box.querySelector("#original-body"));
  box.querySelector("#original-title").textContent = `Message #${seq}`;
  body.append(h("p", { class: "muted", text: "Loading…" }));
  if (!box.open) box.showModal();
  box.addEventListener("close", () => opener?.focus(), { once: true });
  try {
    const page = await get(`/v1/conversations/${encodeURIComponent(conversationId)}/messages`, { seqs: seq });
    clear(body);
    for (const message of page.data) {
      body.append(h("article", { class: "original", "data-seq": message.seq },
        h("div", { class: "message-head" },
          h("span", { class: "seq", text: `#${message.seq}` }),
          h("span", { class: "role", text: message.role }),
          message.kind ? badge(message.kind, "kind") : null,
          message.pinned ? badge("pinned", "pinned") : null),
        h("pre", { class: "content original-text", text: originalText(message) })));
    }
  } catch (err) {
    clear(body).append(h("p", { class: "error", role: "alert", text: `Could not load message #${seq}: ${err.message}` }));
  }
}
