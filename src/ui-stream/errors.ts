/** A request the route cannot serve: answered with its HTTP status and a JSON body, never thrown to the host. */
export type UIStreamErrorCode =
  | "invalid_request"
  | "unsupported_trigger"
  | "no_active_run"
  | "unknown_chat"
  | "busy"
  | "unknown_approval"
  | "not_durable"
  | "unsupported_source"
  /** 413: the body is larger than the route's `maxBodyBytes`. */
  | "payload_too_large";

export class UIStreamRequestError extends Error {
  override name = "UIStreamRequestError";
  constructor(
    readonly code: UIStreamErrorCode,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function errorResponse(error: UIStreamRequestError): Response {
  return new Response(JSON.stringify({ error: { code: error.code, message: error.message } }), {
    status: error.status,
    headers: { "content-type": "application/json" },
  });
}
