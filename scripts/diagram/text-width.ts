/**
 * Text widths without a browser, so the layout is computed in Node and is the same on every
 * machine: the advance widths of DejaVu Sans (the font the SVG asks for first; Verdana, its
 * fallback, has close metrics), in thousandths of an em, for printable ASCII. They were measured
 * once with Chromium's canvas `measureText` at 1000 px; the diagram test checks them against
 * Chromium. Other characters count as a full em, so an estimate is never short.
 */
const REGULAR = [
  318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337,
  838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989,
  685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521,
  392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
];
const BOLD = [
  348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365, 696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400,
  838, 838, 838, 580, 1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995, 837, 850, 733, 850, 770, 720, 682, 812, 774, 1103,
  771, 724, 725, 457, 365, 457, 838, 500, 500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687, 716, 716, 493, 595,
  478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
];

export const FONT_FAMILY = "DejaVu Sans, Verdana, sans-serif";

/** The width in px of `text` set in DejaVu Sans at `fontSize` px. */
export function textWidth(text: string, fontSize: number, bold = false): number {
  const table = bold ? BOLD : REGULAR;
  let units = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    units += code >= 32 && code < 127 ? table[code - 32] : 1000;
  }
  return (units * fontSize) / 1000;
}

/**
 * Greedy word wrap at spaces to `maxWidth` px (a word longer than that gets a line of its own).
 * Joining the lines with single spaces gives the text back.
 */
export function wrapText(text: string, fontSize: number, maxWidth: number): string[] {
  const lines: string[] = [];
  let line = "";
  // An operator stays at the end of the line it continues: `a &&` / `b`, never `&&` alone.
  const words: string[] = [];
  for (const word of text.split(" ")) {
    if (words.length > 0 && /^(&&|\|\||,)$/.test(word)) words[words.length - 1] += ` ${word}`;
    else words.push(word);
  }
  for (const word of words) {
    const candidate = line === "" ? word : `${line} ${word}`;
    if (line !== "" && textWidth(candidate, fontSize) > maxWidth) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  lines.push(line);
  return lines;
}
