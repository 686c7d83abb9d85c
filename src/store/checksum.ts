/**
 * R84: what a record or snapshot's checksum covers, and the Node-free CRC-32C the in-memory store
 * computes it with (`crc-32`'s CRC-32C; the SQLite store uses `node:zlib`'s CRC-32, see
 * sqlite/checksum.ts). The session id and the sequence number are covered too: a record served
 * under another session or number is as changed as one whose bytes changed.
 */
// The default import: Node loads this UMD file as CommonJS, whose named exports it cannot see.
import CRC32C from "crc-32/crc32c.js";

/** The text a checksum covers: the session, the sequence number (a snapshot's `atSeq`), the JSON. */
export const checkedText = (sessionId: string, seq: number, json: string): string => `${sessionId}\n${seq}\n${json}`;

/** CRC-32C (Castagnoli) of `text` as UTF-8, unsigned. */
export const crc32c = (text: string): number => CRC32C.str(text) >>> 0;
