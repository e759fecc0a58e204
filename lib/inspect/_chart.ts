// The per-request chart of the HTML export: stacked token bars (cache read,
// uncached input, output) and a latency line, as inline SVG. Each bar links
// to its request (#req-N) and carries a <title> tooltip.
import type { RequestSummary } from "./conversation.ts";
import { formatDuration, formatTokens } from "../display/numbers.ts";

const ENTITY: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escape text for HTML/SVG content and attribute values, in one pass: a
 * replace per character kind made four copies of the text on the way.
 */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITY[c]!);
}

const COLORS = { cache_read: "#9ecae1", cache_write: "#3182bd", output: "#e6550d" };

function r1(x: number): string {
  return (Math.round(x * 10) / 10).toString();
}

/** The SVG chart of `requests` ("" when there are none). */
export function requestChart(requests: readonly RequestSummary[]): string {
  // Long by design: it lays out one SVG top to bottom (axes, bars, labels); the
  // parts share the scale and splitting them would only pass it around.
  if (requests.length === 0) return "";
  const n = requests.length;
  const barW = Math.max(3, Math.min(64, 900 / n));
  const left = 56;
  const right = 56;
  const top = 24;
  const plotH = 160;
  const bottom = 34;
  const W = Math.max(640, Math.ceil(left + n * barW + right));
  const H = top + plotH + bottom;
  const maxTok = Math.max(1, ...requests.map((r) => r.tokens?.total ?? 0));
  const maxLat = Math.max(1, ...requests.map((r) => r.latency_ms ?? 0));
  const y = (v: number, max: number) => top + plotH - (v / max) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="tokens and latency per request">`,
  );
  parts.push(
    `<line x1="${left}" y1="${top + plotH}" x2="${r1(left + n * barW)}" y2="${
      top + plotH
    }" class="axis"/>`,
    `<text x="${left - 4}" y="${top + 4}" text-anchor="end" class="lbl">${
      esc(formatTokens(maxTok))
    }</text>`,
    `<text x="${left - 4}" y="${top + plotH}" text-anchor="end" class="lbl">0</text>`,
    `<text x="${left + n * barW + 4}" y="${top + 4}" class="lbl lat">${
      esc(formatDuration(maxLat))
    }</text>`,
    `<text x="${left}" y="${
      top - 8
    }" class="lbl">tokens per request (stacked: cache read, uncached input, output) · latency (line)</text>`,
  );
  const points: string[] = [];
  const step = Math.max(1, Math.ceil(n / 20));
  requests.forEach((r, i) => {
    const x = left + i * barW;
    const t = r.tokens;
    const tip = [
      `request ${r.n}${r.compaction ? " (compaction)" : ""}: ${r.status ?? "no request_end"}`,
      t
        ? `tokens ${t.total}: cache read ${t.cache_read}, uncached ${t.cache_write}, output ${t.output}`
        : "no token usage",
      r.latency_ms !== null ? `latency ${formatDuration(r.latency_ms)}` : "",
    ].filter(Boolean).join("\n");
    parts.push(`<a href="#req-${r.n}"><g class="bar"><title>${esc(tip)}</title>`);
    parts.push(
      `<rect x="${r1(x)}" y="${top}" width="${r1(barW)}" height="${plotH}" class="hit"/>`,
    );
    if (t) {
      let base = top + plotH;
      for (const k of ["cache_read", "cache_write", "output"] as const) {
        const h = (t[k] / maxTok) * plotH;
        if (h <= 0) continue;
        base -= h;
        parts.push(
          `<rect x="${r1(x + 0.5)}" y="${r1(base)}" width="${r1(Math.max(1, barW - 1))}" height="${
            r1(h)
          }" fill="${COLORS[k]}"/>`,
        );
      }
    }
    if (r.status !== null && r.status !== "completed") {
      parts.push(
        `<rect x="${r1(x + 0.5)}" y="${top + plotH - 4}" width="${
          r1(Math.max(1, barW - 1))
        }" height="4" class="failed"/>`,
      );
    }
    parts.push("</g></a>");
    if (r.latency_ms !== null) points.push(`${r1(x + barW / 2)},${r1(y(r.latency_ms, maxLat))}`);
    if (i % step === 0) {
      parts.push(
        `<text x="${r1(x + barW / 2)}" y="${
          top + plotH + 14
        }" text-anchor="middle" class="lbl">${r.n}</text>`,
      );
    }
  });
  if (points.length > 1) parts.push(`<polyline points="${points.join(" ")}" class="latency"/>`);
  for (const p of points) {
    const [cx, cy] = p.split(",");
    parts.push(`<circle cx="${cx}" cy="${cy}" r="2" class="latency-dot"/>`);
  }
  parts.push(`<text x="${left}" y="${H - 4}" class="lbl">request</text>`);
  parts.push("</svg>");
  return parts.join("");
}
