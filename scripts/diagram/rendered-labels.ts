/**
 * What a reader sees of a diagram: the SVG shown in a page of a given width (900 px, the README's
 * column) the way a README shows an image, never wider than its natural size, and every label's
 * box as Chromium renders it. Shared by the diagram test (legibility, overlaps) and the screenshot
 * script, so the screenshot is the page the test checked.
 */
import type { Page } from "playwright-core";

export const README_WIDTH = 900;

export interface RenderedLabel {
  /** `state`: a state's name; `edge`: a transition label; `note`: a composite's transitions. */
  kind: "state" | "edge" | "note" | "title";
  text: string;
  /** The id of the group it belongs to (a state path, or the edge's transition ids). */
  owner: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The font size after the SVG is scaled to the page, and the unscaled one. */
  fontPx: number;
  fontSize: number;
  bold: boolean;
  /** Width of the text as laid out by Chromium, in the SVG's own units. */
  textLength: number;
  /** For a state label: whether it lies inside its state's outline. */
  insideOwner: boolean;
  /** Whether it lies inside the SVG (is not clipped). */
  insideSvg: boolean;
}

/** A page showing `svg` at most `width` px wide (scaled down proportionally if wider). */
export function diagramPage(svg: string, width = README_WIDTH): string {
  const body = svg.slice(svg.indexOf("<svg"));
  return `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;background:#fff}main{width:${width}px}main>svg{display:block;max-width:100%;height:auto}</style></head><body><main>${body}</main></body></html>`;
}

/** Every text of the diagram shown in `page` (see diagramPage), with its rendered box. */
export function renderedLabels(page: Page): Promise<RenderedLabel[]> {
  return page.evaluate(() => {
    const svg = document.querySelector("main > svg") as SVGSVGElement;
    const scale = svg.getScreenCTM()!.a;
    const frame = svg.getBoundingClientRect();
    return Array.from(svg.querySelectorAll("text")).map((text) => {
      const cls = text.getAttribute("class") ?? "";
      const group = text.closest("g[id]");
      const kind = cls.includes("state-label") ? "state" : cls.includes("title") ? "title" : group?.classList.contains("transitions") ? "note" : "edge";
      const box = text.getBoundingClientRect();
      const spans: SVGTextContentElement[] = Array.from(text.querySelectorAll("tspan"));
      let insideOwner = false;
      const outline = group?.querySelector(":scope > path")?.getBoundingClientRect();
      if (outline) insideOwner = box.left >= outline.left && box.right <= outline.right && box.top >= outline.top && box.bottom <= outline.bottom;
      return {
        kind,
        text: Array.from(text.querySelectorAll("tspan")).map((span) => span.textContent).join("\n") || (text.textContent ?? ""),
        owner: group?.id ?? "",
        x: box.left,
        y: box.top,
        width: box.width,
        height: box.height,
        fontPx: parseFloat(getComputedStyle(text).fontSize) * scale,
        fontSize: parseFloat(getComputedStyle(text).fontSize),
        bold: Number(getComputedStyle(text).fontWeight) >= 600,
        textLength: Math.max(...(spans.length > 0 ? spans : [text]).map((line) => line.getComputedTextLength())),
        insideOwner,
        insideSvg: box.left >= frame.left && box.right <= frame.right && box.top >= frame.top && box.bottom <= frame.bottom,
      } as const;
    });
  });
}

/** Pairs of labels whose boxes overlap by more than `tolerance` px in both directions. */
export function overlappingLabels<T extends { x: number; y: number; width: number; height: number }>(labels: T[], tolerance = 0.5): [T, T][] {
  const pairs: [T, T][] = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const [a, b] = [labels[i], labels[j]];
      const dx = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      const dy = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
      if (dx > tolerance && dy > tolerance) pairs.push([a, b]);
    }
  }
  return pairs;
}
