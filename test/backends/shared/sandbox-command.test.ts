/** The command line of one call in a text-output SDK sandbox (Daytona, E2B), composed as text. */

import { describe, expect, it } from "vitest";
import { sandboxCommand, withStdinFile } from "../../../src/backends/shared/sandbox-command.js";

describe("sandboxCommand", () => {
  it("wraps the whole launch in coreutils timeout, outside the wrapper", () => {
    const command = sandboxCommand(["env", "-i", "bash", "-c", "SCRIPT"], { timeoutSec: 35 });
    expect(command).toBe("timeout -k 5s 35s 'env' '-i' 'bash' '-c' 'SCRIPT' < /dev/null & wait $! 2>/dev/null");
    const withFile = sandboxCommand(["bash", "-c", "S"], { stdinFile: "/tmp/in", removeFirst: ["/tmp/old"] });
    expect(withFile).toBe(
      "rm -f '/tmp/old'; { rm -f '/tmp/in'; exec 'bash' '-c' 'S'; } < '/tmp/in' & wait $! 2>/dev/null",
    );
    // With an output copy: the job writes the file, a tail of it that ends with the job is what the logs get.
    const withCopy = sandboxCommand(["bash", "-c", "S"], { timeoutSec: 9, copy: "/tmp/out" });
    expect(withCopy).toBe(
      ": > '/tmp/out'; timeout -k 5s 9s 'bash' '-c' 'S' < /dev/null > '/tmp/out' & " +
        "__sw_job=$!; tail -s 0.02 -c +1 --pid=$__sw_job -f '/tmp/out' 2>/dev/null & wait $! 2>/dev/null; wait $__sw_job 2>/dev/null",
    );
    // stderr kept apart: a copy of its own, tailed to the logs' stderr beside stdout's; the job's status last.
    const apart = sandboxCommand(["bash", "-c", "S"], {
      stdinFile: "/tmp/in",
      copy: "/tmp/out",
      errCopy: "/tmp/out.err",
    });
    expect(apart).toBe(
      ": > '/tmp/out'; : > '/tmp/out.err'; { rm -f '/tmp/in'; exec 'bash' '-c' 'S' > '/tmp/out' 2> '/tmp/out.err'; } < '/tmp/in' & " +
        "__sw_job=$!; tail -s 0.02 -c +1 --pid=$__sw_job -f '/tmp/out.err' >&2 2>/dev/null & __sw_etail=$!; " +
        "tail -s 0.02 -c +1 --pid=$__sw_job -f '/tmp/out' 2>/dev/null & wait $! 2>/dev/null; wait $__sw_etail 2>/dev/null; wait $__sw_job 2>/dev/null",
    );
  });

  it("reads a short command's stdin from a file it removes, keeping the exit code", () => {
    expect(withStdinFile("'sh' '-c' 'S'", "/tmp/it's in")).toBe(
      "'sh' '-c' 'S' < '/tmp/it'\\''s in'; rc=$?; rm -f '/tmp/it'\\''s in'; exit $rc",
    );
  });
});
