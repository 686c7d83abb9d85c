/** Terminal styles: ANSI SGR codes, or identity functions in plain mode. */
export interface Style {
  readonly enabled: boolean;
  dim(text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => (text === "" ? text : `\x1b[${open}m${text}\x1b[${close}m`);

export const ansiStyle: Style = {
  enabled: true,
  dim: sgr(2, 22),
  bold: sgr(1, 22),
  italic: sgr(3, 23),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
  magenta: sgr(35, 39),
};

const same = (text: string) => text;
export const plainStyle: Style = {
  enabled: false,
  dim: same,
  bold: same,
  italic: same,
  red: same,
  green: same,
  yellow: same,
  cyan: same,
  magenta: same,
};

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g;

export const stripAnsi = (text: string): string => text.replace(ANSI, "");

/** Columns a string takes (ANSI codes excluded; wide characters are not special-cased). */
export const visibleWidth = (text: string): number => Array.from(stripAnsi(text)).length;

/** `text` cut to `width` visible columns (plain text), with an ellipsis when cut. */
export function truncate(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 1) return chars.slice(0, width).join("");
  return `${chars.slice(0, width - 1).join("")}…`;
}

/** Whether output to this stream may use ANSI: a TTY and no NO_COLOR (https://no-color.org). */
export function useAnsi(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && !(env.NO_COLOR !== undefined && env.NO_COLOR !== "") && env.TERM !== "dumb";
}

/**
 * Plain `text` broken into rows of at most `width` columns at spaces (a word longer than a row is
 * cut); the continuation rows of a line start with `indent`. Existing line breaks are kept.
 */
export function wrapText(text: string, width: number, indent = ""): string[] {
  return text.split("\n").flatMap((line) => wrapLine(line, Math.max(width, indent.length + 10), indent));
}

function wrapLine(line: string, width: number, indent: string): string[] {
  const rows: string[] = [];
  const leading = /^ */.exec(line)![0];
  let row = leading;
  let used = leading.length;
  let lead = used;
  const newRow = () => {
    rows.push(row);
    row = indent;
    used = lead = indent.length;
  };
  for (const word of line.slice(leading.length).split(" ")) {
    let chars = Array.from(word);
    const gap = used > lead ? 1 : 0;
    if (used + gap + chars.length <= width) {
      row += (gap ? " " : "") + word;
      used += gap + chars.length;
      continue;
    }
    if (used > lead) newRow();
    while (used + chars.length > width) {
      const room = width - used;
      row += chars.slice(0, room).join("");
      chars = chars.slice(room);
      newRow();
    }
    row += chars.join("");
    used += chars.length;
  }
  rows.push(row);
  return rows;
}

/**
 * `parts` joined by `separator` into rows of at most `width` columns, breaking only between parts
 * (a part too long for a row is wrapped at its spaces); rows after the first start with `indent`.
 */
export function wrapParts(parts: readonly string[], width: number, separator = " · ", indent = "   "): string[] {
  const rows: string[] = [];
  let row = "";
  for (const part of parts) {
    const candidate = row === "" ? part : `${row}${separator}${part}`;
    if (visibleWidth(candidate) <= width || row === "") {
      row = candidate;
      continue;
    }
    rows.push(row);
    row = indent + part;
  }
  if (row) rows.push(row);
  return rows.flatMap((line) => (visibleWidth(line) <= width ? [line] : wrapText(line, width, indent)));
}
