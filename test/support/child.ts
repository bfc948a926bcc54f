/**
 * A test fixture (`test/fixtures/<name>.ts`) run in a child process, for what only a whole process shows: whether
 * a pending timer keeps it alive, the warnings Node emits (a test runner's process object does not receive them).
 */
import { spawn, type ChildProcess } from 'child_process'
import { createHash } from 'crypto'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

const repo = path.join(__dirname, '..', '..')

/** What a fixture may import: the library's sources and the tests' own; and the command's (cli/test). */
const SOURCES = [
  'src',
  path.join('cli', 'src'),
  path.join('test', 'support'),
  path.join('test', 'fixtures'),
  path.join('test', 'util.ts')
]

const listTs = (file: string): Array<string> =>
  fs.statSync(path.join(repo, file)).isDirectory()
    ? fs
        .readdirSync(path.join(repo, file))
        .sort()
        .flatMap((name) => listTs(path.join(file, name)))
    : file.endsWith('.ts') && !file.endsWith('.d.ts')
    ? [file]
    : []

/** Folders of compiled sources older than this are stale: removed when a new one is made. */
const STALE_MS = 24 * 60 * 60 * 1000

let compiledRoot: string | undefined

/**
 * A folder with every file of {@link SOURCES} compiled to JavaScript at the same place (`src/Retry.ts` as
 * `src/Retry.js`), and `node_modules` linked to the repository's. TypeScript's transpiler alone, as jest's (lint
 * type-checks); made once for the sources' contents, in a folder named by their hash, which every test file and
 * jest worker shares.
 */
export const compiledSources = (): string => (compiledRoot ??= compileSources())

const compileSources = (): string => {
  const files = SOURCES.flatMap(listTs)
  const sources = files.map((file) => fs.readFileSync(path.join(repo, file), 'utf8'))
  // the repository's path too: the folder links to this clone's node_modules
  const hash = createHash('sha256').update(`${repo}\0`)
  files.forEach((file, i) => hash.update(`${file}\0${sources[i]}\0`))
  const prefix = 'fp-ts-retry-fixtures-'
  const root = path.join(os.tmpdir(), `${prefix}${hash.digest('hex').slice(0, 16)}`)
  if (fs.existsSync(root)) return root
  // only when the sources changed: loading the compiler costs more than a fixture
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ts = require('typescript') as typeof import('typescript')
  // as `npm run build` makes lib/ (module node16: CommonJS that keeps a dynamic import() as one)
  const compilerOptions = {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true
  }
  // made aside and renamed into place, so that two jest workers compiling at once never see half a folder
  const building = fs.mkdtempSync(`${root}.`)
  files.forEach((file, i) => {
    const out = path.join(building, file.replace(/\.ts$/, '.js'))
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, ts.transpileModule(sources[i], { compilerOptions, fileName: file }).outputText)
  })
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(building, 'node_modules'), 'dir')
  try {
    fs.renameSync(building, root)
  } catch {
    // another worker made the same folder first
    fs.rmSync(building, { recursive: true, force: true })
  }
  for (const name of fs.readdirSync(os.tmpdir()))
    if (name.startsWith(prefix) && path.join(os.tmpdir(), name) !== root) {
      const stale = path.join(os.tmpdir(), name)
      if (Date.now() - fs.lstatSync(stale).mtimeMs > STALE_MS) fs.rmSync(stale, { recursive: true, force: true })
    }
  return root
}

/**
 * The path of `test/fixtures/<name>` compiled to JavaScript, with the sources it imports ({@link compiledSources}).
 * A child then starts in about half the CPU time that tsx's loader takes (the fleet tests start tens of them).
 */
export const compiledFixture = (name: string): string =>
  path.join(compiledSources(), 'test', 'fixtures', name.replace(/\.ts$/, '.js'))

/** How a child process ended and what it printed. */
export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const children: Array<ChildProcess> = []

/**
 * Runs `test/fixtures/<name>` in a child process and resolves once it has exited by itself (on 'close': after
 * 'exit', when its output has been read), however long that takes: the test's timeout is the only bound.
 */
export const runFixture = (name: string, args: ReadonlyArray<string>): Promise<Exited> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiledFixture(name), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

/** Kills the children still running (a test that failed because one did not exit), for `afterAll`. */
export const killLeftoverChildren = (): void => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill()
}
