import { describe, expect, it } from "vitest";
import { extensionOf } from "../../../src/tools/files/file-kinds.js";
import { nameSimilarity, similarNames } from "../../../src/tools/files/similar-names.js";
import { matchFileStyle } from "../../../src/tools/files/atomic-write.js";
import { isDevicePath } from "../../../src/tools/files/read-file.js";

describe("file kinds", () => {
  it("finds extensions", () => {
    expect(extensionOf("/a/b/Photo.JPG")).toBe(".jpg");
    expect(extensionOf("/a/.bashrc")).toBe("");
    expect(extensionOf("/a.b/c")).toBe("");
  });

  it("knows the device paths", () => {
    for (const path of ["/dev/zero", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/2", "/proc/123/fd/1"])
      expect(isDevicePath(path), path).toBe(true);
    for (const path of ["/dev/null2", "/proc/self/fd/3", "/tmp/dev/zero"]) expect(isDevicePath(path), path).toBe(false);
  });
});

describe("similar names", () => {
  it("ranks close names first and drops unrelated ones", () => {
    expect(nameSimilarity("config.yaml", "config.yml")).toBeGreaterThan(0.9);
    expect(similarNames("utils.py", ["util.py", "utils.ts", "main.py", "README.md", "tests.py"])).toEqual([
      "utils.ts",
      "util.py",
    ]);
    expect(
      similarNames(
        "data",
        Array.from({ length: 20 }, (_, i) => `data${i}`),
      ),
    ).toHaveLength(5);
  });
});

describe("matchFileStyle", () => {
  it("keeps CRLF and BOM of the existing file, and leaves content that already has them", () => {
    expect(matchFileStyle("a\nb\n", Buffer.from("\uFEFFx\r\ny\r\n"))).toEqual({
      text: "\uFEFFa\r\nb\r\n",
      crlf: true,
      bom: true,
    });
    expect(matchFileStyle("a\r\nb", Buffer.from("x\r\n"))).toEqual({ text: "a\r\nb", crlf: false, bom: false });
    expect(matchFileStyle("a\nb", Buffer.from("x\ny"))).toEqual({ text: "a\nb", crlf: false, bom: false });
  });
});
