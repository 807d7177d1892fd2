import { defineConfig } from "vitest/config";
import { BackendSummaryReporter } from "./test/helpers/backend-summary.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Vitest's own output, then one line on which backends ran and how to run the others.
    reporters: ["default", new BackendSummaryReporter()],
  },
});
