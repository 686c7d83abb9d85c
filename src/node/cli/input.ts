/**
 * Keyboard input in raw mode: a small line editor that turns keypresses into actions. The
 * controller decides what an action means (a prompt, a steering line, an abort, an answer).
 *
 * Cost is linear in what is typed or pasted: a keypress appends to the buffer, and the redraw
 * actions (`key`, `change`) of one chunk of stdin are merged into one, so a 100 KB paste is one
 * redraw, not 100,000. Bracketed paste (`ESC [200~ … ESC [201~`) inserts pasted text as typed
 * text: its newlines do not submit, so keys typed after a paste never merge into it.
 */
import { emitKeypressEvents } from "node:readline";

export interface Key {
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
  sequence?: string;
}

export type InputAction =
  /** Enter (`alt`: Alt+Enter). */
  | { type: "submit"; text: string; alt: boolean }
  | { type: "escape" }
  /** Ctrl-C. */
  | { type: "interrupt" }
  /** Ctrl-D on an empty line. */
  | { type: "eof" }
  /** Printable text (already added to the buffer): one key, a paste, or a chunk's keys merged. */
  | { type: "key"; char: string }
  /** The buffer changed (redraw). */
  | { type: "change" };

/** Pasted text as the buffer keeps it: line breaks as `\n`, other control characters dropped. */
export function normalizePaste(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\r\n?/g, "\n").replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");
}

/** `buffer` without its last code point (a surrogate pair counts as one). */
function dropLastChar(buffer: string): string {
  const last = buffer.charCodeAt(buffer.length - 1);
  return buffer.slice(0, last >= 0xdc00 && last <= 0xdfff && buffer.length > 1 ? -2 : -1);
}

/** `buffer` without its last word and the whitespace after it (Ctrl-W), in one backwards scan. */
function dropLastWord(buffer: string): string {
  let end = buffer.length;
  while (end > 0 && /\s/.test(buffer[end - 1])) end--;
  while (end > 0 && !/\s/.test(buffer[end - 1])) end--;
  return buffer.slice(0, end);
}

export class LineEditor {
  buffer = "";
  /** Inside a bracketed paste: its pieces, joined at paste-end. */
  private paste: string[] | undefined;

  keypress(str: string | undefined, key: Key | undefined): InputAction[] {
    const name = key?.name;
    if (name === "paste-start") {
      this.paste = [];
      return [];
    }
    if (this.paste) {
      if (name !== "paste-end") {
        if (str) this.paste.push(str);
        return [];
      }
      const text = normalizePaste(this.paste.join(""));
      this.paste = undefined;
      if (!text) return [];
      this.buffer += text;
      return [{ type: "key", char: text }, { type: "change" }];
    }
    if (key?.ctrl && name === "c") return [{ type: "interrupt" }];
    if (key?.ctrl && name === "d") return this.buffer === "" ? [{ type: "eof" }] : [];
    if (name === "escape") return [{ type: "escape" }];
    if (name === "return" || name === "enter") {
      const text = this.buffer;
      this.buffer = "";
      return [{ type: "submit", text, alt: key?.meta === true }, { type: "change" }];
    }
    if (name === "backspace") {
      this.buffer = dropLastChar(this.buffer);
      return [{ type: "change" }];
    }
    if (key?.ctrl && name === "u") {
      this.buffer = "";
      return [{ type: "change" }];
    }
    if (key?.ctrl && name === "w") {
      this.buffer = dropLastWord(this.buffer);
      return [{ type: "change" }];
    }
    if (key?.ctrl || key?.meta) return [];
    // Escape sequences (arrows, function keys) carry no text.
    if (str === undefined || str === "" || str.startsWith("\x1b")) return [];
    const printable = Array.from(str).filter((char) => char >= " " && char !== "\x7f").join("");
    if (!printable) return [];
    this.buffer += printable;
    return [{ type: "key", char: printable }, { type: "change" }];
  }

  clear(): void {
    this.buffer = "";
    this.paste = undefined;
  }
}

export interface KeyboardStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

const BRACKETED_PASTE_ON = "\x1b[?2004h";
const BRACKETED_PASTE_OFF = "\x1b[?2004l";

/**
 * Feeds `stdin` keypresses (raw mode) to `onAction` until `stop()`. With `terminal` (the TTY the
 * user sees), it turns bracketed paste on while started.
 */
export class TerminalInput {
  readonly editor = new LineEditor();
  /** Inside one `data` chunk: `key` and `change` actions wait for its end. */
  private inChunk = false;
  private pendingText = "";
  private pendingChange = false;
  private readonly chunkStart = () => {
    this.inChunk = true;
  };
  private readonly chunkEnd = () => {
    this.inChunk = false;
    this.flush();
  };
  private readonly listener = (str: string | undefined, key: Key | undefined) => {
    for (const action of this.editor.keypress(str, key)) {
      if (this.inChunk && action.type === "key") this.pendingText += action.char;
      else if (this.inChunk && action.type === "change") this.pendingChange = true;
      else {
        this.flush();
        this.onAction(action);
      }
    }
  };
  private started = false;

  constructor(
    private readonly stdin: KeyboardStream,
    private readonly onAction: (action: InputAction) => void,
    private readonly terminal?: { write(text: string): unknown },
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    emitKeypressEvents(this.stdin);
    this.stdin.setRawMode?.(true);
    // The keypress decoder reads `data` once a keypress listener exists: these two run around it.
    this.stdin.on("keypress", this.listener);
    this.stdin.prependListener("data", this.chunkStart);
    this.stdin.on("data", this.chunkEnd);
    this.terminal?.write(BRACKETED_PASTE_ON);
    this.stdin.resume();
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.flush();
    this.stdin.off("keypress", this.listener);
    this.stdin.off("data", this.chunkStart);
    this.stdin.off("data", this.chunkEnd);
    this.terminal?.write(BRACKETED_PASTE_OFF);
    this.stdin.setRawMode?.(false);
    this.stdin.pause();
  }

  /** Delivers the merged `key` and `change` of the keys so far. */
  private flush(): void {
    const text = this.pendingText;
    const change = this.pendingChange;
    this.pendingText = "";
    this.pendingChange = false;
    if (text) this.onAction({ type: "key", char: text });
    if (change) this.onAction({ type: "change" });
  }
}
