/**
 * The packages as users install them (issue 9): the READMEs' own steps (issue 33), read from their code blocks and
 * run as they are written: the pack in this checkout, each install into an empty application. Then what ships,
 * what the install adds, whether the types resolve under every moduleResolution with TypeScript 5 and 7, whether
 * `require`, `import` (an example program compiled as a native ES module included) and the installed command run.
 *
 * Installing comes from npm's cache, which `npm ci` filled; each compiler checks every resolution in one `tsc -b`,
 * both compilers at once.
 */
import * as assert from 'assert'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import {
  build as buildPackage,
  measure,
  megabytes,
  npm,
  repo,
  run,
  tsc,
  type InstallSize,
  type Run
} from '../scripts/package'
import { deepStrictEqual } from './util'

interface PackageJson {
  readonly name: string
  readonly version: string
  readonly main: string
  readonly types: string
  readonly typesVersions: Record<string, Record<string, ReadonlyArray<string>>>
  readonly exports: Record<string, string | { readonly types: string; readonly default: string }>
  readonly bin?: Record<string, string>
  readonly scripts?: Record<string, string>
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly optionalDependencies?: Record<string, string>
  readonly workspaces?: ReadonlyArray<string>
}

const readJson = (file: string): PackageJson => JSON.parse(fs.readFileSync(file, 'utf8')) as PackageJson

const library = readJson(path.join(repo, 'package.json'))
const command = readJson(path.join(repo, 'cli', 'package.json'))

/** The modules a user may import by subpath: `fp-ts-retry/<name>`. */
const subpaths = Object.keys(library.exports)
  .filter((key) => key !== '.' && key !== './package.json')
  .map((key) => key.slice('./'.length))

jest.setTimeout(30_000)

/** At most this much, fp-ts and io-ts included (issue 9). */
const BUDGET = { packages: 6, bytes: 7e6 }

// -------------------------------------------------------------------------------------
// the consumer
// -------------------------------------------------------------------------------------

const COMMON = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noEmit: true,
  target: 'ES2022',
  lib: ['ES2022'],
  types: ['node'],
  skipDefaultLibCheck: true
}

/**
 * One tsconfig per resolution, each over the files of the module formats it supports. The bundler one, for an
 * application built for the browser (the DOM's types, not Node's), also checks the declarations of every package
 * (`skipLibCheck: false`), ours included; the others skip that check, which costs seconds: the declarations are the
 * same files under every resolution.
 */
const MODES: Record<
  string,
  { readonly compilerOptions: Record<string, unknown>; readonly files: ReadonlyArray<string> }
> = {
  // "module": "commonjs" and node10: typesVersions instead of "exports"
  node10: {
    compilerOptions: { module: 'commonjs', moduleResolution: 'node10', skipLibCheck: true },
    files: ['consumer.ts', 'subpaths.ts']
  },
  node16: {
    compilerOptions: { module: 'node16', moduleResolution: 'node16', skipLibCheck: true },
    files: ['consumer.cts', 'consumer.mts', 'subpaths.cts', 'subpaths.mts', 'example.mts']
  },
  nodenext: {
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true },
    files: ['consumer.cts', 'consumer.mts', 'subpaths.cts', 'subpaths.mts', 'example.mts']
  },
  bundler: {
    compilerOptions: {
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['ES2022', 'DOM'],
      types: [],
      skipLibCheck: false
    },
    files: ['consumer.ts', 'subpaths.ts']
  }
}

/**
 * The example that runs as a native ES module (test/fixtures/esm/example.mts), compiled as its user would: emitted
 * as esm/example.mjs.
 */
const ESM = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    skipLibCheck: true,
    noEmit: false,
    outDir: 'esm'
  },
  files: ['example.mts']
}

/** The compilers, by package, and the projects each builds: TypeScript 7 removed node10, and it compiles the example. */
const COMPILERS: Record<string, { readonly modes: ReadonlyArray<string>; readonly projects: ReadonlyArray<string> }> = {
  typescript: { modes: ['node10', 'node16', 'nodenext', 'bundler'], projects: [] },
  typescript7: { modes: ['node16', 'nodenext', 'bundler'], projects: ['esm'] }
}

