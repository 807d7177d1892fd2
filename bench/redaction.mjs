// Secret redaction on a large output: the terminal tool on 135 MB of output
// with redactSecrets on, against the same call with it off (the floor),
// interleaved in the same run so that machine noise hits both alike. The
// session keeps only a bounded head + tail (and the tool a bounded capture),
// so redaction runs on the kept text, never on the stream. Also times one
// Redactor.redact() over the tool's largest kept text (10 MB). After
// `npm run build`:
//   node bench/redaction.mjs [rounds]
import { createEnvironment } from "../dist/index.js";
import { Redactor } from "../dist/core/redact.js";
import { callTool } from "../dist/tools/registry.js";
import { toolSettings } from "../dist/tools/shared/tool-settings.js";

const rounds = Number(process.argv[2] ?? 5);
const BIG_BYTES = 135_000_000;
const TOKEN = "tok-9f8e7d6c5b4a3210-zyx";
const session = await createEnvironment({
  env: { API_TOKEN: TOKEN, DB_PASSWORD: "correct-horse-battery" },
  secrets: ["listed-secret-value-42"],
});
// Log-like lines, with a masked value now and then, so every rule has work to do.
const command =
  `{ printf 'key %s\\n' "$API_TOKEN"; yes '2026-12-01T06:00:00Z INFO worker-3 handled request id=5f2a status=200 bytes=5120 sk-not'; }` +
  ` | head -c ${BIG_BYTES}`;

const cases = {
  "terminal, redactSecrets off (floor)": toolSettings({ redactSecrets: false }),
  "terminal, redactSecrets on": toolSettings({}),
};
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
let shown = "";
for (let i = 0; i < rounds + 1; i++) {
  for (const [name, settings] of Object.entries(cases)) {
    const start = performance.now();
    const result = await callTool("terminal", { command }, { session, settings });
    const ms = performance.now() - start;
    if (i > 0) samples[name].push(ms); // the first round warms up
    if (settings.redactSecrets) shown = result.output;
  }
}
if (shown.includes(TOKEN) || !shown.includes("[REDACTED]")) throw new Error("the secret was not masked");

const text =
  `key ${TOKEN}\n` +
  "2026-12-01T06:00:00Z INFO worker-3 handled request id=5f2a status=200 bytes=5120 sk-not\n".repeat(110_000);
const redactor = new Redactor(session.secretValues);
const direct = [];
for (let i = 0; i < rounds + 1; i++) {
  const start = performance.now();
  redactor.redact(text);
  if (i > 0) direct.push(performance.now() - start);
}
await session.close();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const floor = median(samples["terminal, redactSecrets off (floor)"]);
console.log(`local backend, ${BIG_BYTES} bytes of output, median of ${rounds} interleaved rounds`);
console.log("case                                   median ms   vs floor");
for (const [name, values] of Object.entries(samples)) {
  const ms = median(values);
  console.log(`${name.padEnd(38)} ${ms.toFixed(1).padStart(9)}   ${(ms / floor).toFixed(3)}x`);
}
console.log(
  `Redactor.redact() alone on ${(text.length / 1e6).toFixed(1)} M characters: ${median(direct).toFixed(1)} ms (${((median(direct) / floor) * 100).toFixed(1)} % of the floor)`,
);
