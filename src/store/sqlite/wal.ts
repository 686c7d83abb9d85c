/**
 * R84: what a store's write-ahead log (`<file>-wal`) says page 1 is, read from its bytes without
 * SQLite. A store whose last writer died keeps its last transactions there: a newer `user_version`
 * or another program's tables may be among them. Any SQLite connection runs WAL recovery on such a
 * file (rewriting the `-shm`), and a read-write one's close checkpoints the WAL into the database
 * file: what the header says must be read before a connection, for a refused file to keep its bytes.
 *
 * The format (sqlite.org/fileformat2.html, "The Write-Ahead Log"): a 32-byte header, then frames of
 * a 24-byte header and a page. A frame counts when its salts are the header's and its checksum,
 * cumulative from the header's, matches; what is committed ends at the last such frame that closes a
 * transaction (a non-zero database size). SQLite's recovery reads it the same way: a transaction cut
 * short by a crash, or frames of the WAL's previous generation (other salts), are not the store.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const WAL_MAGIC = 0x377f0682;
const WAL_FORMAT = 3007000;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** The last committed page 1 in the WAL at `walFile`, or undefined (no WAL, an empty or invalid one, or none of its transactions wrote page 1). */
export function committedPageOne(walFile: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(walFile, "r");
  } catch {
    // No WAL (or one SQLite cannot open either: its own open reports it).
    return undefined;
  }
  try {
    // A directory where the WAL goes is a path problem SQLite's open reports (StorePathError).
    if (!fstatSync(fd).isFile()) return undefined;
    const header = Buffer.alloc(WAL_HEADER);
    if (readSync(fd, header, 0, WAL_HEADER, 0) < WAL_HEADER) return undefined;
    const magic = header.readUInt32BE(0);
    if ((magic & ~1) >>> 0 !== WAL_MAGIC || header.readUInt32BE(4) !== WAL_FORMAT) return undefined;
    const pageSize = header.readUInt32BE(8);
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
    // The checksums' words are big-endian when the magic's low bit is set, else little-endian.
    const bigEndian = (magic & 1) === 1;
    let sum = checksum(header, 0, 24, [0, 0], bigEndian);
    if (sum[0] !== header.readUInt32BE(24) || sum[1] !== header.readUInt32BE(28)) return undefined;
    const salts = [header.readUInt32BE(16), header.readUInt32BE(20)];

    const frame = Buffer.alloc(FRAME_HEADER + pageSize);
    let committed: Buffer | undefined;
    let uncommitted: Buffer | undefined;
    for (let offset = WAL_HEADER; readSync(fd, frame, 0, frame.length, offset) === frame.length; offset += frame.length) {
      const page = frame.readUInt32BE(0);
      if (page === 0 || frame.readUInt32BE(8) !== salts[0] || frame.readUInt32BE(12) !== salts[1]) break;
      const next = checksum(frame, FRAME_HEADER, frame.length, checksum(frame, 0, 8, sum, bigEndian), bigEndian);
      if (next[0] !== frame.readUInt32BE(16) || next[1] !== frame.readUInt32BE(20)) break;
      sum = next;
      if (page === 1) uncommitted = Buffer.from(frame.subarray(FRAME_HEADER));
      if (frame.readUInt32BE(4) !== 0) {
        committed = uncommitted ?? committed;
        uncommitted = undefined;
      }
    }
    return committed;
  } finally {
    closeSync(fd);
  }
}

/** SQLite's WAL checksum of `bytes[start, end)` (a multiple of 8), continuing from `[s0, s1]`. */
function checksum(bytes: Buffer, start: number, end: number, [s0, s1]: readonly number[], bigEndian: boolean): [number, number] {
  for (let at = start; at < end; at += 8) {
    s0 = (s0 + (bigEndian ? bytes.readUInt32BE(at) : bytes.readUInt32LE(at)) + s1) >>> 0;
    s1 = (s1 + (bigEndian ? bytes.readUInt32BE(at + 4) : bytes.readUInt32LE(at + 4)) + s0) >>> 0;
  }
  return [s0, s1];
}
