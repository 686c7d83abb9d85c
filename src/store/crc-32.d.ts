/** `crc-32` ships types for its CRC-32 entry only; its CRC-32C entry has the same functions. */
declare module "crc-32/crc32c.js" {
  export function buf(data: number[] | Uint8Array, seed?: number): number;
  export function bstr(data: string, seed?: number): number;
  export function str(data: string, seed?: number): number;
}
