/**
 * The bodies of a `/files` upload, as E2B's SDK 2.51 sends them: multipart
 * (`file` parts, each named by its path when the URL names none; one without
 * a filename when the URL names the path, as envd takes it), or the raw
 * bytes (application/octet-stream, the URL's `path`), gzip-compressed when
 * the client says `Content-Encoding: gzip`. Sizes are counted after
 * decompression too, so a small gzip bomb is refused like a large body.
 */

import type { IncomingMessage } from "node:http";
import { PassThrough, Transform, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";

export class UploadProblem extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export const tooLarge = (limitBytes: number): UploadProblem =>
  new UploadProblem(413, `the upload is larger than this server's limit of ${limitBytes} bytes`);

/** The request body decoded (gzip or identity), failing with a 413 once it passes `limitBytes`. */
export function decodedBody(req: IncomingMessage, limitBytes: number): Readable {
  const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip")
    throw new UploadProblem(400, `Content-Encoding ${JSON.stringify(encoding)} is not supported (identity or gzip)`);
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge(limitBytes);
  let total = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > limitBytes) return done(tooLarge(limitBytes));
      done(null, chunk);
    },
  });
  const source = encoding === "gzip" ? createGunzip() : new PassThrough();
  source.on("error", (error) =>
    counted.destroy(new UploadProblem(400, `the gzip body could not be decompressed: ${error.message}`)),
  );
  req.on("error", (error) => counted.destroy(error));
  // Once the upload failed, the rest of the body is read into nothing: the client then gets its answer, not a reset.
  counted.on("error", () => {
    req.unpipe(source);
    req.resume();
  });
  req.pipe(source).pipe(counted);
  return counted;
}

export interface UploadPart {
  path: string;
  data: AsyncIterable<Uint8Array> | Uint8Array;
}

/** The files of a multipart body, read whole first (within the limit): nothing is written from a body that is refused. */
export async function multipartParts(
  req: IncomingMessage,
  limitBytes: number,
  queryPath: string | undefined,
): Promise<UploadPart[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of decodedBody(req, limitBytes)) chunks.push(chunk as Buffer);
  let form: FormData;
  try {
    form = await new Response(Buffer.concat(chunks), {
      headers: { "content-type": req.headers["content-type"] ?? "" },
    }).formData();
  } catch (error) {
    throw new UploadProblem(400, `the multipart body could not be read: ${(error as Error).message}`);
  }
  const parts: UploadPart[] = [];
  for (const [field, value] of form) {
    // envd takes a plain (filename-less) part named `file` as a file too, its path the URL's; other fields it skips.
    if (typeof value === "string") {
      if (field !== "file") continue;
      if (queryPath === undefined)
        throw new UploadProblem(400, "the part 'file' has no filename: give it one, or put path in the URL");
      parts.push({ path: queryPath, data: new TextEncoder().encode(value) });
      continue;
    }
    const path = queryPath ?? value.name;
    if (path === "" || path === "blob")
      throw new UploadProblem(400, `the part '${field}' names no path: give it a filename, or put path in the URL`);
    parts.push({ path, data: new Uint8Array(await value.arrayBuffer()) });
  }
  if (parts.length === 0) throw new UploadProblem(400, "the multipart body holds no file part");
  if (queryPath !== undefined && parts.length > 1)
    throw new UploadProblem(
      400,
      `path names one file but the body holds ${parts.length}; leave path out and name each part`,
    );
  return parts;
}
