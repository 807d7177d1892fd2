// Per-call cost of `commands.run("true")` through the real `e2b` SDK against
// `serve --api e2b` (local backend), beside the same command through the
// `gateway` backend against serve, the same Start through a bare Connect
// client (the SDK's own cost apart: what is left is the server's), a bare
// `bash -c true` spawned by this process (the floor), and the other
// direction: `execute("true")` through the `e2b` backend (a Shellwright
// session in an E2B sandbox, here serve's), with the fast path and without,
// in one run.
//
// Calls alternate (bash, gateway, e2b, …) so the noise of a shared machine
// hits all three alike. Run after `npm run build`: node bench/e2b.mjs [calls]

import { spawn } from "node:child_process";
import { Sandbox } from "e2b";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Process } from "../dist/gateway/e2b/gen/process/process_pb.js";
import { createEnvironment, startGateway } from "../dist/index.js";

const CALLS = Number(process.argv[2] ?? 300);
const WARMUP = 30;
const TOKEN = `bench-${Math.random().toString(16).slice(2)}-token`;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];

async function time(run) {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

const bare = () =>
  new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", "true"], { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });

const gateway = await startGateway({
  token: TOKEN,
  port: 0,
  allowedRoots: ["/"],
  cwd: "/tmp",
  apis: ["e2b", "shellwright"],
  log: () => undefined,
});
const remote = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
const sandbox = await Sandbox.create({ apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url });
const viaGateway = async () => {
  const r = await remote.execute("true");
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
};
const viaE2b = () => sandbox.commands.run("true");
const e2bConfig = { backend: "e2b", apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url };
const backendFast = await createEnvironment(e2bConfig);
const backendPlain = await createEnvironment({ ...e2bConfig, fastPath: false });
const viaBackend = (env) => async () => {
  const r = await env.execute("true");
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
};
// As the SDK sends it (HTTP/1.1, the sandbox's id and access token, bash -l -c), without the SDK around it.
const raw = createClient(
  Process,
  createConnectTransport({
    baseUrl: gateway.url,
    httpVersion: "1.1",
    interceptors: [
      (next) => (req) => {
        req.header.set("e2b-sandbox-id", sandbox.sandboxId);
        req.header.set("x-access-token", sandbox.envdAccessToken);
        return next(req);
      },
    ],
  }),
);
const viaConnect = async () => {
  let end;
  for await (const response of raw.start({ process: { cmd: "/bin/bash", args: ["-l", "-c", "true"], envs: {} } }))
    if (response.event?.event.case === "end") end = response.event.event.value;
  if (end?.exitCode !== 0) throw new Error(`end ${JSON.stringify(end)}`);
};

for (let i = 0; i < WARMUP; i++) {
  await bare();
  await viaGateway();
  await viaE2b();
  await viaConnect();
  await viaBackend(backendFast)();
  await viaBackend(backendPlain)();
}
const b = [];
const bf = [];
const bp = [];
const g = [];
const e = [];
const c = [];
for (let i = 0; i < CALLS; i++) {
  b.push(await time(bare));
  g.push(await time(viaGateway));
  e.push(await time(viaE2b));
  c.push(await time(viaConnect));
  bf.push(await time(viaBackend(backendFast)));
  bp.push(await time(viaBackend(backendPlain)));
}
await backendFast.close();
await backendPlain.close();
await sandbox.kill();
await remote.close();
await gateway.close();

const f = (ms) => `${ms.toFixed(2)} ms`;
const floor = median(b);
console.log(`e2b: ${CALLS} alternating calls of "true", clients and serve in one process, loopback HTTP`);
console.log(`  bash -c true             p50 ${f(floor)}  p90 ${f(p90(b))}   (floor)`);
console.log(
  `  gateway backend          p50 ${f(median(g))}  p90 ${f(p90(g))}   ratio ${(median(g) / floor).toFixed(2)}x`,
);
console.log(
  `  e2b SDK commands.run     p50 ${f(median(e))}  p90 ${f(p90(e))}   ratio ${(median(e) / floor).toFixed(2)}x`,
);
console.log(
  `  bare Connect Start       p50 ${f(median(c))}  p90 ${f(p90(c))}   ratio ${(median(c) / floor).toFixed(2)}x`,
);
console.log(`  e2b vs gateway backend   ${(median(e) / median(g)).toFixed(2)}x`);
console.log(
  `  e2b backend (fast path)  p50 ${f(median(bf))}  p90 ${f(p90(bf))}   ratio ${(median(bf) / floor).toFixed(2)}x`,
);
console.log(
  `  e2b backend (plain)      p50 ${f(median(bp))}  p90 ${f(p90(bp))}   ratio ${(median(bp) / floor).toFixed(2)}x`,
);
