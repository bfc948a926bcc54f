/**
 * `npm run docs`: docs-ts 0.8.0 with three adjustments, made through the capabilities its `Core.main` accepts
 * rather than by patching it. Exits non-zero when an example fails to type-check or to run.
 *
 * 1. docs-ts requires a `homepage` in package.json; we have none yet, so it reads an empty one.
 * 2. docs-ts prepends `import * as assert from 'assert'` to every example that uses `assert.`; ours import it
 *    themselves (so that they can be pasted as they are), which would declare `assert` twice.
 * 3. Only the per-module pages (`docs/modules/*.ts.md`) are written, with `{@link X}` shown as `X`: the
 *    hand-written guides live beside them, and the Jekyll scaffolding docs-ts also writes (`_config.yml`,
 *    `index.md`) is not used.
 *
 * docs-typescript.ts, imported first, makes docs-ts parse with this project's TypeScript.
 *
 * Examples are type-checked and run by ts-node with `docs/examples/tsconfig.json`, which docs-ts writes from
 * `examplesCompilerOptions` in docs-ts.json.
 */
import './docs-typescript'
import { spawnSync } from 'child_process'
import * as path from 'path'
import * as Core from 'docs-ts/lib/Core'
import { capabilities } from 'docs-ts/lib/Production'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'

const ASSERT_IMPORT = "import * as assert from 'assert'\n"
const packageJson = path.join(process.cwd(), 'package.json')

const isExample = (file: string): boolean => file.split(path.sep).includes('examples')
const isModulePage = (file: string): boolean => file.endsWith('.ts.md')

const readFile: Core.Capabilities['fileSystem']['readFile'] = (file) =>
  file === packageJson
    ? pipe(
        capabilities.fileSystem.readFile(file),
        TE.map((content) => JSON.stringify({ homepage: '', ...JSON.parse(content) }))
      )
    : capabilities.fileSystem.readFile(file)

const writeFile: Core.Capabilities['fileSystem']['writeFile'] = (file, content) => {
  if (isExample(file)) {
    const deduplicated =
      content.startsWith(ASSERT_IMPORT) && content.slice(ASSERT_IMPORT.length).includes(ASSERT_IMPORT)
        ? content.slice(ASSERT_IMPORT.length)
        : content
    return capabilities.fileSystem.writeFile(file, deduplicated)
  }
  // docs-ts leaves JSDoc's inline `{@link X}` as it is; GitHub would show the braces.
  return isModulePage(file)
    ? capabilities.fileSystem.writeFile(file, content.replace(/\{@link ([^}]+)\}/g, '`$1`'))
    : TE.right(undefined)
}

// ts-node from this project, with the examples' own tsconfig (ts-node 8 would otherwise read ./tsconfig.json).
const spawn: Core.Capabilities['spawn'] = (_command, executable) =>
  pipe(
    E.tryCatch(
      () =>
        spawnSync(
          process.execPath,
          [
            require.resolve('ts-node/dist/bin'),
            '--project',
            path.join(path.dirname(executable), 'tsconfig.json'),
            executable
          ],
          { stdio: 'pipe', encoding: 'utf8' }
        ),
      String
    ),
    TE.fromEither,
    TE.flatMap(({ status, stdout, stderr }) => (status === 0 ? TE.right(undefined) : TE.left(`${stdout}${stderr}`)))
  )

Core.main({ ...capabilities, spawn, fileSystem: { ...capabilities.fileSystem, readFile, writeFile } })().then(
  (result) => {
    if (E.isLeft(result)) {
      console.error(result.left)
      process.exitCode = 1
    } else {
      console.log('Docs generated in docs/modules; every example type-checked and ran.')
    }
  },
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
