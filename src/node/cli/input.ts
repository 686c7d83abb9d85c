/**
 * Keyboard input in raw mode: a small line editor that turns keypresses into actions. The
 * controller decides what an action means (a prompt, a steering line, an abort, an answer).
 *
 * Cost is linear in what is typed or pasted: a keypress appends to the buffer, and the redraw
 * actions (`key`, `change`) of one chunk of stdin are merged into one, so a 100 KB paste is one
 * redraw, not 100,000. Bracketed paste (`ESC [200~ … ESC [201~`) inserts pasted text as typed
 * text: its newlines do not submit, so keys typed after a paste never merge into it.
 */
import { EventEmitter } from "node:events";
import { emitKeypressEvents } from "node:readline";
import { StringDecoder } from "node:string_decoder";

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

const CHANGE: InputAction = Object.freeze({ type: "change" });

/**
 * Text appended a key at a time, in time linear in its length: keys go into a short string, kept
 * flat in pieces of ~512 characters. (A string grown by `+=` per key is a tree of one node per
 * key, and an array of one string per key is as bad: the garbage collector copies either one
 * again and again as it grows.)
 */
export class TextBuilder {
  private pieces: string[] = [];
  private recent = "";
  private size = 0;

  get length(): number {
    return this.size;
  }

  append(text: string): void {
    this.size += text.length;
    if (text.length >= 512) {
      this.settle();
      this.pieces.push(text);
      return;
    }
    this.recent += text;
    if (this.recent.length >= 512) this.settle();
  }

  toString(): string {
    this.settle();
    if (this.pieces.length > 1) this.pieces = [this.pieces.join("")];
    return this.pieces[0] ?? "";
  }

  private settle(): void {
    if (!this.recent) return;
    // Reading a character flattens the string in place, so the piece keeps no per-key nodes.
    this.recent.charCodeAt(0);
    this.pieces.push(this.recent);
    this.recent = "";
  }
}

export class LineEditor {
  private text = new TextBuilder();

  get buffer(): string {
    return this.text.toString();
  }

  set buffer(value: string) {
    this.text = new TextBuilder();
    this.text.append(value);
  }
  /** Inside a bracketed paste reported key by key (paste-start … paste-end): its pieces. */
  private pasting: string[] | undefined;

  keypress(str: string | undefined, key: Key | undefined): InputAction[] {
    const name = key?.name;
    if (name === "paste-start") {
      this.pasting = [];
      return [];
    }
    if (this.pasting) {
      if (name !== "paste-end") {
        if (str) this.pasting.push(str);
        return [];
      }
      const text = this.pasting.join("");
      this.pasting = undefined;
      return this.paste(text);
    }
    if (key?.ctrl && name === "c") return [{ type: "interrupt" }];
    if (key?.ctrl && name === "d") return this.text.length === 0 ? [{ type: "eof" }] : [];
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
    const printable = str.length === 1 ? (str >= " " && str !== "\x7f" ? str : "") : Array.from(str).filter((char) => char >= " " && char !== "\x7f").join("");
    if (!printable) return [];
    this.text.append(printable);
    return [{ type: "key", char: printable }, CHANGE];
  }

  /** Inserts pasted text (line breaks kept, they do not submit). */
  paste(text: string): InputAction[] {
    const normalized = normalizePaste(text);
    if (!normalized) return [];
    this.text.append(normalized);
    return [{ type: "key", char: normalized }, CHANGE];
  }

  clear(): void {
    this.buffer = "";
    this.pasting = undefined;
  }
}

export interface KeyboardStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

const BRACKETED_PASTE_ON = "\x1b[?2004h";
const BRACKETED_PASTE_OFF = "\x1b[?2004l";
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/**
 * Splits terminal input into typed parts and bracketed pastes, across chunks (a marker may be cut
 * between two). One `indexOf` per marker: the cost of a paste does not depend on its content.
 */
export class PasteSplitter {
  private pasting = false;
  private carry = "";
  private pieces: string[] = [];