/** Where a compiler's package is: TypeScript 5 the repository's, TypeScript 7 in its workspace (tools/typescript7). */
const compilerRoot = (name: string): string =>
  name === 'typescript'
    ? path.join(repo, 'node_modules', 'typescript')
    : path.join(repo, 'tools', name, 'node_modules', 'typescript')

const compilerVersion = (name: string): string => readJson(path.join(compilerRoot(name), 'package.json')).version

/** A project's tsconfig file: one per compiler, so that their build infos (`tsc -b` writes them) are not shared. */
const tsconfigOf = (compiler: string, project: string): string => `tsconfig.${compiler}.${project}.json`

/**
 * Writes the consumer (test/fixtures/consumer.ts, and an import of every subpath), the ES module example and, for
 * each compiler, a tsconfig per project.
 */
const writeConsumer = (dir: string): void => {
  fs.copyFileSync(path.join(__dirname, 'fixtures', 'esm', 'example.mts'), path.join(dir, 'example.mts'))
  const consumer = fs.readFileSync(path.join(__dirname, 'fixtures', 'consumer.ts'), 'utf8')
  const imports = subpaths.map((name, i) => `import * as M${i} from 'fp-ts-retry/${name}'\n`).join('')
  const everySubpath = `${imports}export const modules = [${subpaths.map((_, i) => `M${i}`).join(', ')}] as const\n`
  for (const extension of ['ts', 'cts', 'mts']) {
    fs.writeFileSync(path.join(dir, `consumer.${extension}`), consumer)
    fs.writeFileSync(path.join(dir, `subpaths.${extension}`), everySubpath)
  }
  for (const [compiler, { modes, projects }] of Object.entries(COMPILERS)) {
    for (const project of [...modes, ...projects]) {
      const { compilerOptions, files } = project === 'esm' ? ESM : MODES[project]
      const tsconfig = { compilerOptions: { ...COMMON, ...compilerOptions }, files }
      fs.writeFileSync(path.join(dir, tsconfigOf(compiler, project)), `${JSON.stringify(tsconfig, null, 2)}\n`)
    }
  }
}

/**
 * Builds a compiler's projects in one `tsc -b --verbose` (one start of the compiler, and the declarations that the
 * projects share read once: less than half the time of one `tsc -p` each) and splits what it prints by project: the
 * lines after its "Building project '…'". What the build prints outside any project, a project it did not build,
 * or a failure that no project explains, is every project's.
 */
