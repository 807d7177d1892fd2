#!/usr/bin/env node
// A mix of twelve agent-style commands (issue 25's "command mix"), some of them
// changing the session's state, each run on a local session (fast path) and as a
// bare spawn('bash', ['-c', command]) of the same command, interleaved command by
// command (this machine is shared; absolute times drift, the ratios are the figures):
//   the mix, sum of per-command p50s, session vs bare bash -c        target <= 0.7x
//   the state-changing commands alone (cd, export, alias, function, shopt)
// A bare bash -c keeps no state, so its state-changing commands change nothing: the
// floor is what a stateless shell pays to run the same text.
//   npm run build && node bench/command-mix.mjs
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEnvironment } from "../dist/index.js";

const N = Number(process.env.N ?? 60);
const now = () => performance.now();
const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const dir = mkdtempSync(join(tmpdir(), "sw-mix-"));
writeFileSync(join(dir, "notes.txt"), Array.from({ length: 200 }, (_, i) => `line ${i} TODO item ${i % 7}`).join("\n"));
writeFileSync(join(dir, "app.py"), "def main():\n    print('hi')\n\nif __name__ == '__main__':\n    main()\n");

/** [label, command, changes state] */
const MIX = [
  ["cd", `cd ${dir}`, true],
  ["ls", `ls -la ${dir}`, false],
  ["cat", `cat ${dir}/app.py`, false],
  ["grep", `grep -n TODO ${dir}/notes.txt | head -20`, false],
  ["export", "export MIX_MODE=test MIX_LEVEL=3", true],
  ["echo var", 'echo "$MIX_MODE/${MIX_LEVEL:-none}"', false],
  ["wc", `wc -l ${dir}/notes.txt`, false],
  ["alias", "alias ll='ls -l'", true],
  ["function", 'mix_fn() { echo "fn $1"; }', true],
  ["sed", `sed -n '5,9p' ${dir}/notes.txt`, false],
  ["find", `find ${dir} -name '*.py'`, false],
  ["shopt", "shopt -s globstar", true],
];

function bare(command) {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", resolve);
  });
}

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`command mix, ${N} rounds; load average at start ${load()}`);
const env = await createEnvironment({ backend: "local", cwd: dir });
const session = MIX.map(() => []);
const floor = MIX.map(() => []);
for (let round = 0; round < N + 3; round++) {
  for (const [i, [, command]] of MIX.entries()) {
    let a = now();
    const result = await env.execute(command);
    const s = now() - a;
    if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode}: ${result.output}`);
    a = now();
    await bare(command);
    const f = now() - a;
    if (round < 3) continue;
    session[i].push(s);
    floor[i].push(f);
  }
}
await env.close();
rmSync(dir, { recursive: true, force: true });

const rows = MIX.map(([label, , changes], i) => ({
  label,
  changes,
  session: p50(session[i]),
  floor: p50(floor[i]),
}));
const sum = (list, key) => list.reduce((total, row) => total + row[key], 0);
const state = rows.filter((row) => row.changes);
console.log("| command | state | session p50 | bare bash -c p50 | ratio |");
console.log("|---|---|---|---|---|");
for (const row of rows) {
  console.log(
    `| ${row.label} | ${row.changes ? "yes" : ""} | ${round(row.session)} ms | ${round(row.floor)} ms | ${round(row.session / row.floor)}x |`,
  );
}
console.log(
  JSON.stringify({
    mix_vs_bare: round(sum(rows, "session") / sum(rows, "floor")),
    state_changing_vs_bare: round(sum(state, "session") / sum(state, "floor")),
    load_at_end: load(),
  }),
);
