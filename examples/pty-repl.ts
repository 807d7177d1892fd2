// An interactive program under a pseudo-terminal: Node's own REPL, typed into and read back.
// Run: node examples/pty-repl.ts
import { createEnvironment, processRegistry } from "shellwright";

const env = await createEnvironment({ backend: "local" });
try {
  const registry = processRegistry(env);
  const repl = await registry.spawn("node -i", { pty: { cols: 80, rows: 24 } });
  await registry.waitFor(repl, /^> $/m, 30_000); // the prompt
  registry.markAction(repl);
  await registry.write(repl, "6 * 7\r"); // Enter on a terminal is \r
  const answer = await registry.waitFor(repl, /^42$/m, 30_000);
  console.log("wait:", answer.status, JSON.stringify(answer.output));
  console.log("screen:\n" + (await registry.screen(repl)).screen.trimEnd());
  await registry.kill(repl); // ends the program's whole terminal session
} finally {
  await env.close();
}
