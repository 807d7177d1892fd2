// p50 of one `process poll` of a background process against the floor of a
// bare `execute('true')` in the same session, measured in the same run and
// interleaved, so machine noise hits every case alike. After `npm run build`:
//   node bench/process-poll.mjs [iterations]
// Another backend: SHELLWRIGHT_BENCH_CONFIG='{"backend":"docker","image":"shellwright-test:bookworm"}'
// (the createEnvironment config, as JSON).
import { createEnvironment } from "../dist/index.js";
import { callTool } from "../dist/tools/registry.js";

const iterations = Number(process.argv[2] ?? 200);
const config = JSON.parse(process.env.SHELLWRIGHT_BENCH_CONFIG ?? '{"backend":"local"}');
const backend = config.backend ?? "local";

const session = await createEnvironment(config);
const idle = await callTool("terminal", { command: "sleep 600", background: true }, { session });
const chatty = await callTool(
  "terminal",
  { command: "while :; do echo line $RANDOM; sleep 0.005; done", background: true },
  { session },
);

const cases = {
  "execute('true') (floor)": () => session.execute("true"),
  "poll, idle process": () => callTool("process", { action: "poll", session_id: idle.session_id }, { session }),
  "poll, process printing": () => callTool("process", { action: "poll", session_id: chatty.session_id }, { session }),
};
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));

for (let i = 0; i < 20; i++) for (const run of Object.values(cases)) await run();
for (let i = 0; i < iterations; i++) {
  for (const [name, run] of Object.entries(cases)) {
    const start = performance.now();
    await run();
    samples[name].push(performance.now() - start);
  }
}
await session.close();

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const floor = quantile(samples["execute('true') (floor)"], 0.5);
console.log(`backend ${backend}, ${iterations} iterations of each case, interleaved`);
console.log("case                          p50 ms   p90 ms   p50 / floor");
for (const [name, values] of Object.entries(samples)) {
  const p50 = quantile(values, 0.5);
  console.log(
    `${name.padEnd(28)} ${p50.toFixed(2).padStart(7)}  ${quantile(values, 0.9).toFixed(2).padStart(7)}   ${(p50 / floor).toFixed(2)}x`,
  );
}
