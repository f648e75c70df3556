// The linter of lib/, bin/, bench/ and test/ (the first step of `npm test`). A subset of what aws-cdk's own rules
// hold its code to: no unused names, const where nothing reassigns, strict equality, one import per module, and the
// layout rules (lines of at most 150 characters, strings, comments and patterns aside; no trailing spaces; no runs of
// empty lines; a newline at the end of each file). No rule needs type information, so the step takes seconds.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'cdk.out/**', '.lab-cache/**', '.jsii', '**/*.d.ts', '**/*.js', '**/*.mjs'] },
  {
    files: ['lib/**/*.ts', 'bin/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      'max-len': ['error', {
        code: 150, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreComments: true, ignoreRegExpLiterals: true, ignoreUrls: true,
      }],
      'no-trailing-spaces': 'error',
      'no-multiple-empty-lines': ['error', { max: 1, maxBOF: 0, maxEOF: 0 }],
      'eol-last': 'error',
      'no-duplicate-imports': 'error',
      'eqeqeq': ['error', 'always', { null: 'ignore' }],
      'prefer-const': 'error',
      'no-var': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Tests and the harness read templates and JSON whose shape is not typed.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
