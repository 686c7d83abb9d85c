/**
 * Packing rendered turns into summary chunks that fit a character budget (SPEC R62). Chunks close
 * on turn boundaries; a turn that alone exceeds the budget is split between its messages, and a
 * message that alone exceeds it is cut (a huge tool output is not worth several summary requests).
 */

/** Where the next chunk starts: a turn, and a message within it. */
export interface ChunkCursor {
  turn: number;
  message: number;
}

export interface Chunk {
  /** The chunk's messages, each rendered, joined by `CHUNK_SEPARATOR`; at most the budget long. */
  text: string;
  next: ChunkCursor;
}

export const CHUNK_SEPARATOR = "\n\n";

/** Whether `cursor` is past the last turn. */
export const isExhausted = (turns: readonly (readonly string[])[], cursor: ChunkCursor): boolean => cursor.turn >= turns.length;

/** The next chunk from `from`, at most `budgetChars` long, advancing by at least one message. */
export function takeChunk(turns: readonly (readonly string[])[], from: ChunkCursor, budgetChars: number): Chunk {
  const pieces: string[] = [];
  let used = 0;
  const room = () => budgetChars - used - (pieces.length > 0 ? CHUNK_SEPARATOR.length : 0);
  const add = (piece: string) => {
    used += (pieces.length > 0 ? CHUNK_SEPARATOR.length : 0) + piece.length;
    pieces.push(piece);
  };
  let { turn, message } = from;
  // Whole turns (or the rest of a turn a previous chunk split) while they fit.
  while (turn < turns.length) {
    const rest = turns[turn].slice(message);
    if (joinedLength(rest) > room()) break;
    rest.forEach(add);
    turn++;
    message = 0;
  }
  // Nothing fitted whole: this turn alone is too large, so take its messages one by one.
  if (pieces.length === 0 && turn < turns.length) {
    const messages = turns[turn];
    while (message < messages.length && messages[message].length <= room()) add(messages[message++]);
    if (pieces.length === 0) add(cut(messages[message++], room()));
    if (message >= messages.length) {
      turn++;
      message = 0;
    }
  }
  return { text: pieces.join(CHUNK_SEPARATOR), next: { turn, message } };
}

function joinedLength(pieces: readonly string[]): number {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  return length + Math.max(0, pieces.length - 1) * CHUNK_SEPARATOR.length;
}

/** `text` cut to at most `limit` characters, ending with a marker saying how much was left out. */
export function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  // The marker's length with the largest possible count, so the result never exceeds the limit.
  const widest = marker(text.length).length;
  const keep = Math.max(0, limit - widest);
  return text.slice(0, keep) + marker(text.length - keep);
}

const marker = (omitted: number): string => `\n[… ${omitted} characters omitted]`;
