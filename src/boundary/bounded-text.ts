/**
 * Error texts with a size limit. A validation message is sent to the model and kept in the
 * transcript, so it must stay a few KB whatever the schema or the arguments: a 10⁶-value enum
 * once made a 9.9 M-character message, and a 50 MB argument was echoed whole.
 */

/** Default cap of one error text, in characters. */
export const MAX_ERROR_TEXT = 4_000;

/**
 * `text` cut to at most `max` characters, marker included: `…[N bytes omitted]` where N is the
 * UTF-8 size of what was cut (the model reasons about bytes of its own output).
 */
export function boundText(text: string, max = MAX_ERROR_TEXT): string {
  if (text.length <= max) return text;
  // Reserve room for the marker; its digits never exceed the length of the whole text's size.
  const reserve = ` … [${utf8Bytes(text)} bytes omitted]`.length;
  let keep = Math.max(0, max - reserve);
  // Do not split a surrogate pair.
  if (keep > 0 && isHighSurrogate(text.charCodeAt(keep - 1))) keep--;
  const omitted = utf8Bytes(text.slice(keep));
  return `${text.slice(0, keep)} … [${omitted} bytes omitted]`;
}

/**
 * The first `max` items rendered and joined, then `… N more`: `"a", "b", … 999998 more`. Only the
 * kept items are rendered, so a million-item list costs as much as `max` items.
 */
export function boundList<T>(items: readonly T[], max: number, render: (item: T) => string, separator = ", "): string {
  const shown = items.slice(0, max).map(render);
  if (items.length > max) shown.push(`… ${items.length - max} more`);
  return shown.join(separator);
}

/** Arrays inside `boundJson` keep this many items, then a `"… N more"` marker. */
export const MAX_JSON_ITEMS = 50;

/**
 * JSON text of `value`, at most `max` characters (`…[N bytes omitted]`), never throwing. Long
 * strings and arrays inside are cut before serializing, so a 50 MB argument or a million-item
 * enum is not copied whole just to be cut.
 */
export function boundJson(value: unknown, max = MAX_ERROR_TEXT, indent?: number): string {
  let text: string | undefined;
  // One string may take half the room, so the fields around it still show.
  const maxString = Math.ceil(max / 2);
  const shorten = (_key: string, item: unknown): unknown => {
    if (typeof item === "string" && item.length > maxString) return `${item.slice(0, maxString)}… [${item.length - maxString} more characters]`;
    if (Array.isArray(item) && item.length > MAX_JSON_ITEMS) return [...item.slice(0, MAX_JSON_ITEMS), `… ${item.length - MAX_JSON_ITEMS} more`];
    return item;
  };
  try {
    text = JSON.stringify(value, shorten, indent);
  } catch {
    try {
      text = String(value);
    } catch {
      text = "[unprintable value]";
    }
  }
  return boundText(text ?? String(value), max);
}

/**
 * A list of allowed values as a failure line quotes it: JSON-like, the first `max` values (each
 * cut to 60 characters), then `… N more`: `["v0","v1", … 999998 more]`.
 */
export function boundValues(values: readonly unknown[], max = 10): string {
  return `[${boundList(values, max, (value) => boundJson(value, 60), ",")}]`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** UTF-8 byte length without encoding (counts code units; surrogate pairs are 4 bytes). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (isHighSurrogate(code) && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
