// Lint for the whole repository: typescript-eslint's recommended rules, the type-aware rules that
// catch unhandled promises and non-exhaustive switches, no import cycles between files, and the
// package graph (docs/adr/0041-package-graph.md): a package reaches another only by its name, and
// only a package its own package.json declares.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'api-types/src/**', '.data/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })],
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A switch with a default case handles the rest on purpose.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `_name` marks a value taken out on purpose (a rest sibling, an unused parameter of a signature).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'import-x/no-cycle': 'error',
      'import-x/no-relative-packages': 'error',
      // Checked against the package.json nearest to each file, so each workspace package declares
      // what it imports. Code that ships (src/) uses dependencies only; tests, benchmarks, scripts
      // and the tools' configs may use devDependencies too.
      'import-x/no-extraneous-dependencies': [
        'error',
        { devDependencies: ['**/test/**', 'test-support/**', 'e2e/**', 'bench/**', 'scripts/**', 'shared/tools/**', '**/*.config.ts'], includeTypes: true },
      ],
    },
  },
  {
    // Tests read answers of any shape, as a client that knows no types would.
    files: ['**/test/**/*.ts', 'test-support/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
