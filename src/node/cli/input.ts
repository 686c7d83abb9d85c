/**
 * Keyboard input in raw mode: a small line editor that turns keypresses into actions. The
 * controller decides what an action means (a prompt, a steering line, an abort, an answer).
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
  /** A printable key (already added to the buffer). */
  | { type: "key"; char: string }
  /** The buffer changed (redraw). */
  | { type: "change" };

export class LineEditor {
  buffer = "";

  keypress(str: string | undefined, key: Key | undefined): InputAction[] {
    const name = key?.name;
    if (key?.ctrl && name === "c") return [{ type: "interrupt" }];
    if (key?.ctrl && name === "d") return this.buffer === "" ? [{ type: "eof" }] : [];
    if (name === "escape") return [{ type: "escape" }];
    if (name === "return" || name === "enter") {
      const text = this.buffer;
      this.buffer = "";
      return [{ type: "submit", text, alt: key?.meta === true }, { type: "change" }];
    }
    if (name === "backspace") {
      this.buffer = Array.from(this.buffer).slice(0, -1).join("");
      return [{ type: "change" }];
    }
    if (key?.ctrl && name === "u") {
      this.buffer = "";
      return [{ type: "change" }];
    }
    if (key?.ctrl && name === "w") {
      this.buffer = this.buffer.replace(/\S+\s*$/, "");
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
  }
}

export interface KeyboardStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** Feeds `stdin` keypresses (raw mode) to `onAction` until `stop()`. */
export class TerminalInput {
  readonly editor = new LineEditor();
  private readonly listener = (str: string | undefined, key: Key | undefined) => {
    for (const action of this.editor.keypress(str, key)) this.onAction(action);
  };
  private started = false;

  constructor(
    private readonly stdin: KeyboardStream,
    private readonly onAction: (action: InputAction) => void,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    emitKeypressEvents(this.stdin);
    this.stdin.setRawMode?.(true);
    this.stdin.on("keypress", this.listener);
    this.stdin.resume();
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.stdin.off("keypress", this.listener);
    this.stdin.setRawMode?.(false);
    this.stdin.pause();
  }
}
