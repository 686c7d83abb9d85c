/**
 * R41, R83: each `message_update` carries the message as of that update (its own content array and
 * its own copy of the block the event changed), so a listener that keeps an update, an async sink
 * that gets it later, or the journal, sees what was true when it was emitted.
 *
 * Copying the content array on every delta costs O(blocks) a delta: a response of many blocks (a
 * hundred parallel tool calls, a thousand text blocks) is quadratic. So past a few blocks the copy
 * is made only when someone reads `content`: an update records the array's length, the changed
 * block's copy and an append-only list of the blocks it has seen (O(1) a delta, amortized), and
 * materializes the same array the eager copy would have held on first read. The blocks it shares
 * are the provider's own, as the eager copy shares them: a provider appends blocks and grows only
 * the current one in place.
 */
import type { AssistantMessage } from "../types.js";

type Block = AssistantMessage["content"][number];

/**
 * Up to this many blocks the eager copy is cheaper than the lazy one (an accessor defined and a
 * private field stamped a delta: about what copying 200 blocks costs, Node 20 and 24).
 */
const EAGER_BLOCKS = 128;

/**
 * One response's blocks as updates read them: slot i is what every update taken on this list with
 * more than i blocks shares at i, so a slot changes only when no such update reads it.
 */
export class ContentLog {
  private blocks: Block[] = [];
  /** The most blocks an update taken on `blocks` has. */
  private covered = 0;
  /** The one slot below `covered` that every update covering it copied for itself (-1: none). */
  private own = -1;

  /** The message as of now, for an update that changed block `contentIndex` (every block when there is none). */
  messageAsOf(partial: AssistantMessage, contentIndex?: number): AssistantMessage {
    const live = partial.content;
    if (contentIndex === undefined || live.length <= EAGER_BLOCKS || !live[contentIndex]) return copyNow(partial, contentIndex);
    const blocks = this.sync(live, contentIndex);
    this.own = this.own === contentIndex || this.covered <= contentIndex ? contentIndex : -1;
    if (live.length > this.covered) this.covered = live.length;
    return lazyCopy(partial, blocks, live.length, contentIndex, { ...live[contentIndex] });
  }

  /** `blocks` brought up to `live`: appended (amortized O(1)), or a new list when a slot an update reads changed. */
  private sync(live: Block[], contentIndex: number): Block[] {
    const blocks = this.blocks;
    if (live.length >= blocks.length) {
      if (contentIndex >= blocks.length || blocks[contentIndex] === live[contentIndex]) {
        for (let i = blocks.length; i < live.length; i++) blocks.push(live[i]);
        return blocks;
      }
      // A provider that replaces its current block rather than growing it.
      if (contentIndex === this.own || contentIndex >= this.covered) {
        blocks[contentIndex] = live[contentIndex];
        for (let i = blocks.length; i < live.length; i++) blocks.push(live[i]);
        return blocks;
      }
    }
    // Removed or replaced blocks others read: the updates taken so far keep the old list.
    this.covered = 0;
    this.own = -1;
    return (this.blocks = live.slice());
  }
}

/**
 * The eager copy: its own content array, and its own copy of the changed block and of every block
 * after it (of every block without an index): a provider that runs ahead of its consumer has
 * opened and grows those already, so sharing them would let a kept update change later.
 */
export function copyNow(partial: AssistantMessage, contentIndex?: number): AssistantMessage {
  const content = partial.content.slice();
  // (An index that names no block copies none, as before.)
  const from = contentIndex === undefined ? 0 : content[contentIndex] ? contentIndex : content.length;
  for (let i = from; i < content.length; i++) content[i] = { ...content[i] };
  return { ...partial, content };
}

/** What a lazily copied update's `content` is made of, until it is read. */
interface AsOf {
  blocks: Block[];
  length: number;
  contentIndex: number;
  changed: Block;
  content: Block[] | undefined;
}

/**
 * Attaches an `AsOf` to an object as a private field (a constructor that returns its argument lets
 * a subclass stamp fields on any object): invisible to JSON, `structuredClone`, spreads, key lists
 * and deep equality, and added through a cached hidden-class transition, unlike a `defineProperty`.
 */
class Passthrough {
  constructor(target: object) {
    return target;
  }
}
class Stamp extends Passthrough {
  #asOf: AsOf;
  constructor(target: object, asOf: AsOf) {
    super(target);
    this.#asOf = asOf;
  }
  static of(target: object): AsOf {
    return (target as Stamp).#asOf;
  }
}

/** One accessor for every lazy update (a closure each would give each message a hidden class of its own). */
const contentAccessor: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: object): Block[] {
    const asOf = Stamp.of(this);
    if (asOf.content === undefined) {
      asOf.content = asOf.blocks.slice(0, asOf.length);
      asOf.content[asOf.contentIndex] = asOf.changed;
    }
    return asOf.content;
  },
  set(this: object, value: Block[]) {
    Stamp.of(this).content = value;
  },
};

/** pi-ai's providers' partial, key by key: the keys an update copies with named stores. */
const USUAL_KEYS = ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"] as const;

/**
 * The message with `content` as an enumerable accessor in its place among the keys, so JSON,
 * `structuredClone`, spreads and deep equality see the same message as the eager copy. The array
 * is built on first read and kept; assigning `content` replaces it, as on a plain object.
 */
function lazyCopy(partial: AssistantMessage, blocks: Block[], length: number, contentIndex: number, changed: Block): AssistantMessage {
  const message = hasUsualKeys(partial) ? usualCopy(partial) : anyCopy(partial);
  new Stamp(message, { blocks, length, contentIndex, changed, content: undefined });
  return message as unknown as AssistantMessage;
}

/** The partial's own keys begin with `USUAL_KEYS`, in that order (a walk of V8's cached keys: no array built). */
function hasUsualKeys(partial: AssistantMessage): boolean {
  let i = 0;
  for (const key in partial) {
    if (i < USUAL_KEYS.length && key !== USUAL_KEYS[i]) return false;
    i++;
  }
  return i >= USUAL_KEYS.length && Object.hasOwn(partial, "timestamp");
}

/**
 * The usual partial, copied with named stores (one hidden class for every update, no keyed
 * stores: the key-by-key walk below cost about what the accessor does); keys after those
 * (a `responseId` set mid-stream) follow in their order.
 */
function usualCopy(partial: AssistantMessage): Record<string, unknown> {
  const message: Record<string, unknown> = { role: partial.role };
  Object.defineProperty(message, "content", contentAccessor);
  message.api = partial.api;
  message.provider = partial.provider;
  message.model = partial.model;
  message.usage = partial.usage;
  message.stopReason = partial.stopReason;
  message.timestamp = partial.timestamp;
  let i = 0;
  for (const key in partial) if (i++ >= USUAL_KEYS.length && Object.hasOwn(partial, key)) message[key] = (partial as unknown as Record<string, unknown>)[key];
  return message;
}

/** Any other partial: key by key, in the partial's order, `content` in its place (JSON, and so the journal, is the same). */
function anyCopy(partial: AssistantMessage): Record<string, unknown> {
  const message: Record<string, unknown> = {};
  for (const key in partial) {
    if (key === "content") Object.defineProperty(message, "content", contentAccessor);
    else if (Object.hasOwn(partial, key)) message[key] = (partial as unknown as Record<string, unknown>)[key];
  }
  return message;
}
