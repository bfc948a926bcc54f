// @ts-check
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['lib/**', 'cli/lib/**', 'docs/**', 'coverage/**', 'node_modules/**', '.scratch*/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error'
    }
  },
  {
    files: ['demo/**', 'bench/**', 'scripts/**'],
    rules: { 'no-console': 'off' }
  }
)
