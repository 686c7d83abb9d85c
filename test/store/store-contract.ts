/**
 * The RunStore contract (R80, R84 within one process), run against every store: the memory store
 * and the SQLite store on each engine this Node has.
 */
import { describe, expect, it } from "vitest";
import { SessionLockedError, StoreClosedError, StoreInputError, UnknownSessionError, type Json, type RunStore } from "../../src/store/index.js";

/** A store on a fresh backing, with the clock given. */
export type StoreFactory = (clock: () => number) => RunStore;

/** A clock the test moves by hand. */
function manualClock(start = 1_000) {
  let now = start;
  return { read: () => now, set: (value: number) => void (now = value) };
}

export function describeStoreContract(name: string, makeStore: StoreFactory): void {
  const fresh = (start?: number) => {
    const clock = manualClock(start);
    return { store: makeStore(clock.read), clock };
  };

  describe(`${name}: R80 store semantics`, () => {
    it("R80: appends get sequence numbers 1, 2, 3… and read back in order", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      const records: Json[] = [{ kind: "intent", id: "a" }, "text", 42, null, [1, { nested: true }], { kind: "outcome", id: "a" }];
      expect(records.map((record) => writer.append(record))).toEqual([1, 2, 3, 4, 5, 6]);
      expect(writer.records()).toEqual(records.map((record, index) => ({ seq: index + 1, record })));
      expect(writer.records(4)).toEqual([
        { seq: 5, record: [1, { nested: true }] },
        { seq: 6, record: { kind: "outcome", id: "a" } },
      ]);
      expect(writer.records(6)).toEqual([]);
      store.close();
    });

    it("R80: the sequence continues without a gap when the session is opened again", () => {
      const { store } = fresh();
      const first = store.openSession("s1");
      first.append("a");
      first.append("b");
      first.release();
      const second = store.openSession("s1", { create: false });
      expect(second.append("c")).toBe(3);
      expect(second.records().map(({ seq }) => seq)).toEqual([1, 2, 3]);
      expect(second.info().records).toBe(3);
      store.close();
    });

    it("R80: a stored record is a copy: mutating what was appended or read changes nothing", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      const record = { list: [1, 2] };
      writer.append(record);
      record.list.push(3);
      (writer.records()[0].record as { list: number[] }).list.push(4);
      expect(writer.records()).toEqual([{ seq: 1, record: { list: [1, 2] } }]);
      store.close();
    });

    it("R80: the snapshot says up to which record it reflects (atSeq); a later save replaces it", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      expect(writer.snapshot()).toBeUndefined();
      writer.saveSnapshot({ state: "initial" }, 0);
      expect(writer.snapshot()).toEqual({ snapshot: { state: "initial" }, atSeq: 0 });
      writer.append("r1");
      writer.append("r2");
      writer.saveSnapshot({ state: "after r2", messages: ["a", "b"] }, 2);
      writer.append("r3");
      expect(writer.snapshot()).toEqual({ snapshot: { state: "after r2", messages: ["a", "b"] }, atSeq: 2 });
      // A resume reads the snapshot, then the records after it.
      expect(writer.records(writer.snapshot()!.atSeq)).toEqual([{ seq: 3, record: "r3" }]);
      store.close();
    });

    it("R80: a snapshot cannot claim records the journal does not have", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      writer.append("r1");
      expect(() => writer.saveSnapshot({}, 2)).toThrow(StoreInputError);
      expect(() => writer.saveSnapshot({}, -1)).toThrow(StoreInputError);
      expect(() => writer.saveSnapshot({}, 0.5)).toThrow(StoreInputError);
      expect(writer.snapshot()).toBeUndefined();
      store.close();
    });

    it("R80: a value that is not JSON is a StoreInputError and nothing is appended", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      writer.append("ok");
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(() => writer.append(cyclic as Json)).toThrow(StoreInputError);
      expect(() => writer.append({ big: 1n } as unknown as Json)).toThrow(StoreInputError);
      expect(() => writer.append(undefined as unknown as Json)).toThrow(StoreInputError);
      expect(() => writer.saveSnapshot((() => 1) as unknown as Json, 1)).toThrow(StoreInputError);
      expect(writer.append("next")).toBe(2);
      expect(writer.records().map(({ record }) => record)).toEqual(["ok", "next"]);
      store.close();
    });

    it("R80: a session keeps its meta, its creation and last-write times", () => {
      const { store, clock } = fresh(5_000);
      const writer = store.openSession("s1", { meta: { title: "first", cwd: "/w" } });
      clock.set(6_000);
      writer.append("r");
      expect(writer.info()).toEqual({ sessionId: "s1", createdAt: 5_000, updatedAt: 6_000, records: 1, meta: { title: "first", cwd: "/w" } });
      clock.set(7_000);
      writer.setMeta({ title: "renamed" });
      expect(store.readSession("s1").info()).toEqual({ sessionId: "s1", createdAt: 5_000, updatedAt: 7_000, records: 1, meta: { title: "renamed" } });
      store.close();
    });

    it("R80: a reader sees the writer's appends as they are made, without taking the lock", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      const reader = store.readSession("s1");
      writer.append("a");
      expect(reader.records()).toEqual([{ seq: 1, record: "a" }]);
      writer.saveSnapshot("snap", 1);
      expect(reader.snapshot()).toEqual({ snapshot: "snap", atSeq: 1 });
      expect(writer.append("b")).toBe(2);
      store.close();
    });

    it("R84: an unknown session id is UnknownSessionError, and nothing is created", () => {
      const { store } = fresh();
      expect(() => store.openSession("nope", { create: false })).toThrow(UnknownSessionError);
      expect(() => store.readSession("nope")).toThrow(UnknownSessionError);
      expect(() => store.deleteSession("nope")).toThrow(UnknownSessionError);
      expect(store.hasSession("nope")).toBe(false);
      expect(store.listSessions()).toEqual([]);
      // The id is free for a writer afterwards: the refused open held no lock.
      expect(store.openSession("nope").append("x")).toBe(1);
      store.close();
    });

    it("R84: a malformed session id is StoreInputError", () => {
      const { store } = fresh();
      for (const bad of ["", "x".repeat(513), 7, null, "user-\uD800", "user-\uDC00x"]) {
        expect(() => store.openSession(bad as string)).toThrow(StoreInputError);
        expect(() => store.hasSession(bad as string)).toThrow(StoreInputError);
      }
      // A lone surrogate has no UTF-8: refused, nothing is listed. A pair (an astral character) is a character like any other.
      expect(store.listSessions()).toEqual([]);
      store.openSession("user-\u{1F600}").release();
      expect(store.listSessions().map(({ sessionId }) => sessionId)).toEqual(["user-\u{1F600}"]);
      store.close();
    });
  });

  describe(`${name}: R84 one writer per session`, () => {
    it("R84: a second writer on a session is SessionLockedError and writes nothing", () => {
      const { store, clock } = fresh(1_000);
      const first = store.openSession("s1", { meta: "mine" });
      first.append("a");
      const before = store.readSession("s1").info();
      clock.set(2_000);
      expect(() => store.openSession("s1", { meta: "theirs" })).toThrow(SessionLockedError);
      expect(store.readSession("s1").info()).toEqual(before);
      expect(store.readSession("s1").records()).toEqual([{ seq: 1, record: "a" }]);
      // The first writer is unaffected.
      expect(first.append("b")).toBe(2);
      store.close();
    });

    it("R84: other sessions stay writable while one is held; a released session can be opened again", () => {
      const { store } = fresh();
      const held = store.openSession("s1");
      const other = store.openSession("s2");
      expect(other.append("x")).toBe(1);
      held.release();
      const again = store.openSession("s1");
      expect(again.append("y")).toBe(1);
      store.close();
    });

    it("R84: a released writer and a closed store are unusable (StoreClosedError)", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      writer.append("a");
      writer.release();
      writer.release(); // idempotent
      expect(() => writer.append("b")).toThrow(StoreClosedError);
      expect(() => writer.records()).toThrow(StoreClosedError);
      const live = store.openSession("s2");
      store.close();
      expect(() => live.append("c")).toThrow(StoreClosedError);
      expect(() => store.listSessions()).toThrow(StoreClosedError);
      store.close(); // idempotent
    });
  });

  describe(`${name}: retention`, () => {
    it("listSessions: most recently updated first", () => {
      const { store, clock } = fresh(1_000);
      const a = store.openSession("a");
      clock.set(2_000);
      const b = store.openSession("b");
      clock.set(3_000);
      store.openSession("c").release();
      clock.set(4_000);
      a.append("touch");
      expect(store.listSessions().map(({ sessionId, updatedAt }) => [sessionId, updatedAt])).toEqual([
        ["a", 4_000],
        ["c", 3_000],
        ["b", 2_000],
      ]);
      b.release();
      store.close();
    });

    it("deleteSession removes the session and its journal; refused (SessionLockedError) while a writer holds it", () => {
      const { store } = fresh();
      const writer = store.openSession("s1");
      writer.append("a");
      writer.saveSnapshot("snap", 1);
      expect(() => store.deleteSession("s1")).toThrow(SessionLockedError);
      expect(store.readSession("s1").records()).toHaveLength(1);
      writer.release();
      store.deleteSession("s1");
      expect(store.hasSession("s1")).toBe(false);
      expect(() => store.readSession("s1")).toThrow(UnknownSessionError);
      // A new session of that id starts empty.
      const reborn = store.openSession("s1");
      expect([reborn.records(), reborn.snapshot(), reborn.append("new")]).toEqual([[], undefined, 1]);
      store.close();
    });

    it("prune deletes the sessions last updated before olderThan, except one held by a writer", () => {
      const { store, clock } = fresh(1_000);
      store.openSession("old").release();
      const heldOld = store.openSession("old-but-held");
      clock.set(5_000);
      store.openSession("new").release();
      expect(store.prune({ olderThan: 5_000 })).toEqual(["old"]);
      expect(store.listSessions().map(({ sessionId }) => sessionId)).toEqual(["new", "old-but-held"]);
      heldOld.release();
      expect(store.prune({ olderThan: 5_000 })).toEqual(["old-but-held"]);
      expect(store.prune({ olderThan: 5_000 })).toEqual([]);
      store.close();
    });

    it("sizeReport counts sessions, records and bytes; a deletion takes its session and records out of the counts", () => {
      const { store } = fresh();
      const empty = store.sizeReport();
      expect([empty.sessions, empty.records]).toEqual([0, 0]);
      const writer = store.openSession("s1");
      for (let i = 0; i < 200; i++) writer.append({ i, text: "x".repeat(200) });
      store.openSession("s2").append("y");
      const full = store.sizeReport();
      expect([full.sessions, full.records]).toEqual([2, 201]);
      expect(full.bytes).toBeGreaterThan(200 * 200);
      writer.release();
      store.deleteSession("s1");
      const after = store.sizeReport();
      expect([after.sessions, after.records]).toEqual([1, 1]);
      store.close();
    });
  });
}
