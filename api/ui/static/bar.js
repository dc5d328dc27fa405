// The token bar: where the context's tokens went (token_breakdown), segments sized by
// tokens, and a meter of the whole against the budget and the model's window.
import { fmtInt, h } from "./dom.js";

export const CATEGORIES = [
  ["system", "System"],
  ["custom_agent", "Custom agent"],
  ["summary", "Summary"],
  ["project", "Project"],
  ["files", "Files"],
  ["history", "History"],
  ["reasoning", "Reasoning"],
  ["reminders", "Reminders"],
];

function pct(part, whole) {
  return whole > 0 ? (100 * part) / whole : 0;
}

function fmtPct(value) {
  return `${value < 10 ? value.toFixed(1) : Math.round(value)}%`;
}

function segment(key, label, tokens, total) {
  const share = pct(tokens, total);
  const node = h("div", {
    class: `segment seg-${key}`,
    "data-category": key,
    "data-tokens": tokens,
    title: `${label}: ${fmtInt(tokens)} tokens (${fmtPct(share)})`,
  }, share >= 9 ? h("span", { class: "segment-label", "aria-hidden": "true", text: label }) : null);
  node.style.width = `${share}%`; // CSSOM, allowed by the CSP (no inline style attribute)
  return node;
}

function composition(breakdown, total) {
  const parts = CATEGORIES.filter(([key]) => (breakdown[key] || 0) > 0);
  const summary = parts.map(([key, label]) => `${label} ${fmtInt(breakdown[key])}`).join(", ");
  return h("div", { class: "bar", id: "token-bar", role: "img",
    "aria-label": `Tokens by category: ${summary || "none"}` },
  parts.map(([key, label]) => segment(key, label, breakdown[key], total)));
}

function legend(breakdown, total) {
  return h("ul", { class: "legend", id: "token-legend" }, CATEGORIES.map(([key, label]) => {
    const tokens = breakdown[key] || 0;
    return h("li", { "data-category": key, class: tokens ? "" : "zero" },
      h("span", { class: `swatch seg-${key}`, "aria-hidden": "true" }),
      h("span", { class: "legend-label", text: label }),
      h("span", { class: "legend-tokens", text: fmtInt(tokens) }),
      h("span", { class: "muted", text: ` (${fmtPct(pct(tokens, total))})` }));
  }));
}

function meter(ctx) {
  const limit = ctx.context_limit || 0;
  const used = h("div", { class: "meter-used", "data-tokens": ctx.token_count });
  used.style.width = `${Math.min(100, pct(ctx.token_count, limit))}%`;
  const budget = h("div", { class: "meter-budget", title: `budget: ${fmtInt(ctx.budget_tokens)} tokens` });
  budget.style.left = `${Math.min(100, pct(ctx.budget_tokens, limit))}%`;
  return h("div", {},
    h("div", { class: "meter", id: "window-meter", role: "meter", "aria-valuemin": 0,
      "aria-valuemax": limit, "aria-valuenow": ctx.token_count,
      "aria-label": `Context: ${fmtInt(ctx.token_count)} of ${fmtInt(limit)} tokens, budget ${fmtInt(ctx.budget_tokens)}` },
    used, budget),
    h("p", { class: "meter-caption" },
      h("strong", { text: fmtInt(ctx.token_count) }), " tokens sent · budget ",
      h("strong", { text: fmtInt(ctx.budget_tokens) }), ` (${fmtPct(pct(ctx.budget_tokens, limit))} of the window) · context limit `,
      h("strong", { text: fmtInt(limit) }),
      ` · ${fmtPct(pct(ctx.token_count, limit))} of the window used`));
}

export function tokenBar(ctx) {
  const breakdown = ctx.token_breakdown || {};
  const total = CATEGORIES.reduce((sum, [key]) => sum + (breakdown[key] || 0), 0);
  return h("div", { class: "tokens" },
    h("h3", { text: "Where the tokens go" }),
    composition(breakdown, total),
    legend(breakdown, total),
    h("h3", { text: "Against the budget and the window" }),
    meter(ctx));
}
