/** Parsing what the background-process poll script prints. */

import { describe, expect, it } from "vitest";
import { parsePollOutput } from "../../../src/tools/process/process-scripts.js";

describe("parsePollOutput", () => {
  it("reads headers and base64 bodies, ignoring stray lines", () => {
    const body = Buffer.from("héllo\n").toString("base64");
    const text = `noise\n__SW_PROC 0 running - 7 0\n${body}\n\n__SW_PROC 1 exited 3 10 10\n\n`;
    const answers = parsePollOutput(text);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatchObject({ index: 0, running: true, exitCode: undefined, size: 7, start: 0 });
    expect(Buffer.from(answers[0]!.data).toString("utf8")).toBe("héllo\n");
    expect(answers[1]).toMatchObject({ index: 1, running: false, exitCode: 3, size: 10, start: 10 });
    expect(answers[1]!.data).toHaveLength(0);
  });
});
