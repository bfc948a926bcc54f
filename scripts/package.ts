/**
 * The packages as users get them: `npm pack` of the library and of the command (each built from the tsconfig file
 * its prepare / prepack script compiles), installed from the tarballs into an empty application, and measured.
 * Used by test/package.test.ts and by `npm run size` (scripts/install-size.ts).
 */
import { execFile } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { stripExamples } from './declarations'

export const repo = path.join(__dirname, '..')

/** The repository's compiler (TypeScript 5), by its path: TypeScript 7 has a workspace of its own, tools/typescript7. */
export const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc')

export interface PackedFile {
  readonly path: string
  readonly size: number
}

/** One tarball, as `npm pack --json` describes it. */
export interface Packed {
  readonly name: string
  readonly version: string
  /** The tarball's absolute path. */
  readonly tarball: string
  /** Its size, compressed. */
  readonly size: number
  readonly unpackedSize: number
  readonly files: ReadonlyArray<PackedFile>
}

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a program to its end; never rejects (a failure is in `code` and `stderr`). */
export const run = (
  file: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env
): Promise<Run> =>
  new Promise((resolve) => {
    execFile(file, [...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
      resolve({ code, stdout, stderr: error !== null && code === null ? `${stderr}\n${error.message}` : stderr })
    })
  })

/**
 * npm itself: the one running this process (`npm test`, `npm run size`) if any, else the one on the PATH. Without
 * the `npm_config_*` and `npm_package_*` variables that a parent npm sets for its scripts (such as the
 * repository's `local_prefix`): the child reads its configuration from the same files, for its own directory.
 */
export const npm = (args: ReadonlyArray<string>, cwd: string): Promise<Run> => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_(config|package|lifecycle)_/i.test(key))
  )
  const cli = process.env.npm_execpath
  return cli !== undefined && cli.endsWith('.js')
    ? run(process.execPath, [cli, ...args], cwd, env)
    : run('npm', args, cwd, env)
}

const check = (what: string, result: Run): Run => {
  if (result.code !== 0) throw new Error(`${what} failed with code ${result.code}:\n${result.stdout}\n${result.stderr}`)
  return result
}

/** Removes what an incremental build keeps of a deleted source: each module of `out` whose `.ts` in `src` is gone. */
const prune = (src: string, out: string): void => {
  for (const file of fs.readdirSync(out, { recursive: true, encoding: 'utf8' })) {
    const module = /^(.+)\.(js|d\.ts)$/.exec(file)
    if (module !== null && !fs.existsSync(path.join(src, `${module[1]}.ts`))) fs.rmSync(path.join(out, file))
  }
}

/**
 * Brings one package's lib/ up to date with its sources: the library (`'.'`) or the command (`'cli'`, against the
 * library's declarations).
 *
 * **Details**
 *
 * The clean builds are the packages' scripts (the library's prepare, the command's prepack), which `npm ci` runs
 * for the library. This builds the same tsconfig files with an incremental `tsc -b` instead, which compiles nothing
 * when lib/ is fresh (a fraction of a second), and removes the outputs of deleted sources: `npm run api` and
 * `npm test` read the declarations that `npm ci` just wrote without compiling them again. test/package.test.ts
 * checks that the scripts still compile these tsconfig files.
 */
export const build = async (workspace: '.' | 'cli'): Promise<void> => {
  // the library: its declarations (with their docs), then its JavaScript without comments (the docs live in the
  // declarations and docs/modules: the comments would be shipped twice); one tsc for both
  const projects = workspace === '.' ? ['tsconfig.build.json', 'tsconfig.build-js.json'] : ['cli/tsconfig.build.json']
  check(`tsc -b ${projects.join(' ')}`, await run(process.execPath, [tsc, '-b', ...projects], repo))
  prune(path.join(repo, workspace, 'src'), path.join(repo, workspace, 'lib'))
  // as `npm run build` does (scripts/declarations.ts)
  if (workspace === '.') stripExamples(path.join(repo, 'lib'))
}

/**
 * Packs one package of the repository into `destination`: the library (its root, `workspace` `'.'`) or the command
 * (`'cli'`), after {@link build}, with `--ignore-scripts`: the files that publishing would pack, without compiling
 * again what is fresh.
 */
export const packWorkspace = async (workspace: '.' | 'cli', destination: string): Promise<Packed> => {
  await build(workspace)
  const which = workspace === '.' ? [] : ['--workspace', workspace]
  const result = check(
    `npm pack ${workspace}`,
    await npm(['pack', ...which, '--ignore-scripts', '--json', '--pack-destination', destination], repo)
  )
  const [p] = JSON.parse(result.stdout) as ReadonlyArray<Omit<Packed, 'tarball'> & { readonly filename: string }>
  return {
    name: p.name,
    version: p.version,
    tarball: path.join(destination, p.filename),
    size: p.size,
    unpackedSize: p.unpackedSize,
    files: p.files.map((f) => ({ path: f.path, size: f.size }))
  }
}

/** Packs the library, then the command (built against the library's declarations), into `destination`. */
export const pack = async (destination: string): Promise<{ readonly library: Packed; readonly command: Packed }> => {
  const library = await packWorkspace('.', destination)
  return { library, command: await packWorkspace('cli', destination) }
}

/**
 * Makes `dir` an empty application and runs `npm install <specs>` in it, as a user would, but from npm's cache
 * when it has the packages (`--prefer-offline`: `npm ci` in the repository put them there).
 */
export const install = async (dir: string, specs: ReadonlyArray<string>): Promise<void> => {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'application', version: '1.0.0', private: true }, null, 2)}\n`
  )
  check(
    `npm install ${specs.join(' ')}`,
    await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', ...specs], dir)
  )
}

export interface InstallSize {
  /** The installed packages, by name, in node_modules and any nested node_modules. */
  readonly packages: ReadonlyArray<string>
  /** The bytes of their files (symbolic links such as node_modules/.bin are not followed). */
  readonly bytes: number
}

/** What `npm install` put into `dir`/node_modules. */
export const measure = (dir: string): InstallSize => {
  const packages: Array<string> = []
  let bytes = 0
  const sizeOf = (p: string): void => {
    const stat = fs.lstatSync(p)
    if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) sizeOf(path.join(p, entry))
    else if (stat.isFile()) bytes += stat.size
  }
  const walk = (nodeModules: string): void => {
    if (!fs.existsSync(nodeModules)) return
    for (const entry of fs.readdirSync(nodeModules)) {
      if (entry.startsWith('.')) continue // .bin (links) and .package-lock.json (npm's record)
      const names = entry.startsWith('@')
        ? fs.readdirSync(path.join(nodeModules, entry)).map((n) => `${entry}/${n}`)
        : [entry]
      for (const name of names) {
        const dir = path.join(nodeModules, name)
        packages.push(name)
        for (const inner of fs.readdirSync(dir)) {
          if (inner === 'node_modules') walk(path.join(dir, inner))
          else sizeOf(path.join(dir, inner))
        }
      }
    }
  }
  walk(path.join(dir, 'node_modules'))
  return { packages: packages.sort(), bytes }
}

/** Bytes as MB (10^6, as npm reports sizes), to one decimal. */
export const megabytes = (bytes: number): string => (bytes / 1e6).toFixed(1)
