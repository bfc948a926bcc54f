/**
 * Type-checks and runs every ```ts block of README.md and of the guides in docs/ (the generated docs/modules are
 * covered by docs-ts). Each block is a complete program; imports of 'fp-ts-retry' are pointed at src/.
 * Exits non-zero, naming the file and block, when one fails to compile or to run.
 */
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'

const root = process.cwd()
const outDir = path.join(root, 'docs', 'examples-guides')
const sources = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`)
]

interface Snippet {
  readonly name: string
  readonly origin: string
  readonly code: string
}

const snippets: Array<Snippet> = sources.flatMap((source) => {
  const text = fs.readFileSync(path.join(root, source), 'utf8')
  // A block may be indented (inside a list item): the indentation of its fence is removed from each line.
  const blocks = [...text.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)]
  return blocks.map((match, i) => {
    const line = text.slice(0, match.index).split('\n').length
    const code = match[2].replace(new RegExp(`^${match[1]}`, 'gm'), '')
    return {
      name: `${source.replace(/[/.]/g, '-')}-${i}.ts`,
      origin: `${source}:${line}`,
      code: code.replace(
        /from 'fp-ts-retry(\/(\w+))?'/g,
        (_, __, module: string | undefined) => `from '../../src/${module ?? 'index'}'`
      )
    }
  })
})

fs.rmSync(outDir, { recursive: true, force: true })
fs.mkdirSync(outDir, { recursive: true })
for (const s of snippets) fs.writeFileSync(path.join(outDir, s.name), s.code)
fs.writeFileSync(
  path.join(outDir, 'tsconfig.json'),
  JSON.stringify({
    extends: '../../tsconfig.json',
    compilerOptions: { types: ['node'], noUnusedLocals: false },
    include: ['*.ts']
  })
)

const run = (args: ReadonlyArray<string>): { ok: boolean; output: string } => {
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', cwd: root })
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` }
}

const failures: Array<string> = []
const where = snippets.map((s) => `  ${s.name}: ${s.origin}`).join('\n')
const typecheck = run([require.resolve('typescript/bin/tsc'), '-p', path.join(outDir, 'tsconfig.json'), '--noEmit'])
if (!typecheck.ok) failures.push(`type errors:\n${typecheck.output}`)
// One process for all of them (a stack trace names the snippet's file); each uses its own clock and random.
const index = path.join(outDir, 'index.ts')
fs.writeFileSync(index, snippets.map((s) => `import './${path.basename(s.name, '.ts')}'\n`).join(''))
const execution = run([require.resolve('tsx/cli'), index])
if (!execution.ok) failures.push(`a snippet failed to run:\n${execution.output}`)

if (failures.length > 0) {
  console.error(`${failures.join('\n')}\nSnippet files:\n${where}`)
  console.error(`${failures.length} problem(s); the snippets are kept in docs/examples-guides for inspection.`)
  process.exitCode = 1
} else {
  fs.rmSync(outDir, { recursive: true, force: true })
  console.log(`${snippets.length} snippets from ${sources.length} files type-checked and ran.`)
}
