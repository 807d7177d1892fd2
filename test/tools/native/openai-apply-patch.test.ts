/**
 * OpenAI's `apply_patch` tool on a local session: the three operations and a
 * move, line endings and a byte-order mark kept, and every refusal leaving
 * the files as they were (an existing file for create_file, a missing one, a
 * protected path, a diff that does not apply, a file that is not text).
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { createApplyPatchTool, openaiApplyPatchTool } from "../../../src/tools/native/openai-apply-patch.js";
import { callTool } from "../../../src/tools/registry.js";
import type { ToolDefinition, ToolResult } from "../../../src/tools/shared/tool-definition.js";

describe("apply_patch (OpenAI)", () => {
  let session: Environment;
  let dir: string;
  const patch = (args: unknown, tool: ToolDefinition = openaiApplyPatchTool as ToolDefinition): Promise<ToolResult> =>
    callTool(tool, args, { session });
  const read = async (name: string) => (await session.execute(`od -c ${dir}/${name} | head -20`)).output;
  const cat = async (name: string) => (await session.execute(`cat ${dir}/${name}`)).output;

  beforeAll(async () => {
    session = await createEnvironment({ backend: "local", cwd: "/tmp" });
    dir = (await session.execute("mktemp -d")).output.trim();
    await session.execute(`cd ${dir}`);
  });
  afterAll(async () => {
    await session.execute(`rm -rf ${dir}`);
    await session.close();
  });

  it("creates, updates, moves and deletes", async () => {
    expect(await patch({ type: "create_file", path: "src/lib.py", diff: "+def f():\n+    return 1\n+" })).toEqual({
      status: "completed",
      output: "Created src/lib.py",
    });
    expect(await cat("src/lib.py")).toBe("def f():\n    return 1\n");
    expect(
      await patch({ type: "update_file", path: "src/lib.py", diff: "@@ def f():\n-    return 1\n+    return 2\n" }),
    ).toEqual({ status: "completed", output: "Updated src/lib.py" });
    expect(
      await patch({
        type: "update_file",
        path: "src/lib.py",
        move_to: "pkg/lib.py",
        diff: "@@\n def f():\n-    return 2\n+    return 3\n",
      }),
    ).toEqual({ status: "completed", output: "Updated src/lib.py and moved it to pkg/lib.py" });
    expect(await cat("pkg/lib.py")).toBe("def f():\n    return 3\n");
    expect((await session.execute(`test -e ${dir}/src/lib.py || echo moved`)).output).toBe("moved\n");
    expect(await patch({ type: "delete_file", path: "pkg/lib.py" })).toEqual({
      status: "completed",
      output: "Deleted pkg/lib.py",
    });
  });

  it("keeps CRLF line endings and a byte-order mark", async () => {
    await session.execute(`printf '\\357\\273\\277one\\r\\ntwo\\r\\n' > ${dir}/win.txt`);
    expect(await patch({ type: "update_file", path: "win.txt", diff: "@@\n one\n-two\n+2\n" })).toMatchObject({
      status: "completed",
    });
    expect(await read("win.txt")).toContain("357 273 277   o   n   e  \\r  \\n   2  \\r  \\n");
  });

  it("refuses, changing nothing: an existing file to create, a missing one, a bad diff, a protected path", async () => {
    await session.execute(`printf 'keep\\n' > ${dir}/k.txt`);
    const failed = (output: string | RegExp) => ({
      status: "failed",
      output: expect.stringMatching(output),
      error: expect.any(String),
    });
    expect(await patch({ type: "create_file", path: "k.txt", diff: "+other" })).toEqual(
      failed(
        "k.txt already exists; create_file does not replace a file: change it with update_file, or delete it first. Nothing was changed.",
      ),
    );
    expect(await patch({ type: "update_file", path: "absent.txt", diff: "@@\n-a\n+b\n" })).toEqual(
      failed("File not found: absent.txt. Nothing was changed."),
    );
    expect(await patch({ type: "update_file", path: "k.txt", diff: "@@\n keep\n" })).toEqual(
      failed("Invalid diff for update_file k.txt: the diff has no changes. Nothing was changed."),
    );
    expect(await patch({ type: "create_file", path: "n.txt", diff: "no plus" })).toEqual(
      failed(/^Invalid diff for create_file n\.txt: line 1: every line of a create_file diff starts with \+/),
    );
    expect(await patch({ type: "delete_file", path: "absent.txt" })).toEqual(
      failed("File not found: absent.txt. Nothing was changed."),
    );
    expect(await patch({ type: "delete_file", path: dir })).toEqual(failed(/ is not a regular file\. Nothing/));
    expect(await patch({ type: "create_file", path: "~/.bashrc.d/../.bashrc", diff: "+x" })).toEqual(
      failed(/^Write denied: '.*\/\.bashrc' is a protected system\/credential file/),
    );
    expect(await patch({ type: "update_file", path: "k.txt" })).toEqual(failed("update_file needs a diff."));
    expect(await patch({ type: "delete_file", path: "k.txt", diff: "-keep" })).toEqual(
      failed("delete_file takes no diff."),
    );
    expect(await patch({ type: "create_file", path: "m.txt", diff: "+x", move_to: "y" })).toEqual(
      failed("move_to is for update_file only."),
    );
    await session.execute(`printf '\\377\\376binary\\n' > ${dir}/bin.dat`);
    expect(await patch({ type: "update_file", path: "bin.dat", diff: "@@\n-binary\n+text\n" })).toEqual(
      failed(/^'bin\.dat' is not UTF-8 text/),
    );
    expect(await cat("k.txt")).toBe("keep\n");
    expect((await session.execute(`cd ${dir} && find . -type f | sort`)).output).toBe(
      "./bin.dat\n./k.txt\n./win.txt\n",
    );
  });

  it("confines writes to safeRoot when given one", async () => {
    const confined = createApplyPatchTool({ safeRoot: `${dir}/inside` }) as ToolDefinition;
    expect(await patch({ type: "create_file", path: "outside.txt", diff: "+x" }, confined)).toMatchObject({
      status: "failed",
      output: expect.stringMatching(/is outside the allowed directory/),
    });
    expect(await patch({ type: "create_file", path: "inside/ok.txt", diff: "+x" }, confined)).toMatchObject({
      status: "completed",
    });
  });
});
