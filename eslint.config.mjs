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
      // A body on its own line is braced; `if (done) return;` may stay on one line.
      curly: ['error', 'multi-line'],
      // Over five parameters: take one object of named dependencies instead.
      'max-params': ['error', 5],
    },
  },
  {
    // A source file over 500 lines does more than one thing: split it by concern.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    rules: { 'max-lines': ['warn', { max: 500 }] },
  },
  {
    // The sandbox portal (sandbox/) is a test double of the vendor's server: it must never leak into the
    // product. Sandbox mode loads it at run time (src/sandbox-mode.ts), so no file of src/ imports it.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/sandbox', '**/sandbox/**'],
              message: 'The product loads the sandbox portal only at run time: use src/sandbox-mode.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // The other way round: the sandbox stands alone, as the vendor's server does, and imports nothing of src/.
    files: ['sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/src', '**/src/**'], message: 'The sandbox portal must not import the bridge.' },
          ],
        },
      ],
    },
  },
  {
    files: ['bench/**/*.ts', 'sandbox/main.ts', 'test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
