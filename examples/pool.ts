// A warm pool: sessions opened ahead, in the background; each acquire() hands out a fresh one.
// Run: node examples/pool.ts
import { createEnvironmentPool } from "shellwright";

const pool = await createEnvironmentPool({ backend: "local" }, { size: 2 });
try {
  await pool.ready(); // both members opened (a server would not wait: acquire() opens one if none is idle)
  const jobs = ["first", "second", "third"].map(async (name) => {
    const env = await pool.acquire();
    try {
      await env.execute(`export JOB=${name}`);
      // Fresh: nothing of an earlier session's state is visible in it.
      return (await env.execute('echo "$JOB saw ${LEFT_BEHIND:-nothing}"; export LEFT_BEHIND=$JOB')).output.trim();
    } finally {
      await env.close(); // ended, never reused; the pool opens a replacement
    }
  });
  for (const line of await Promise.all(jobs)) console.log(line);
  console.log("stats:", JSON.stringify(pool.stats()));
} finally {
  await pool.close();
}
