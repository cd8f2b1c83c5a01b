// ESLint flat config: eslint's and typescript-eslint's recommended rules over
// src/, test/, bench/ and examples/, plus the project's own few. Layer rules
// live in .dependency-cruiser.cjs (npm run lint:layers).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', '.scratch/**', 'node_modules/**', '**/node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // Unused names are the compiler's job (noUnusedLocals, noUnusedParameters).
      '@typescript-eslint/no-unused-vars': 'off',
      '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSAsExpression > TSNeverKeyword',
          message: '`as never` hides a type: name the type instead.',
        },
      ],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Every failure in the library goes through the catalogue (src/errors.ts),
    // which owns codes and wording; const objects replace TS enums.
    files: ['src/**/*.ts'],
    ignores: ['src/errors.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSAsExpression > TSNeverKeyword',
          message: '`as never` hides a type: name the type instead.',
        },
        {
          selector: 'NewExpression[callee.name=/^(Error|RangeError|TypeError|SyntaxError)$/]',
          message: 'Throw an S2SPError from the catalogue (src/errors.ts) instead.',
        },
        {
          selector: 'TSEnumDeclaration',
          message: 'Use a const object and its derived union type instead of a TS enum.',
        },
      ],
    },
  },
  {
    // Tests read JSON answers loosely and assert on them.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Benchmarks drop big values (`x = undefined`) so a measured GC can free them.
    files: ['bench/**/*.ts'],
    rules: { 'no-useless-assignment': 'off' },
  },
  {
    // Plain Node scripts that run before (or without) the TypeScript build.
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly' } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
