// ESLint for every package: @eslint/js recommended everywhere, typescript-eslint's type-aware
// recommended rules on the TypeScript. Run by `npm run lint` (with `prettier --check .`), which
// `npm test` runs first.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    'coverage/',
    '.ordinal/',
    'test/install/fixtures/',
  ]),
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // tsconfig.spec.json includes every .ts file (specs, test support, benches); the
        // per-package tsconfigs leave the specs out, so the project service alone misses them.
        project: './tsconfig.spec.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `const { id: _id, ...rest } = x` is how a copy leaves a field out.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // Passing on a caught error (typed unknown) as a rejection, as only-throw-error allows
      // for a rethrow by default.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // End-to-end specs read wire data: HTTP bodies (`HttpResponse.body`), SSE `data` and
    // `res.json()` are `any` on purpose. Each body is checked against the OpenAPI document at
    // run time (test/support/conformance.ts) and its fields are asserted with `expect`; typing
    // every probe would restate the contract in each spec. Everywhere else these rules hold.
    files: ['**/*.e2e-spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
