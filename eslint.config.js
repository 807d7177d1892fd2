import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "test/vendor/"] },
  js.configs.recommended,
  // The session bench (as on main) uses timers; main lints .mjs with all Node globals.
  { files: ["bench/run.mjs"], languageOptions: { globals: { setInterval: "readonly", clearInterval: "readonly" } } },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  // The backend boundary: outside src/backends/, a backend is reached through src/backends/index.ts (its record in
  // the one table) or the Environment contract in src/core/, never through its own folder or backends/shared/.
  // The package's entry (src/index.ts) re-exports the backends' public config types.
  {
    files: ["src/**/*.ts"],
    ignores: ["src/backends/**", "src/index.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/backends/*/**"],
              message: "Reach a backend through src/backends/index.ts (its record) or the Environment contract.",
            },
          ],
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportExpression[source.value=/backends\\/[^/]+\\//]",
          message: "Reach a backend through src/backends/index.ts (its record) or the Environment contract.",
        },
      ],
    },
  },
  // The tools know only the Environment contract (docs/architecture.md): nothing of backends/, not even its table.
  {
    files: ["src/tools/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/backends/**", "**/backends"],
              message: "Tools reach a session only through the Environment contract (src/core/environment.ts).",
            },
          ],
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportExpression[source.value=/backends(\\/|$)/]",
          message: "Tools reach a session only through the Environment contract (src/core/environment.ts).",
        },
      ],
    },
  },
  // The other way round: a backend's folder and backends/shared/ build on core/, sync/ and http/ only, never on what
  // uses them (cli/, tools/, pool/, gateway/, the adapters, the package entry): those reach a backend through its
  // record. A specifier is matched as written, so each depth below src/ gets the `../` count that reaches src/ from
  // there (`../gateway/` from src/backends/shared/ is the gateway backend, not the gateway server).
  ...[2, 3, 4].map((depth) => {
    const outside = `^(\\.\\./){${depth}}(?!(core|sync|http|backends)/)`;
    const message =
      "A backend builds on core/, sync/ and http/ only; cli/, tools/, pool/ and gateway/ reach it through its record.";
    return {
      files: [`src/backends/${"*/".repeat(depth - 1)}*.ts`],
      rules: {
        "no-restricted-imports": ["error", { patterns: [{ regex: outside, message }] }],
        "no-restricted-syntax": [
          "error",
          { selector: `ImportExpression[source.value=/${outside.replaceAll("/", "\\/")}/]`, message },
        ],
      },
    };
  }),
  // Small files, one concept each: no file in src/ over 400 lines, counted as `wc -l` counts them.
  {
    files: ["src/**/*.ts"],
    rules: { "max-lines": ["error", { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: globals.node },
  },
);
