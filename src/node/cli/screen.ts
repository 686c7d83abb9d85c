/**
 * Where the renderer's output goes. A plain screen appends text (pipes, files, NO_COLOR). A live
 * screen (an ANSI terminal) keeps a small live area below the output — the line being streamed,
 * spinners of running tools, the input line — and redraws it in place whenever anything changes.
 */
import { visibleWidth } from "./style.js";

export interface Screen {
  /** Whether `setLive` has any effect. */
  readonly live: boolean;
  /** Terminal width, when known. */
  readonly columns: number | undefined;
  /** Permanent output; may end mid-line. */
  print(text: string): void;
  /** Replaces the live lines (each at most one terminal row wide). */
  setLive(lines: readonly string[]): void;
  /** Clears the live area (the output stays), e.g. before exit. */
  close(): void;
}

export interface Output {
  write(text: string): unknown;
  columns?: number;
  rows?: number;
}

/** Appends text; `columns` (a terminal without colors) lets the renderer word-wrap. */
export function plainScreen(out: Output, columns?: number): Screen {
  return {
    live: false,
    columns,
    print: (text) => {
      if (text) out.write(text);
    },
    setLive: () => {},
    close: () => {},
  };
}

export function liveScreen(out: Output): Screen {
  let tail = "";
  let live: readonly string[] = [];
  let drawnRows = 0;
  let closed = false;
  const columns = () => Math.max(20, out.columns ?? 80);

  const rowsOf = (line: string) => Math.max(1, Math.ceil(visibleWidth(line) / columns()));

  const frame = (committed: string) => {
    let text = "";
    if (drawnRows > 0) text += `\r${drawnRows > 1 ? `\x1b[${drawnRows - 1}A` : ""}\x1b[J`;
    text += committed;
    const maxRows = Math.max(3, (out.rows ?? 40) - 2);
    // The streamed tail may have open styles; the live lines below start clean.
    const lines = [...(tail ? [`${tail}\x1b[0m`] : []), ...live];
    const shown = lines.slice(Math.max(0, lines.length - maxRows));
    text += shown.join("\n");
    drawnRows = shown.reduce((rows, line) => rows + rowsOf(line), 0);
    if (text) out.write(text);
  };

  return {
    live: true,
    get columns() {
      return columns();
    },
    print(text) {
      if (!text) return;
      const parts = (tail + text).split("\n");
      tail = parts.pop()!;
      frame(parts.map((line) => `${line}\n`).join(""));
    },
    setLive(lines) {
      live = lines;
      frame("");
    },
    close() {
      if (closed) return;
      live = [];
      frame("");
      closed = true;
      if (tail) out.write("\n");
      tail = "";
    },
  };
}
