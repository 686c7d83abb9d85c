/**
 * R84: the SQLite store's row checksums: `node:zlib`'s CRC-32 (native) of what `checkedText`
 * covers (the session id, the sequence number, the JSON text). Only this store uses Node's zlib;
 * the root entry and the in-memory store stay free of Node built-ins (../checksum.ts).
 */
import { crc32 } from "node:zlib";
import { checkedText } from "../checksum.js";

export const rowChecksum = (sessionId: string, seq: number, json: string): number => crc32(checkedText(sessionId, seq, json)) >>> 0;
