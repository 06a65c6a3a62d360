import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'clients/typescript/dist/',
      'clients/typescript/src/openapi.ts',
      'dashboard/dist/',
      'node_modules/',
      '.test-cache/',
      'data/',
      'scratch/',
      'test-artifacts/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-control-regex': 'off',
    },
  },
  {
    // The dashboard renders API data with DOM APIs only (dashboard/src/dom.ts): no HTML parsing
    // of strings anywhere, so nothing a user typed can become markup.
    files: ['dashboard/src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...[
          'innerHTML',
          'outerHTML',
          'insertAdjacentHTML',
          'srcdoc',
          'createContextualFragment',
          'parseFromString',
        ].map((property) => ({
          property,
          message: 'Build DOM with h() and text nodes (dashboard/src/dom.ts); never parse strings as HTML.',
        })),
        { object: 'document', property: 'write', message: 'Never write HTML strings into the document.' },
        { object: 'document', property: 'writeln', message: 'Never write HTML strings into the document.' },
      ],
      'no-restricted-globals': ['error', { name: 'DOMParser', message: 'Never parse strings as HTML.' }],
      'no-implied-eval': 'error',
      'no-new-func': 'error',
    },
  },
  {
    // CommonJS config files of tools (dependency-cruiser reads .cjs only).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
