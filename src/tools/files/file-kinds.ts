/**
 * Telling text from binary: by extension first (cheap, no read), then by a
 * sample of the content (a NUL byte, or mostly control characters).
 */

export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set([
  ".png",
  ".jpg",
  ".jpeg",
  ".gif",
  ".webp",
  ".bmp",
  ".ico",
  ".tiff",
  ".tif",
  ".avif",
  ".heic",
]);

export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set([
  ...IMAGE_EXTENSIONS,
  ".pdf",
  ".zip",
  ".gz",
  ".tgz",
  ".bz2",
  ".xz",
  ".zst",
  ".7z",
  ".rar",
  ".tar",
  ".jar",
  ".war",
  ".whl",
  ".egg",
  ".exe",
  ".dll",
  ".so",
  ".dylib",
  ".o",
  ".a",
  ".lib",
  ".obj",
  ".bin",
  ".class",
  ".pyc",
  ".pyo",
  ".wasm",
  ".node",
  ".mp3",
  ".mp4",
  ".m4a",
  ".wav",
  ".flac",
  ".ogg",
  ".avi",
  ".mov",
  ".mkv",
  ".webm",
  ".ttf",
  ".otf",
  ".woff",
  ".woff2",
  ".eot",
  ".sqlite",
  ".sqlite3",
  ".db",
  ".parquet",
  ".npy",
  ".npz",
  ".pkl",
  ".pickle",
  ".pt",
  ".onnx",
  ".safetensors",
  ".doc",
  ".docx",
  ".xls",
  ".xlsx",
  ".ppt",
  ".pptx",
  ".odt",
  ".ods",
]);

/** The lower-case extension with its dot, or "" when there is none. */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot).toLowerCase();
}

/** True for a NUL byte, or when more than 30 % of the sample are control characters other than tab, LF, CR, FF. */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if ((byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) || byte === 127) control++;
  }
  return control / sample.length > 0.3;
}
