// The linter and formatter of lib/, bin/, bench/ and test/ (the first step of `npm test`; `npx eslint --fix lib bin
// bench test` rewrites what it can). A subset of what aws-cdk's own rules hold its code to:
// - names: no unused names, const where nothing reassigns, strict equality;
// - imports: one import per module, in order (node's built-ins, then packages, then the project's own modules, each
//   group alphabetized);
// - classes: members in one order (static fields and methods, then instance fields, the constructor, then methods);
// - layout (@stylistic, the formatter): two-space indents, single quotes, semicolons, trailing commas on multi-line
//   lists, spacing around braces, keys and operators, lines of at most 150 characters (strings, comments and patterns
//   aside), no trailing spaces, no runs of empty lines, a newline at the end of each file.
// No rule needs type information, so the step takes seconds.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'cdk.out/**', '.lab-cache/**', '.jsii', '**/*.d.ts', '**/*.js', '**/*.mjs'] },
  {
    files: ['lib/**/*.ts', 'bin/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    plugins: { '@stylistic': stylistic, 'import-x': importX },
    rules: {
      // Names.
      'eqeqeq': ['error', 'always', { null: 'ignore' }],
      'prefer-const': 'error',
      'no-var': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Tests and the harness read templates and JSON whose shape is not typed.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',

      // Imports.
      'no-duplicate-imports': 'error',
      'import-x/order': ['error', {
        'groups': ['builtin', 'external', ['parent', 'sibling', 'index']],
        'newlines-between': 'never',
        'alphabetize': { order: 'asc', caseInsensitive: true },
      }],

      // Classes.
      '@typescript-eslint/member-ordering': ['error', {
        default: [
          'public-static-field', 'protected-static-field', 'private-static-field',
          'public-static-method', 'protected-static-method', 'private-static-method',
          'field', 'constructor', 'method',
        ],
      }],

      // Layout.
      '@stylistic/max-len': ['error', {
        code: 150, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreComments: true, ignoreRegExpLiterals: true, ignoreUrls: true,
      }],
      '@stylistic/indent': ['error', 2, { SwitchCase: 1 }],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/member-delimiter-style': 'error',
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/comma-spacing': 'error',
      '@stylistic/key-spacing': 'error',
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/space-before-blocks': 'error',
      '@stylistic/object-curly-spacing': ['error', 'always'],
      '@stylistic/array-bracket-spacing': ['error', 'never'],
      '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
      '@stylistic/no-multi-spaces': ['error', { ignoreEOLComments: true }],
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxBOF: 0, maxEOF: 0 }],
      '@stylistic/eol-last': 'error',
    },
  },
);
