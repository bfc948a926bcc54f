/**
 * Type-checks and runs every ```ts block of README.md and of the guides in docs/ (the generated docs/modules are
 * covered by docs-ts). Each block is a complete program; imports of 'fp-ts-retry' are pointed at src/. A block may be
 * a Jest test file (docs/testing.md's are): it sees Jest's globals, see {@link JEST_GLOBALS}.
 *
 * It also refuses a jitter placed before a cap in one `pipe` (or `flow`), in those blocks and in the `@example`s of
 * src/*.ts: see {@link jitterBeforeCap}. Exits non-zero, naming the file and line, when a block fails to compile
 * or to run or breaks that rule.
 */
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'

/** Put on a line of the `pipe` to show the wrong order on purpose (the jitter guide does, to explain it). */
export const ON_PURPOSE = 'wrong order, on purpose'

const JITTER = /^(?:\w+\.)?(?:fullJitter|equalJitter|jittered\s*\()/
const CAP = /^(?:\w+\.)?capped\s*\(/
const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' }

/** The top-level arguments of the call whose `(` is at `open`, each with its offset; and the offset of its `)`. */
const argumentsAt = (code: string, open: number): { args: Array<{ text: string; at: number }>; end: number } => {
  const args: Array<{ text: string; at: number }> = []
  const closers: Array<string> = []
  let start = open + 1
  let i = open + 1
  const push = (until: number): void => {
    // comments are blanked so that an argument is classified by its code
    const text = code.slice(start, until).replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, (c) => ' '.repeat(c.length))
    const lead = text.length - text.trimStart().length
    args.push({ text: text.trim(), at: start + lead })
  }
  for (; i < code.length; i++) {
    const c = code[i]
    if (c === '/' && code[i + 1] === '/') i = code.indexOf('\n', i) === -1 ? code.length : code.indexOf('\n', i) - 1
    else if (c === '/' && code[i + 1] === '*') i = code.indexOf('*/', i + 2) === -1 ? code.length : code.indexOf('*/', i + 2) + 1
    else if (c === "'" || c === '"' || c === '`') {
      // a string to its closing quote (a template's ${...} holds no pipe argument of this call)
      for (i++; i < code.length && code[i] !== c; i++) if (code[i] === '\\') i++
    } else if (c in OPENERS) closers.push(OPENERS[c])
    else if (closers.length > 0 && c === closers[closers.length - 1]) closers.pop()
    else if (closers.length === 0 && (c === ',' || c === ')')) {
      push(i)
      start = i + 1
      if (c === ')') break
    }
  }
  return { args: args.filter((a) => a.text !== ''), end: i }
}

const lineAt = (code: string, offset: number): number => code.slice(0, offset).split('\n').length

/**
 * The lines (from 1) of `code` where a `pipe(...)` or `flow(...)` puts a jitter (`fullJitter`, `equalJitter`,
 * `jittered(...)`) before a cap (`capped(...)`) among its own arguments. The jitter then draws from the uncapped
 * delay and the cap clips almost every draw to itself, so that clients wait exactly the cap, together
 * (docs/jitter.md, "Cap before the jitter"). A cap inside a nested argument caps another schedule and is not
 * counted; a call with {@link ON_PURPOSE} on one of its lines is let through.
 */
export const jitterBeforeCap = (code: string): ReadonlyArray<number> => {
  const lines: Array<number> = []
  for (const match of code.matchAll(/\b(?:pipe|flow)\s*\(/g)) {
    const open = match.index + match[0].length - 1
    const { args, end } = argumentsAt(code, open)
    const jitter = args.findIndex((a) => JITTER.test(a.text))
    if (jitter === -1 || !args.slice(jitter + 1).some((a) => CAP.test(a.text))) continue
    const first = code.lastIndexOf('\n', match.index) + 1
    const last = code.indexOf('\n', end)
    if (code.slice(first, last === -1 ? code.length : last).includes(ON_PURPOSE)) continue
    lines.push(lineAt(code, args[jitter].at))
  }
  return lines
}

/**
 * The `@example`s of the JSDoc in a source file, each with the file's line of its first line, their ` * `
 * margins removed (so that a line of an example is a line of the file).
 */
export const examplesOf = (source: string): ReadonlyArray<{ readonly line: number; readonly code: string }> =>
  [...source.matchAll(/\/\*\*[\s\S]*?\*\//g)].flatMap((comment) => {
    const lines = comment[0].split('\n').map((l) => l.replace(/^\s*\*(?: |$)/, ''))
    const firstLine = lineAt(source, comment.index)
    const examples: Array<{ line: number; code: string }> = []
    let current: { line: number; code: Array<string> } | undefined
    lines.forEach((text, i) => {
      if (/^\s*@\w+/.test(text)) {
        if (current !== undefined) examples.push({ line: current.line, code: current.code.join('\n') })
        current = text.trim() === '@example' ? { line: firstLine + i + 1, code: [] } : undefined
      } else current?.code.push(text.replace(/\s*\*\/$/, ''))
    })
    if (current !== undefined) examples.push({ line: current.line, code: current.code.join('\n') })
    return examples
  })

/**
 * The module that gives the snippets Jest's globals when they run (their types are @types/jest's): `expect` is
 * Jest's own (the `expect` package, installed with jest), `describe`, `it` and the hooks are node:test's, which
 * runs the tests in the snippets' process and sets its exit code when one fails. A snippet that needs more of
 * Jest (`jest.fn`, fake timers) fails to run here.
 */
export const JEST_GLOBALS = `import { after, afterEach, before, beforeEach, describe, it, test } from 'node:test'
import { expect } from 'expect'

Object.assign(globalThis, { describe, it, test, expect, beforeAll: before, afterAll: after, beforeEach, afterEach })
`

interface Snippet {
  readonly name: string
  readonly origin: string
  readonly code: string
}

/** The ```ts blocks of a markdown file; a block may be indented (inside a list item), by its fence's indentation. */
export const blocksOf = (text: string): ReadonlyArray<{ readonly line: number; readonly code: string }> =>
  [...text.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)].map((match) => ({
    line: lineAt(text, match.index) + 1,
    code: match[2].replace(new RegExp(`^${match[1]}`, 'gm'), '')
  }))

const main = (): void => {
  const root = process.cwd()
  const outDir = path.join(root, 'docs', 'examples-guides')
  const sources = [
    'README.md',
    ...fs
      .readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`)
  ]
  const read = (file: string): string => fs.readFileSync(path.join(root, file), 'utf8')

  const snippets: Array<Snippet> = sources.flatMap((source) =>
    blocksOf(read(source)).map((block, i) => ({
      name: `${source.replace(/[/.]/g, '-')}-${i}.ts`,
      origin: `${source}:${block.line - 1}`,
      code: block.code.replace(
        /from 'fp-ts-retry(\/(\w+))?'/g,
        (_, __, module: string | undefined) => `from '../../src/${module ?? 'index'}'`
      )
    }))
  )

  // The order rule reads the guides' blocks and the JSDoc examples alike (docs-ts runs the latter, not this rule).
  const examples = [
    ...sources.flatMap((file) => blocksOf(read(file)).map((block) => ({ file, ...block }))),
    ...fs
      .readdirSync(path.join(root, 'src'))
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => examplesOf(read(`src/${f}`)).map((example) => ({ file: `src/${f}`, ...example })))
  ]
  const misordered = examples.flatMap(({ file, line, code }) =>
    jitterBeforeCap(code).map((at) => `  ${file}:${line + at - 1}`)
  )

  fs.rmSync(outDir, { recursive: true, force: true })
  fs.mkdirSync(outDir, { recursive: true })
  for (const s of snippets) fs.writeFileSync(path.join(outDir, s.name), s.code)
  const globals = path.join(outDir, 'jest-globals.ts')
  fs.writeFileSync(globals, JEST_GLOBALS)
  fs.writeFileSync(
    path.join(outDir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { types: ['node', 'jest'], noUnusedLocals: false },
      include: ['*.ts']
    })
  )

  const run = (args: ReadonlyArray<string>): { ok: boolean; output: string } => {
    const result = spawnSync(process.execPath, args, { encoding: 'utf8', cwd: root })
    return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` }
  }

  const failures: Array<string> = []
  if (misordered.length > 0) {
    failures.push(
      `a jitter before a cap in one pipe (cap first: pipe(exponential(base), capped(max), fullJitter); see docs/jitter.md):\n${misordered.join('\n')}`
    )
  }
  const where = snippets.map((s) => `  ${s.name}: ${s.origin}`).join('\n')
  const typecheck = run([require.resolve('typescript/bin/tsc'), '-p', path.join(outDir, 'tsconfig.json'), '--noEmit'])
  if (!typecheck.ok) failures.push(`type errors:\n${typecheck.output}`)
  // One process for all of them (a stack trace names the snippet's file); each uses its own clock and random.
  const index = path.join(outDir, 'index.ts')
  // the globals first: an import runs before the modules imported after it
  const modules = [path.basename(globals, '.ts'), ...snippets.map((s) => path.basename(s.name, '.ts'))]
  fs.writeFileSync(index, modules.map((m) => `import './${m}'\n`).join(''))
  const execution = run([require.resolve('tsx/cli'), index])
  if (!execution.ok) failures.push(`a snippet failed to run:\n${execution.output}`)

  if (failures.length > 0) {
    console.error(`${failures.join('\n')}\nSnippet files:\n${where}`)
    console.error(`${failures.length} problem(s); the snippets are kept in docs/examples-guides for inspection.`)
    process.exitCode = 1
  } else {
    fs.rmSync(outDir, { recursive: true, force: true })
    console.log(
      `${snippets.length} snippets from ${sources.length} files type-checked and ran; ` +
        `${examples.length} snippets and examples keep the cap before the jitter.`
    )
  }
}

if (require.main === module) main()
