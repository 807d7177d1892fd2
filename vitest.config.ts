import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BackendSummaryReporter } from "./test/helpers/backend-summary.js";
import { TimeSummaryReporter } from "./test/helpers/time-summary.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Most tests wait on processes, not the CPU: vitest's default (one worker
    // fewer than the cores, so one on a 2-core machine) left the CPU mostly
    // idle. As many workers as cores: one more halved a whole run on 2 cores,
    // but its load (averages of 6 to 9) also brought out rare races.
    maxWorkers: Math.max(2, availableParallelism()),
    // Root's login profile on these machines runs `pyenv rehash`, which takes a
    // lock file; a login shell killed mid-rehash (tests kill trees on purpose)
    // leaves it, and every later `bash -l` would wait 60 s for it, so session
    // inits time out. pyenv's own setting bounds that wait.
    env: { PYENV_REHASH_TIMEOUT: process.env.PYENV_REHASH_TIMEOUT ?? "2" },
    // ...and removes a lock left stale, so later login shells do not wait at all.
    globalSetup: ["test/helpers/pyenv-lock.ts"],
    // Vitest's own output, then where the time went (seconds per folder and per compat
    // entry), then one line on which backends ran and how to run the others.
    reporters: ["default", new TimeSummaryReporter(), new BackendSummaryReporter()],
  },
});