const build = async (compiler: string, cwd: string): Promise<ReadonlyMap<string, string>> => {
  const { modes, projects } = COMPILERS[compiler]
  const names = [...modes, ...projects]
  // TypeScript 7 lives in a workspace of its own (tools/typescript7), so that its `tsc` bin never replaces the
  // repository's TypeScript 5 in node_modules/.bin
  const bin = compiler === 'typescript' ? tsc : path.join(compilerRoot(compiler), 'bin', 'tsc')
  const result = await run(
    process.execPath,
    [bin, '-b', '--verbose', '--pretty', 'false', ...names.map((name) => tsconfigOf(compiler, name))],
    cwd
  )
  const printed = new Map<string, string>()
  let current: string | undefined
  let outside = ''
  for (const line of `${result.stdout}${result.stderr}`.split(/\r?\n/)) {
    const building = / - Building project '(?:.*[\\/])?tsconfig\.[^.]+\.([^.]+)\.json'\.\.\.$/.exec(line)
    if (building !== null) printed.set((current = building[1]), '')
    else if (/ - (Projects in this build|Project ')/.test(line)) current = undefined
    // the list of the build's projects, at its start
    else if (line.trim() === '' || /^\s+\* \S+\.json$/.test(line)) continue
    else if (current !== undefined) printed.set(current, `${printed.get(current) ?? ''}${line}\n`)
    else outside += `${line}\n`
  }
  const unexplained =
    result.code !== 0 && [...printed.values()].every((text) => text === '') ? `exit code ${result.code}\n` : ''
  return new Map(
    names.map((name) => [
      name,
      `${printed.get(name) ?? `not built:\n${result.stdout}${result.stderr}`}${outside}${unexplained}`
    ])
  )
}

/** Requires the root and every subpath, checks that the index's namespace is the subpath's module, prints delays. */
const requireScript = `
  const assert = require('assert')
  const index = require('fp-ts-retry')
  const Schedule = require('fp-ts-retry/Schedule')
  const Driver = require('fp-ts-retry/Driver')
  for (const name of ${JSON.stringify(
    subpaths
  )}) assert.ok(Object.keys(require('fp-ts-retry/' + name)).length > 0, name)
  assert.strictEqual(index.Schedule, Schedule)
  assert.strictEqual(typeof index.retrying, 'function')
  process.stdout.write(JSON.stringify(Driver.delays(Schedule.intersect(Schedule.recurs(3))(Schedule.exponential(100)))))`

/** Imports the root and a subpath as a native ES module, named exports included; prints delays. */
const importScript = `
  import * as assert from 'assert'
  import * as index from 'fp-ts-retry'
  import { retrying, Schedule as IndexSchedule } from 'fp-ts-retry'
  import * as Schedule from 'fp-ts-retry/Schedule'
  import { exponential, intersect, recurs } from 'fp-ts-retry/Schedule'
  import { delays } from 'fp-ts-retry/Driver'
  assert.strictEqual(typeof retrying, 'function')
  assert.strictEqual(index.retrying, retrying)
  assert.strictEqual(IndexSchedule.exponential, exponential)
  assert.strictEqual(Schedule.exponential, exponential)
  process.stdout.write(JSON.stringify(delays(intersect(recurs(3))(exponential(100)))))`

/** Prints the io-ts files that `require(specifier)` loads. */
const ioTsScript = (specifier: string): string => `
  require(${JSON.stringify(specifier)})
  const ioTs = require('path').join('node_modules', 'io-ts') + require('path').sep
  process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((file) => file.includes(ioTs))))`

/** The io-ts files that a run of `ioTsScript` printed. */
const ioTsLoaded = (result: Run): ReadonlyArray<string> => {
  assert.strictEqual(result.code, 0, result.stderr)
  return JSON.parse(result.stdout) as ReadonlyArray<string>
}

// -------------------------------------------------------------------------------------
// the READMEs' steps
// -------------------------------------------------------------------------------------

/** A line of a README's shell block: the command, and where its comment says it runs. */
interface Step {
  readonly command: string
  readonly comment: string
}

/** The lines of the first `sh` code block under `heading` in `file` (relative to the repository). */
const readmeSteps = (file: string, heading: string): ReadonlyArray<Step> => {
  const text = fs.readFileSync(path.join(repo, file), 'utf8')
  const at = text.indexOf(`\n${heading}\n`)
  assert.ok(at >= 0, `${file} has no heading "${heading}"`)
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(text.slice(at))
  assert.ok(block !== null, `${file}: no sh block under "${heading}"`)
  return block[1]
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [, command, comment] = /^(.*?)\s*(?:#\s*(.*))?$/.exec(line) ?? []
      return { command, comment: comment ?? '' }
    })
}

/** The README's install of the library (## Install), and of the command (## The CLI). */
const INSTALL = readmeSteps('README.md', '## Install')
const CLI = readmeSteps('README.md', '## The CLI')
/** The command's own README (cli/README.md, the command's package's). */
const CLI_README = readmeSteps(path.join('cli', 'README.md'), '## Installation')

/**
 * The environment of the READMEs' commands: the test's, without a parent npm's `npm_config_*` variables (see
 * `npm` in scripts/package.ts), with npm's cache first (`npm ci` filled it), no audit or funding requests, the
 * pack's tarballs written to `tarballs` rather than into the checkout, and no lifecycle scripts: the packages'
 * prepare and prepack are clean builds of the tsconfig files that `build` in scripts/package.ts brings up to date
 * incrementally beforehand (a test below checks that they are the same files), which on a busy machine saves
 * most of a minute. Configuration only: the commands are the READMEs'.
 */
const readmeEnv = (tarballs: string): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(config|package|lifecycle)_/i.test(key))),
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_pack_destination: tarballs,
  npm_config_ignore_scripts: 'true'
})

