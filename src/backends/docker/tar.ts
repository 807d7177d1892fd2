/**
 * A tiny in-memory ustar archive: the Engine API copies files into a
 * container only as a tar (`PUT /containers/{id}/archive`), and the fast
 * path copies one directory with one program in it, once per session. No
 * dependency for that.
 */

export interface TarEntry {
  /** Relative path inside the archive; a directory's ends with "/". */
  name: string;
  mode: number;
  /** Absent for a directory. */
  data?: Uint8Array;
}

const BLOCK = 512;

export function tarArchive(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.data ?? new Uint8Array(0);
    const header = Buffer.alloc(BLOCK);
    if (Buffer.byteLength(entry.name) > 100) throw new RangeError(`tar entry name too long: ${entry.name}`);
    header.write(entry.name, 0, 100, "utf8");
    octal(header, 100, 8, entry.mode);
    octal(header, 108, 8, 0); // uid
    octal(header, 116, 8, 0); // gid
    octal(header, 124, 12, data.length);
    octal(header, 136, 12, Math.floor(Date.now() / 1000));
    header.fill(0x20, 148, 156); // the checksum counts its own field as spaces
    header.write(entry.data === undefined ? "5" : "0", 156, 1, "ascii");
    header.write("ustar\u000000", 257, 8, "ascii");
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, 8, "ascii");
    parts.push(header, Buffer.from(data.buffer, data.byteOffset, data.length));
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK)); // end of archive
  return Buffer.concat(parts);
}

function octal(header: Buffer, offset: number, size: number, value: number): void {
  header.write(`${value.toString(8).padStart(size - 1, "0")}\u0000`, offset, size, "ascii");
}
