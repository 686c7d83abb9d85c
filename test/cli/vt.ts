/**
 * A tiny terminal emulator for tests of the live screen: printable characters with auto-wrap,
 * \r, \n, CSI n A (cursor up), CSI J (erase below); SGR and other sequences are ignored.
 */
export class VirtualTerminal {
  private lines: string[][] = [[]];
  private row = 0;
  private col = 0;
  private pendingWrap = false;

  constructor(readonly columns: number) {}

  write(text: string): void {
    for (let index = 0; index < text.length; index++) {
      const char = text[index];
      if (char === "\x1b") {
        const match = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(text.slice(index));
        if (!match) continue;
        index += match[0].length - 1;
        const n = Number(match[1] || "1");
        if (match[2] === "A") this.row = Math.max(0, this.row - n);
        if (match[2] === "J") {
          this.lines[this.row] = this.lines[this.row].slice(0, this.col);
          this.lines.length = this.row + 1;
        }
        this.pendingWrap = false;
      } else if (char === "\r") {
        this.col = 0;
        this.pendingWrap = false;
      } else if (char === "\n") {
        this.newline();
      } else {
        if (this.pendingWrap) this.newline();
        const line = this.lines[this.row];
        while (line.length < this.col) line.push(" ");
        line[this.col] = char;
        if (this.col === this.columns - 1) this.pendingWrap = true;
        else this.col++;
      }
    }
  }

  private newline(): void {
    this.row++;
    this.col = 0;
    this.pendingWrap = false;
    while (this.lines.length <= this.row) this.lines.push([]);
  }

  /** The screen's lines, trailing spaces trimmed. */
  screen(): string[] {
    return this.lines.map((line) => line.join("").trimEnd());
  }
}