/** Runs one README command with sh in `cwd`, its `/path/to/` the folder of the tarballs; fails on a non-zero exit. */
const runStep = async (step: Step, cwd: string, tarballs: string): Promise<Run> => {
  const command = step.command.replaceAll('/path/to/', `${tarballs}/`)
  const result = await run('sh', ['-c', command], cwd, readmeEnv(tarballs))
  assert.strictEqual(
    result.code,
    0,
    `${command} (in ${cwd}) exited with ${result.code}:\n${result.stdout}\n${result.stderr}`
  )
  return result
}

/** Makes `dir` an empty application, as the READMEs' "your application" is. */
const emptyApplication = (dir: string): void => {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'application', version: '1.0.0', private: true }, null, 2)}\n`
  )
}

/** The files of a tarball, as `npm pack` wrote them (without tar's `package/`). */
const tarballFiles = async (tarball: string): Promise<ReadonlyArray<string>> => {
  const listed = await run('tar', ['-tzf', tarball], path.dirname(tarball))
  assert.strictEqual(listed.code, 0, listed.stderr)
  return listed.stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''))
}

/** A policy document for the installed command's `check`. */
const POLICY = { policies: { payments: { timeout: '2s', retry: { constant: '100ms', maxRetries: 3 } } } }

/** A command for the installed command's `run`: it fails (exit code 3) on its first attempt, then succeeds. */
const FLAKY = [
  process.execPath,
  '-e',
  `const fs = require('fs')
   const n = fs.existsSync('count.txt') ? Number(fs.readFileSync('count.txt', 'utf8')) + 1 : 1
   fs.writeFileSync('count.txt', String(n))
   console.log('flaky attempt ' + n)
   process.exit(n === 1 ? 3 : 0)`
]

describe('the install steps of the READMEs', () => {
  it('should pack in the checkout, after npm ci, with one command that both READMEs give', () => {
    const [pack] = CLI
    assert.match(pack.comment, /^in the checkout/)
    assert.match(pack.command, /^npm ci && \S/)
    deepStrictEqual(INSTALL[0].command, pack.command)
    deepStrictEqual(CLI_README[0], pack)
  })

  it('should install the library, then the command, in the application, as both READMEs say', () => {
    deepStrictEqual(
      CLI.slice(1).map((step) => step.comment),
      ['in your application: the library, in "dependencies"', 'then the command, in "devDependencies"', '']
    )
    deepStrictEqual(
      INSTALL.slice(1).map((step) => step.command),
      [CLI[1].command]
    )
    deepStrictEqual(CLI_README.slice(0, -1), CLI.slice(0, -1))
    deepStrictEqual(CLI_README.slice(-1)[0].command, 'npx fp-ts-retry simulate')
  })
})

describe('package.json', () => {
  // The command's "fp-ts-retry": "1.0.0-rc.0" resolves to this checkout through node_modules/fp-ts-retry, a link that
  // the library's devDependency on itself makes. Not by listing the root as a workspace of itself: npm then reads
  // the root's allowScripts as a workspace's too, and warns on every install that it is ignored.
  it('should link the library under its own name (for the command), and make cli/ and TypeScript 7 workspaces', () => {
    deepStrictEqual(library.workspaces, ['cli', 'tools/typescript7'])
    assert.strictEqual(library.devDependencies?.['fp-ts-retry'], 'file:.')
    assert.strictEqual(command.name, 'fp-ts-retry-cli')
    deepStrictEqual(command.bin, { 'fp-ts-retry': 'lib/main.js' })
  })

  it("should have the command depend on this very version of the library, and on the peers' versions the repository tests with", () => {
    assert.strictEqual(command.dependencies?.['fp-ts-retry'], library.version)
    // the optional peers (the engine adapters' bullmq and ioredis) are not the command's business
    const optional = (peer: string): boolean => library.peerDependenciesMeta?.[peer]?.optional === true
    for (const peer of Object.keys(library.peerDependencies ?? {}).filter((p) => !optional(p))) {
      assert.strictEqual(command.dependencies?.[peer], library.devDependencies?.[peer], peer)
    }
  })

  it("should give the library no bin and no optional dependencies (npm installs those by default): they are the command's", () => {
    assert.strictEqual(library.bin, undefined)
    assert.strictEqual(library.optionalDependencies, undefined)
    for (const name of ['commander', 'vega', 'vega-lite'])
      assert.strictEqual(library.dependencies?.[name], undefined, name)
  })

  it('should build, when packed, the tsconfig files that build() in scripts/package.ts builds (the packs run without scripts)', () => {
    assert.strictEqual(library.scripts?.prepare, 'npm run build')
    // then strips the declarations' examples, as build() does after its tsc (scripts/declarations.ts)
    assert.match(
      library.scripts?.build ?? '',
      /&& tsc -p tsconfig\.build\.json && tsc -p tsconfig\.build-js\.json && tsx scripts\/declarations\.ts$/
    )
    assert.strictEqual(command.scripts?.prepack, 'npm run build')
    assert.match(command.scripts?.build ?? '', /&& tsc -b tsconfig\.build\.json$/)
  })

  it("should keep the repository's tsc TypeScript 5 (ts-jest needs it): TypeScript 7's bin, of the same name, must not replace it", () => {
    // TypeScript 7 is a dependency of the tools/typescript7 workspace only: its bin is linked there.
    const bin = fs.realpathSync(path.join(repo, 'node_modules', '.bin', 'tsc'))
    assert.strictEqual(bin, fs.realpathSync(tsc), `node_modules/.bin/tsc is ${bin}: run npm ci`)
  })

  it('should map each subpath, and no other, to its declarations for TypeScript resolutions that ignore "exports" (node10)', () => {
    // One entry per module rather than "*": ["lib/*"], which would also remap the root's "types" (to
    // lib/lib/index.d.ts) and would let node10 type-check imports such as fp-ts-retry/lib/Schedule that Node refuses.
    const expected: Record<string, ReadonlyArray<string>> = {}
    for (const name of subpaths) {
      const entry = library.exports[`./${name}`]
      expected[name] = [typeof entry === 'string' ? entry : entry.types.replace(/^\.\//, '')]
    }
    deepStrictEqual(library.typesVersions, { '*': expected })
    assert.strictEqual(library.types, 'lib/index.d.ts')
    assert.strictEqual(library.main, 'lib/index.js')
  })
})

describe('the packed packages', () => {
  let dir = ''
  /** Where the README's pack writes the tarballs; what it wrote there. */
  let tarballs = ''
  let written: ReadonlyArray<string> = []
  /** The files of each tarball. */
  let packed: { readonly library: ReadonlyArray<string>; readonly command: ReadonlyArray<string> }
  /** The library installed with its peers into an empty application, as measured before anything else was added. */
  let installed: InstallSize
  let application = ''
  let commandApplication = ''
  /** Each compiler's build of the consumer, by project. */
  const builds = new Map<string, Promise<ReadonlyMap<string, string>>>()
  /**
   * The programs that the tests check, by name. Like the builds, each starts in `beforeAll` as soon as what it runs
   * is installed: on 2 cores, they run beside the compilers instead of after them.
   */
  const runs = new Map<string, Promise<Run>>()
  const ran = (name: string): Promise<Run> => runs.get(name) ?? Promise.reject(new Error(`${name} did not run`))

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-package-'))
    tarballs = path.join(dir, 'tarballs')
    fs.mkdirSync(tarballs)
    // The checkout's step, as the READMEs write it, without its `npm ci`: the suite runs in a checkout that `npm ci`
    // made (.ci/run: npm ci && npm test) and from its node_modules. Its scripts' builds beforehand (see readmeEnv):
    // the library's is fresh after npm ci, the command's is not.
    const [checkout, ...inApplication] = CLI
    await buildPackage('.')
    await buildPackage('cli')
    await runStep({ ...checkout, command: checkout.command.replace(/^npm ci && /, '') }, repo, tarballs)
    // (an array of this realm's: jest runs the test in a context of its own)
    written = [...fs.readdirSync(tarballs)].sort()
    const libraryTarball = path.join(tarballs, `${library.name}-${library.version}.tgz`)
    const commandTarball = path.join(tarballs, `${command.name}-${command.version}.tgz`)
    const files = Promise.all([tarballFiles(libraryTarball), tarballFiles(commandTarball)])
    application = path.join(dir, 'application')
    commandApplication = path.join(dir, 'command')
    emptyApplication(application)
    emptyApplication(commandApplication)
    const libraryReady = runStep(INSTALL[1], application, tarballs).then(async () => {
      installed = measure(application)
      // The optional peers that a subpath loads as it is imported (Arbitrary: fast-check, OpenTelemetry: its API), as
      // a user of those subpaths installs them, after the measure: the library's own install has none of them.
      const loadedBySubpaths = ['fast-check', '@opentelemetry/api'].map(
        (name) => `${name}@${library.devDependencies?.[name]}`
      )
      await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', ...loadedBySubpaths], application)
      // The compilers and Node's types come from the repository, after the measure: an application has its own.
      const modules = path.join(application, 'node_modules')
      fs.mkdirSync(path.join(modules, '@types'))
      fs.symlinkSync(path.join(repo, 'node_modules', '@types', 'node'), path.join(modules, '@types', 'node'), 'dir')
      writeConsumer(application)
      for (const compiler of Object.keys(COMPILERS)) builds.set(compiler, build(compiler, application))
      const node = (name: string, args: ReadonlyArray<string>): void => {
        runs.set(name, run(process.execPath, args, application))
      }
      node('require', ['-e', requireScript])
      node('import', ['--input-type=module', '-e', importScript])
      node('directory import', ['--input-type=module', '-e', "import 'fp-ts/TaskEither'"])
      for (const name of ['ScheduleConfig', 'Schedule', 'Retry'])
        node(`io-ts ${name}`, ['-e', ioTsScript(`fp-ts-retry/${name}`)])
      // compiled by TypeScript 7's build
      const example = Promise.resolve(builds.get('typescript7')).then(() =>
        run(process.execPath, [path.join('esm', 'example.mjs')], application)
      )
      runs.set('example', example)
    })
    const commandReady = (async () => {
      // the README's steps in the application, in turn: the last, npx fp-ts-retry --help
      let last: Run | undefined
      for (const step of inApplication) last = await runStep(step, commandApplication, tarballs)
      if (last !== undefined) runs.set('help', Promise.resolve(last))
      // cli/README's last step, and the other commands, as the installed bin
      runs.set('simulate (cli/README)', runStep(CLI_README[CLI_README.length - 1], commandApplication, tarballs))
      const npx = (name: string, args: ReadonlyArray<string>): void => {
        runs.set(name, npm(['exec', '--offline', '--', ...args], commandApplication))
      }
      npx('simulate', [
        'fp-ts-retry',
        'simulate',
        '{"constant": "100ms", "maxRetries": 2}',
        '--runs',
        '5',
        '--svg',
        'plot.svg'
      ])
      fs.writeFileSync(path.join(commandApplication, 'policy.json'), JSON.stringify(POLICY))
      npx('check', ['fp-ts-retry', 'check', 'policy.json'])
      npx('run', ['fp-ts-retry', 'run', '--schedule', '{"constant": "10ms", "maxRetries": 2}', '--', ...FLAKY])
      npx('npx', ['fp-ts-retry-cli', '--version'])
    })()
    await Promise.all([libraryReady, commandReady])
    const [libraryFiles, commandFiles] = await files
    packed = { library: libraryFiles, command: commandFiles }
    await Promise.all([...builds.values(), ...runs.values()])
  }, 180_000)

  afterAll(() => {
    if (dir !== '') fs.rmSync(dir, { recursive: true, force: true })
  })

  it("should write, by the READMEs' pack, the library's tarball and the command's, and no other", () => {
    deepStrictEqual(written, [`${library.name}-${library.version}.tgz`, `${command.name}-${command.version}.tgz`])
  })

  describe('the library', () => {
    it("should ship lib/ (the public modules with their declarations, the private folders with the model's only), the guides, the changelog, the policy document's JSON Schema; no sources, maps or tests", () => {
      const files = packed.library
      const publicModules = ['index', ...subpaths]
      const unexpected = files.filter((file) => {
        if (['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'schema/policy.schema.json'].includes(file))
          return false
        if (/^docs\/(modules\/)?[^/]+\.md$/.test(file) || /^docs\/[^/]+\.svg$/.test(file)) return false
        const module = /^lib\/(.+)\.(js|d\.ts)$/.exec(file)
        if (module === null) return true
        // the private folders (internal/, durable/, runner/, breaker/) ship their code, and of their declarations only the
        // plain types the public ones refer to
        const internal =
          /^(internal|durable|runner|breaker)\//.test(module[1]) &&
          (module[2] === 'js' || module[1] === 'internal/model')
        return !publicModules.includes(module[1]) && !internal
      })
      deepStrictEqual(unexpected, [])
      for (const name of publicModules) {
        assert.ok(files.includes(`lib/${name}.js`), `lib/${name}.js`)
        assert.ok(files.includes(`lib/${name}.d.ts`), `lib/${name}.d.ts`)
      }
      for (const file of ['README.md', 'LICENSE', 'CHANGELOG.md', 'docs/README.md', 'schema/policy.schema.json']) {
        assert.ok(files.includes(file), file)
      }
    })

    it("should ship declarations that keep each export's docs but not its examples (scripts/declarations.ts)", () => {
      const declarations = packed.library.filter((file) => file.endsWith('.d.ts'))
      const withExample = declarations.filter((file) =>
        /^\s*\* @example\b/m.test(fs.readFileSync(path.join(repo, file), 'utf8'))
      )
      deepStrictEqual(withExample, [])
      const schedule = fs.readFileSync(path.join(repo, 'lib', 'Schedule.d.ts'), 'utf8')
      assert.match(schedule, /\* @since \d+\.\d+\.\d+\n/)
      assert.match(schedule, /\* @category constructors\n/)
    })

    it('should ship every file that a link or an image of its Markdown files points to, and no image that none shows', () => {
      const files = new Set(packed.library)
      const dead: Array<string> = []
      const targets = new Set<string>()
      for (const file of files) {
        if (!file.endsWith('.md')) continue
        const text = fs.readFileSync(path.join(repo, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '')
        for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
          const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target.replace(/#.*$/, '')))
          targets.add(resolved)
          // the module pages are the repository's: the package's declarations carry the same docs
          if (resolved.startsWith('docs/modules/')) {
            if (!fs.existsSync(path.join(repo, resolved))) dead.push(`${file}: ${target}`)
            continue
          }
          if (!files.has(resolved)) dead.push(`${file}: ${target}`)
        }
      }
      deepStrictEqual(dead, [])
      deepStrictEqual(
        [...files].filter((file) => file.endsWith('.svg') && !targets.has(file)),
        []
      )
    })

    it(`should add at most ${BUDGET.packages} packages and ${megabytes(
      BUDGET.bytes
    )} MB to an application, fp-ts and io-ts included`, () => {
      const report = `${installed.packages.length} packages (${installed.packages.join(', ')}), ${megabytes(
        installed.bytes
      )} MB`
      assert.ok(installed.packages.includes('fp-ts-retry'), report)
      assert.ok(installed.packages.length <= BUDGET.packages, report)
      assert.ok(installed.bytes <= BUDGET.bytes, report)
    })

    it('should not install an optional peer dependency', () => {
      const optional = Object.entries(library.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional === true)
        .map(([name]) => name)
      deepStrictEqual(
        optional.filter((name) => installed.packages.includes(name)),
        []
      )
    })

    describe('types, for a consumer of the root and of every subpath (strict, exactOptionalPropertyTypes)', () => {
      for (const [compiler, { modes }] of Object.entries(COMPILERS)) {
        for (const mode of modes) {
          const declarations = MODES[mode].compilerOptions.skipLibCheck === false ? ', declarations included' : ''
          it(`should type-check under moduleResolution ${mode} with TypeScript ${compilerVersion(
            compiler
          )}${declarations}`, async () => {
            const printed = (await builds.get(compiler))?.get(mode)
            assert.strictEqual(printed, '', `tsc -b ${tsconfigOf(compiler, mode)}:\n${printed}`)
          })
        }
      }
    })

    it('should load the root and every subpath with require', async () => {
      const result = await ran('require')
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, '[100,200,400]')
    })

    it('should load the root and a subpath with a native ESM import, named exports included', async () => {
      const result = await ran('import')
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, '[100,200,400]')
    })

    describe('a program compiled as a native ES module (test/fixtures/esm/example.mts, "module": "nodenext")', () => {
      it("should run, with fp-ts imported by its files' full names ('fp-ts/lib/TaskEither.js')", async () => {
        const printed = (await builds.get('typescript7'))?.get('esm')
        assert.strictEqual(printed, '', `tsc -b ${tsconfigOf('typescript7', 'esm')}:\n${printed}`)
        const result = await ran('example')
        assert.strictEqual(result.code, 0, result.stderr)
        deepStrictEqual(JSON.parse(result.stdout) as unknown, {
          result: { _tag: 'Right', right: 43 },
          calls: 3,
          sleeps: [100, 200]
        })
      })

      it("should need those names: Node refuses fp-ts's directory imports ('fp-ts/TaskEither') in an ES module", async () => {
        const result = await ran('directory import')
        assert.notStrictEqual(result.code, 0)
        assert.match(result.stderr, /ERR_UNSUPPORTED_DIR_IMPORT/)
      })
    })

    describe('io-ts, which only the codecs need', () => {
      it('should be loaded by require("fp-ts-retry/ScheduleConfig") (the check below sees it when it is)', async () => {
        assert.notDeepStrictEqual(ioTsLoaded(await ran('io-ts ScheduleConfig')), [])
      })

      it('should not be loaded by require("fp-ts-retry/Schedule")', async () => {
        deepStrictEqual(ioTsLoaded(await ran('io-ts Schedule')), [])
      })

      it('should not be loaded by require("fp-ts-retry/Retry")', async () => {
        deepStrictEqual(ioTsLoaded(await ran('io-ts Retry')), [])
      })
    })
  })

  describe('the command', () => {
    it('should ship its compiled modules, its README and its LICENSE; its bin a node script', () => {
      const files = [...packed.command].sort()
      deepStrictEqual(
        files.filter((file) => !/^lib\/[^/]+\.js$/.test(file)),
        ['LICENSE', 'README.md', 'package.json']
      )
      const bin = command.bin?.['fp-ts-retry'] ?? ''
      assert.ok(files.includes(bin), bin)
      assert.match(
        fs.readFileSync(path.join(commandApplication, 'node_modules', 'fp-ts-retry-cli', bin), 'utf8'),
        /^#!\/usr\/bin\/env node\n/
      )
    })

    it("should print its commands for the README's last step, npx fp-ts-retry --help", async () => {
      const result = await ran('help')
      assert.match(result.stdout, /^Usage: fp-ts-retry \[options\] \[command\]$/m)
      for (const name of ['simulate', 'compare', 'run', 'check', 'schema'])
        assert.match(result.stdout, new RegExp(`^  ${name} `, 'm'), name)
    })

    it("should sample the default schedule for cli/README's last step, npx fp-ts-retry simulate", async () => {
      const result = await ran('simulate (cli/README)')
      assert.match(
        result.stdout,
        /^\{"exponential":"100ms","cap":"2s","jitter":"full","maxRetries":5,"maxElapsed":"10s"\}$/m
      )
      assert.match(result.stdout, /Every run stops by itself within 5 retries \(6 attempts\)\./)
    })

    it('should run from its tarball: simulate prints the table and, with vega from its dependencies, writes an SVG', async () => {
      const result = await ran('simulate')
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, /^\s+2\s+100%\s+100\s+100\s+100\s+100\s+200\s+200$/m)
      assert.match(result.stdout, /Every run stops by itself within 2 retries \(3 attempts\)\./)
      assert.match(fs.readFileSync(path.join(commandApplication, 'plot.svg'), 'utf8'), /^<svg /)
    })

    it('should check a policy document: each pipeline, its layers in the order they run', async () => {
      const result = await ran('check')
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, /^policy\.json: a valid policy document, 1 pipeline\.$/m)
      assert.match(
        result.stdout,
        /^payments\n {2}1\. timeout +2 s for each attempt\n {2}2\. retry +100 ms each time; at most 3 retries$/m
      )
    })

    it('should run a command with retries: a failure, a retry, then its exit code 0', async () => {
      const result = await ran('run')
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, 'flaky attempt 1\nflaky attempt 2\n')
      assert.match(result.stderr, /fp-ts-retry: attempt 1 exited with code 3; retry 1 in 10 ms\n/)
      assert.match(result.stderr, /fp-ts-retry: attempt 2 exited with code 0: done after 2 attempts\n/)
    })

    it('should run as npx fp-ts-retry-cli', async () => {
      const result = await ran('npx')
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, `${command.version}\n`)
    })
  })
})
