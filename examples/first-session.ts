// A first session: one shell whose cwd and variables carry over from call to call.
// Run: node examples/first-session.ts (Node 22.18+; see examples/README.md for older Node)
import { createEnvironment } from "shellwright";

const env = await createEnvironment({ backend: "local" });
try {
  await env.execute("cd /tmp && export GREETING=hello");
  const hello = await env.execute('echo "$GREETING from $(pwd)"');
  console.log(hello.output.trim(), `(exit ${hello.exitCode}, ${hello.durationMs} ms)`);

  // Exact bytes on stdin; a non-zero exit is a result, not an error.
  const counted = await env.execute("wc -c", { stdin: "twelve bytes" });
  console.log("wc -c read", counted.output.trim(), "bytes");
  const failed = await env.execute("ls /no/such/dir");
  console.log("ls failed with exit code", failed.exitCode);

  // A timeout kills the command's whole process tree; the session stays usable.
  const slow = await env.execute("sleep 60", { timeoutMs: 500 });
  console.log("timed out:", slow.timedOut, "exit code", slow.exitCode);
  console.log("still in", (await env.execute("pwd")).output.trim());
} finally {
  await env.close(); // background jobs end with the session
}
