/**
 * Text from the model, a tool or the workspace made safe to print on a terminal. A file's contents,
 * a file name or a model's answer may hold escape sequences a terminal would obey (OSC 0 sets the
 * window title, OSC 52 writes the clipboard, `ESC[2J` clears the screen): every control character
 * but the line feed and the tab is shown instead — C0 and DEL as their Unicode control pictures
 * (`␛`, `␇`, `␍`, `␡`), C1 as `\x9b` — so the sequence is printed as text, never interpreted. The
 * bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what follows
 * them on screen ("Trojan Source"), are shown as `\u202e`. The CLI's own styles are added after
 * this, to text that has been through it.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

const stand = (char: string): string => {
  const code = char.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  if (code > 0xff) return `\\u${code.toString(16)}`;
  return `\\x${code.toString(16)}`;
};

export const visible = (text: string): string => text.replace(CONTROL, stand);