  /** The parts of `chunk`, in order: `typed` text for the key decoder, finished `paste`s. */
  split(chunk: string): { kind: "typed" | "paste"; text: string }[] {
    const parts: { kind: "typed" | "paste"; text: string }[] = [];
    let text = this.carry + chunk;
    this.carry = "";
    for (;;) {
      const marker = this.pasting ? PASTE_END : PASTE_START;
      const at = text.indexOf(marker);
      if (at < 0) {
        // In a paste, keep a tail that may be the start of the end marker, cut by the chunk
        // boundary. (Outside one, a lone ESC is the Esc key; a cut start marker goes to the
        // keypress decoder, which reports paste-start and paste-end to the editor.)
        const keep = this.pasting ? partialMarkerLength(text, marker) : 0;
        const body = text.slice(0, text.length - keep);
        this.carry = text.slice(text.length - keep);
        if (this.pasting) this.pieces.push(body);
        else if (body) parts.push({ kind: "typed", text: body });
        return parts;
      }
      if (this.pasting) {
        this.pieces.push(text.slice(0, at));
        parts.push({ kind: "paste", text: this.pieces.join("") });
        this.pieces = [];
      } else if (at > 0) parts.push({ kind: "typed", text: text.slice(0, at) });
      this.pasting = !this.pasting;
      text = text.slice(at + marker.length);
    }
  }
}

/** The length of the longest end of `text` that begins `marker`. */
function partialMarkerLength(text: string, marker: string): number {
  for (let length = Math.min(marker.length - 1, text.length); length > 0; length--) {
    if (marker.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}

/**
 * Feeds `stdin` keypresses (raw mode) to `onAction` until `stop()`. With `terminal` (the TTY the
 * user sees), it turns bracketed paste on while started. Node's keypress decoder reads a private
 * emitter: bracketed pastes are taken out before it (one insertion instead of a keypress per
 * character), and the `key` and `change` actions of one chunk are merged into one.
 */
export class TerminalInput {
  readonly editor = new LineEditor();
  private readonly keys = new EventEmitter();
  private readonly splitter = new PasteSplitter();
  private readonly decoder = new StringDecoder("utf8");
  private inChunk = false;
  private pendingText = new TextBuilder();
  private pendingChange = false;
  private readonly onData = (data: Buffer | string) => {
    const text = typeof data === "string" ? data : this.decoder.write(data);
    this.inChunk = true;
    try {
      for (const part of this.splitter.split(text)) {
        // A chunk that is only ESC is the Esc key (terminals send a sequence in one write): no
        // need to wait, as the decoder does, half a second for the rest of a sequence.
        if (part.kind === "typed" && part.text === "\x1b") this.deliver(this.editor.keypress("\x1b", { name: "escape", sequence: "\x1b" }));
        else if (part.kind === "typed") this.keys.emit("data", part.text);
        else this.deliver(this.editor.paste(part.text));
      }
    } finally {
      this.inChunk = false;
      this.flush();
    }
  };
  private readonly onKeypress = (str: string | undefined, key: Key | undefined) => this.deliver(this.editor.keypress(str, key));
  private started = false;

  constructor(
    private readonly stdin: KeyboardStream,
    private readonly onAction: (action: InputAction) => void,
    private readonly terminal?: { write(text: string): unknown },
  ) {
    emitKeypressEvents(this.keys as unknown as NodeJS.ReadableStream);
    this.keys.on("keypress", this.onKeypress);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stdin.setRawMode?.(true);
    this.stdin.on("data", this.onData);
    this.terminal?.write(BRACKETED_PASTE_ON);
    this.stdin.resume();
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.flush();
    this.stdin.off("data", this.onData);
    this.terminal?.write(BRACKETED_PASTE_OFF);
    this.stdin.setRawMode?.(false);
    this.stdin.pause();
  }

  private deliver(actions: InputAction[]): void {
    for (const action of actions) {
      if (this.inChunk && action.type === "key") this.pendingText.append(action.char);
      else if (this.inChunk && action.type === "change") this.pendingChange = true;
      else {
        this.flush();
        this.onAction(action);
      }
    }
  }

  /** Delivers the merged `key` and `change` of the keys so far. */
  private flush(): void {
    const text = this.pendingText.toString();
    const change = this.pendingChange;
    this.pendingText = new TextBuilder();
    this.pendingChange = false;
    if (text) this.onAction({ type: "key", char: text });
    if (change) this.onAction({ type: "change" });
  }
}
