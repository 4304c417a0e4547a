// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'reports/**', 'coverage/**', 'dist/**'] },
  js.configs.recommended,
  { languageOptions: { globals: globals.node } },
  ...tseslint.configs.recommended,
  {
    rules: {
      // CONVENTIONS.md: function declarations over arrow constants, unions over enums.
      'func-style': ['error', 'declaration', { allowArrowFunctions: false }],
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use a union of string literals.' }],
      // Only engine/cli decides exit codes.
      'no-restricted-properties': ['error', { object: 'process', property: 'exit', message: 'Only engine/cli/main.ts exits.' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['engine/cli/main.ts', 'bin/**', 'bench/**', 'scripts/**', 'examples/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
