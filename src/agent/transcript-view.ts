import type { AgentMessage } from "../types.js";

/**
 * `Agent.state.messages`: one array across runs, as the reference's (test/agent/scale.test.ts),
 * while the session machine's transcript is immutable (each message makes a new array). Made when
 * first read, so an Agent nobody asks keeps none. It follows the session's transcript when read:
 * grown in place while the session only appended to the transcript it mirrors, a new copy when the
 * session replaced it (reset, `state.messages = …`, compaction, a discarded message), as the
 * reference makes a new array when it replaces its own. It follows each snapshot of the session
 * (an array held by the app grows without being read again).
 */
export class TranscriptView {
  private source: readonly AgentMessage[] | undefined;
  private view: AgentMessage[] | undefined;

  /** The view of the session's current transcript `source`. */
  of(source: readonly AgentMessage[]): AgentMessage[] {
    this.follow(source);
    if (this.source !== source || !this.view) {
      this.view = source.slice();
      this.source = source;
    }
    return this.view;
  }

  /**
   * The session's transcript is `source` now: grown in place if it only appended to the mirrored
   * one, after whatever the app did to the array meanwhile (a message it pushed stays, as in the
   * reference's array; `edited()` hands it to the session at the next run).
   */
  follow(source: readonly AgentMessage[]): void {
    const { view, source: mirrored } = this;
    if (!view || !mirrored || mirrored === source) return;
    if (extendsPrefix(source, mirrored)) {
      for (let i = mirrored.length; i < source.length; i++) view.push(source[i]!);
      this.source = source;
    } else {
      // Replaced: the next read makes a new array.
      this.source = undefined;
    }
  }

  /** The app replaced the transcript (`state.messages = …`, `reset()`): the next read is a new array. */
  replaced(): void {
    this.source = undefined;
  }

  /** The session took the view's contents as its transcript `source`. */
  mirror(source: readonly AgentMessage[]): void {
    this.source = source;
  }

  /** The view after the app changed it in place (the reference's array is its transcript: a push, a message replaced), if it did. */
  edited(): AgentMessage[] | undefined {
    const { view, source } = this;
    if (!view || !source) return undefined;
    return view.length !== source.length || view.some((message, i) => message !== source[i]) ? view : undefined;
  }
}

function extendsPrefix(longer: readonly AgentMessage[], prefix: readonly AgentMessage[]): boolean {
  if (longer.length < prefix.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (longer[i] !== prefix[i]) return false;
  return true;
}
