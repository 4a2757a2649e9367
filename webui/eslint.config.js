import { readdirSync } from "node:fs";
import js from "@eslint/js";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

// Imports flow one way: shared code (api/, components/, lib/) <- features/<one>/ <- app/.
// A feature uses shared code and its own files, never another feature: what two features
// share (the search state, for one) belongs to lib/, and app/ wires the features together.
const features = readdirSync(new URL("./src/features", import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const layering = [
  ...features.map((feature) => ({
    target: `./src/features/${feature}`,
    from: "./src/features",
    except: [`./${feature}`],
    message: `features/${feature} may not import another feature: move what they share to lib/ (or components/), or wire them in app/.`,
  })),
  {
    target: "./src/features",
    from: "./src/app",
    message: "A feature may not import the app: the app passes what a feature needs as props.",
  },
  {
    target: ["./src/api", "./src/components", "./src/lib"],
    from: ["./src/features", "./src/app"],
    message: "Shared code may not import a feature or the app.",
  },
];

// Tests name what they look for exactly, so a name that carries more (a drawn "▾ model", a
// count run into "Cart 2") fails them. Playwright matches a string name as a case-insensitive
// substring unless `exact: true`; a RegExp must be anchored at both ends (Testing Library's
// string names are exact already).
const ANCHORED = "/^\\^.*\\$$/";
const BY_ROLE = "/^(get|getAll|query|queryAll|find|findAll)ByRole$/";
const BY_LABEL = "/^(getByLabel|(get|getAll|query|queryAll|find|findAll)ByLabelText)$/";
const unanchoredNames = [
  {
    selector: `CallExpression[callee.property.name=${BY_ROLE}] > ObjectExpression > Property[key.name="name"][value.regex]:not([value.regex.pattern=${ANCHORED}])`,
    message: "Anchor the name's RegExp at both ends (^...$): a name with more in it must not pass.",
  },
  {
    selector: `CallExpression[callee.property.name=${BY_LABEL}] > Literal.arguments[regex]:not([regex.pattern=${ANCHORED}])`,
    message: "Anchor the label's RegExp at both ends (^...$): a label with more in it must not pass.",
  },
];
const substringNames = [
  {
    selector: `CallExpression[callee.property.name="getByRole"] > ObjectExpression:not(:has(Property[key.name="exact"])) > Property[key.name="name"]:not([value.regex])`,
    message: "Playwright matches a string name as a substring, any case: add `exact: true`.",
  },
  {
    selector: `CallExpression[callee.property.name="getByLabel"][arguments.length=1] > Literal.arguments:not([regex])`,
    message: "Playwright matches a string label as a substring, any case: add `{ exact: true }`.",
  },
];

export default tseslint.config(
  { ignores: ["dist", "test-results", "playwright-report", "src/api/generated"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: { "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }] },
  },
  {
    files: ["src/**/*.{ts,tsx}"],
    languageOptions: { globals: globals.browser },
    plugins: { "react-hooks": reactHooks, "import-x": importX },
    settings: {
      // resolves "@/..." (tsconfig paths) and relative imports to files, so both are checked
      "import-x/resolver-next": [
        createNodeResolver({
          extensions: [".ts", ".tsx", ".js", ".json"],
          tsconfig: { configFile: new URL("./tsconfig.app.json", import.meta.url).pathname },
        }),
      ],
    },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "warn",
      "import-x/no-restricted-paths": ["error", { zones: layering }],
      "import-x/no-unresolved": "error",
    },
  },
  {
    files: ["e2e/**/*.ts", "scripts/**/*.mjs", "*.config.{ts,js}"],
    languageOptions: { globals: globals.node },
    rules: { "no-empty-pattern": "off" }, // Playwright fixtures take `{}`
  },
  {
    files: ["src/**/*.test.{ts,tsx}"],
    rules: { "no-restricted-syntax": ["error", ...unanchoredNames] },
  },
  {
    files: ["e2e/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", ...unanchoredNames, ...substringNames] },
  },
);
