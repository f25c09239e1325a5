// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'eslint.config.mjs'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // The sandbox portal is a test double of the vendor's server: it must never leak into the product.
    files: ['src/**/*.ts'],
    ignores: ['src/sandbox/**', 'src/app.module.ts', 'src/main.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/sandbox/**', '../sandbox', './sandbox'], message: 'Only app wiring may import the sandbox portal.' }] }],
    },
  },
  {
    files: ['bench/**/*.ts', 'src/sandbox/main.ts', 'test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
