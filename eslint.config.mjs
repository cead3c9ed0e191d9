// Type-aware lint: floating promises are bugs here (a lost renewal is a lost lock), and adapters
// may use only core's public API, never another adapter or core's internals.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.testenv/**', 'coverage/**', '**/*.mjs', '**/*.js', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./packages/*/tsconfig.json', './examples/*/tsconfig.json', './tsconfig.tests.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['packages/adapter-*/src/**/*.ts', 'packages/cql-proxy/src/**/*.ts', 'examples/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@muster/core/src/*', '@muster/core/dist/*', '**/core/src/*'], message: 'use @muster/core (its public API) only' },
            { group: ['@muster/adapter-*', '**/adapter-*/src/*'], message: 'adapters never import each other' },
          ],
        },
      ],
    },
  },
);
