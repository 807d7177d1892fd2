// A sandboxed run (Linux with bubblewrap): the cwd writable, the rest read-only, no network.
// Run: node examples/sandboxed-run.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEnvironment } from "shellwright";

const project = mkdtempSync(join(tmpdir(), "sandbox-example-"));
const env = await createEnvironment({ backend: "local", cwd: project, sandbox: true });
try {
  const inside = await env.execute("echo built > out.txt && cat out.txt");
  console.log("in the cwd:", inside.output.trim(), `(exit ${inside.exitCode})`);
  const outside = await env.execute("echo x > /etc/sandbox-example");
  console.log("outside it:", outside.output.trim(), `(exit ${outside.exitCode})`);
  const home = await env.execute("ls ~/.ssh 2>&1 | head -1");
  console.log("~/.ssh:", home.output.trim() || "(empty)");
} finally {
  await env.close();
  rmSync(project, { recursive: true, force: true });
}
