// Runs every benchmark in bench/ (each is standalone), one after another.
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";

const dir = `${import.meta.dirname}/`;
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".mjs") && f !== "run.mjs").sort()) {
  console.log(`\n== bench/${file}`);
  const { status } = spawnSync(process.execPath, [`${dir}${file}`], { stdio: "inherit" });
  if (status !== 0) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;
