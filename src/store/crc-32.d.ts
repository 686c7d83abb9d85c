/** `crc-32` ships types for its CRC-32 entry only; its CRC-32C entry (CommonJS/UMD) has the same functions. */
declare module "crc-32/crc32c.js" {
  const CRC32C: {
    buf(data: number[] | Uint8Array, seed?: number): number;
    bstr(data: string, seed?: number): number;
    str(data: string, seed?: number): number;
  };
  export default CRC32C;
}
