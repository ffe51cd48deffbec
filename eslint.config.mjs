import js from '@eslint/js';
import { getStaticValue } from '@eslint-community/eslint-utils';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

// The regexp rules read a pattern only when it is known without running the program; one
// put together at run time would pass unchecked. So in the services (not in tests, whose
// patterns escape values the tests made) every RegExp is built from constants.
const staticRegexp = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { dynamic: 'Build this RegExp from constants only, so the checks for super-linear backtracking can read it.' },
  },
  create(context) {
    const check = (node) => {
      if (node.callee.type !== 'Identifier' || node.callee.name !== 'RegExp') return;
      const scope = context.sourceCode.getScope(node);
      if (!node.arguments.length || node.arguments.some((arg) => getStaticValue(arg, scope) === null)) context.report({ node, messageId: 'dynamic' });
    };
    return { NewExpression: check, CallExpression: check };
  },
};

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'outbox/**', 'test-artifacts/**', '.stryker-tmp*/**', 'reports/**', 'services/dashboard/src/api/schema.gen.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Every regular expression runs in linear time: one that can backtrack super-linearly
    // lets a few hundred characters of someone's text hold a process's core. Patterns built
    // with new RegExp from constants are read too. Moves are reported also where they depend
    // on how the pattern is used (partial patterns, sticky ones).
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs', '**/*.cjs'],
    plugins: { regexp, local: { rules: { 'static-regexp': staticRegexp } } },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignoreSticky: false, ignorePartial: false }],
    },
  },
  {
    files: ['services/**/*.ts', 'services/**/*.tsx', 'shared/**/*.ts', 'bench/**/*.ts'],
    rules: { 'local/static-regexp': 'error' },
  },
  {
    // One way to answer an error: handlers throw AppError and http/errors.ts answers it (JSON
    // or the page, no-store, the documented shape). A handler writing its own 4xx or 5xx would
    // answer in a shape of its own.
    files: ['services/gateway/**/*.ts'],
    ignores: ['services/gateway/http/errors.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name=/^(status|writeHead)$/][arguments.0.type='Literal'][arguments.0.value>=400]",
          message: 'Throw an AppError (shared/errors/app-error.ts): services/gateway/http/errors.ts answers every error.',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The dashboard's build script runs in Node.
    files: ['services/dashboard/*.mjs'],
    languageOptions: { globals: { process: 'readonly' } },
  },
);
