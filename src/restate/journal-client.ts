/**
 * Reads a Restate session's journal through the ingress (SPEC R83 across workers): the records
 * the session object wrote as its runs went, whichever workers ran them, ready for `replayRun`
 * or `exportSessionTrace`'s viewer. Plain `fetch`: no SDK needed on the reading side.
 */
import type { StoredRecord } from "../store/run-store.js";

export interface ReadSessionJournalOptions {
  /** The session object's name (default `agentSession`). */
  readonly name?: string;
  /** Records per request (default 500). */
  readonly pageSize?: number;
  /** Extra request headers (an auth token in front of the ingress). */
  readonly headers?: Record<string, string>;
}

/** Every record of session `sessionId`, in order. Throws with the ingress's status and body when a request fails. */
export async function readSessionJournal(ingressUrl: string, sessionId: string, options: ReadSessionJournalOptions = {}): Promise<StoredRecord[]> {
  const { name = "agentSession", pageSize = 500, headers = {} } = options;
  const url = `${ingressUrl.replace(/\/+$/, "")}/${encodeURIComponent(name)}/${encodeURIComponent(sessionId)}/journal`;
  const records: StoredRecord[] = [];
  for (;;) {
    const after = records.at(-1)?.seq ?? 0;
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ after, limit: pageSize }) });
    if (!response.ok) throw new Error(`readSessionJournal: ${url}: HTTP ${response.status} ${await response.text()}`);
    const page = (await response.json()) as { records: StoredRecord[]; lastSeq: number };
    records.push(...page.records);
    if (page.records.length === 0 || (records.at(-1)?.seq ?? 0) >= page.lastSeq) return records;
  }
}
