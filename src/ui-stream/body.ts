/**
 * A request's body read under a size bound: the route's bodies are small JSON (`useChat`'s messages,
 * an action), and without a bound one post could make the process buffer any size (60 MB became a
 * run's prompt). The bound counts bytes as they arrive, so no more than it is ever held.
 */
import { UIStreamRequestError } from "./errors.js";

/** The route's default body bound: `useChat` posts the whole conversation each time, text only, so a few MB. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

const tooLarge = (maxBytes: number) => new UIStreamRequestError("payload_too_large", 413, `The body is larger than ${maxBytes} bytes (the route's maxBodyBytes)`);

/** The body as text, or a 413 once it passes `maxBytes` (told by `content-length`, or counted while reading). */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // A body that fails while it is read (the client went away) is a bad request, never a rejection.
  const read = () =>
    reader.read().catch((error: unknown) => {
      throw new UIStreamRequestError("invalid_request", 400, `The body could not be read: ${error instanceof Error ? error.message : String(error)}`);
    });
  for (let next = await read(); !next.done; next = await read()) {
    size += next.value.byteLength;
    if (size > maxBytes) {
      // The rest is never read: the client may go on sending, the process holds none of it.
      reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) (bytes.set(chunk, offset), (offset += chunk.byteLength));
  return new TextDecoder().decode(bytes);
}
