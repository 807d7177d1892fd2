// The table the checkpoint benches print: p50, p95, and each p50 against the
// floor measured in the same run (the machine is shared: absolute times drift).

export const pct = (list, p) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * p))];

/** rows: [name, times in ms, the floor's times in ms]. */
export function printFloorTable(rows) {
  console.log("| what | p50 | p95 | p50 vs its floor |");
  console.log("|---|---|---|---|");
  for (const [name, list, floor] of rows)
    console.log(
      `| ${name} | ${pct(list, 0.5).toFixed(1)} ms | ${pct(list, 0.95).toFixed(1)} ms | ${(pct(list, 0.5) / pct(floor, 0.5)).toFixed(2)}x |`,
    );
}

/** One timed round of a checkpoint bench: checkpoint, `change`, rollback to it, release; into times.save and .restore. */
export async function timedRound(env, change, times) {
  let started = performance.now();
  const checkpoint = await env.checkpoint();
  times.save.push(performance.now() - started);
  await change();
  started = performance.now();
  await env.rollback(checkpoint);
  times.restore.push(performance.now() - started);
  await env.releaseCheckpoint(checkpoint);
}
