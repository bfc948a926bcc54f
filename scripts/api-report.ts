/**
 * The reviewed API report: API Extractor records the public surface of every entry point of the package (the index,
 * and each module reached by its subpath only) in `etc/api/<entry>.api.md`, from the declarations in `lib/`.
 *
 *   npm run api              updates lib/, then rewrites the reports (commit them: every change to the API is a diff)
 *   npm run api -- --check   updates lib/, then fails when a report is not what the declarations say (`npm test`)
 *
 * lib/ is updated by an incremental build (scripts/package.ts): after `npm ci`, whose prepare built it, nothing is
 * compiled again. One compiler program, over every entry, serves all the reports.
 *
 * The index re-exports every other module as a namespace, so its report covers them; the modules that load an
 * optional peer are reached by their subpath alone and have a report of their own.
 */
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
  type IConfigFile
} from '@microsoft/api-extractor'
import * as fs from 'fs'
import * as path from 'path'
import { build } from './package'

const root = path.join(__dirname, '..')
const check = process.argv.includes('--check')

/**
 * The entry points: the index, and the public modules it does not re-export (those that load an optional peer,
 * reached by their subpath only: test/index.test.ts checks which they are), read from the sources.
 */
const indexSource = fs.readFileSync(path.join(root, 'src', 'index.ts'), 'utf8')
const entries: ReadonlyArray<string> = [
  'index',
  ...fs
    .readdirSync(path.join(root, 'src'))
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
    .map((file) => file.slice(0, -'.ts'.length))
    .filter((name) => !indexSource.includes(`from './${name}'`))
    .sort()
]

const configOf = (entry: string): IConfigFile => ({
  projectFolder: root,
  mainEntryPointFilePath: `<projectFolder>/lib/${entry}.d.ts`,
  compiler: {
    overrideTsconfig: {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        module: 'commonjs',
        moduleResolution: 'node',
        strict: true,
        skipLibCheck: true,
        types: ['node']
      },
      files: [`lib/${entry}.d.ts`]
    }
  },
  apiReport: {
    enabled: true,
    reportFileName: `${entry === 'index' ? 'fp-ts-retry' : entry}.api.md`,
    reportFolder: '<projectFolder>/etc/api/',
    reportTempFolder: '<projectFolder>/temp/api/'
  },
  docModel: { enabled: false },
  dtsRollup: { enabled: false },
  tsdocMetadata: { enabled: false },
  messages: {
    // The docs are docs-ts's (its own tags, checked by `npm run docs`): TSDoc's opinions of them are not reported.
    tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    extractorMessageReporting: {
      default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
      // No release tags (@public, @beta): every export of a 1.x release is public.
      'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      // docs-ts links a module's own names ({@link upTo}); `npm run docs` checks those links, not this report.
      'ae-unresolved-link': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      // A subpath module's types name other public modules' (Durable.WorkerError): those have reports of their own.
      'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      // A record's fields are documented in its JSDoc's Details, as docs-ts shows them, not one comment each.
      'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false }
    },
    compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } }
  }
})

const main = async (): Promise<void> => {
  await build('.')
  if (!check) fs.mkdirSync(path.join(root, 'etc', 'api'), { recursive: true })
  const configs = entries.map((entry) =>
    ExtractorConfig.prepare({
      configObject: configOf(entry),
      configObjectFullPath: path.join(root, 'api-extractor.json'),
      packageJsonFullPath: path.join(root, 'package.json')
    })
  )
  // one program for the eight reports: each would otherwise read the declarations, the peers' included, again
  const compilerState = CompilerState.create(configs[0], {
    additionalEntryPoints: configs.map((config) => config.mainEntryPointFilePath)
  })
  let failed = false
  entries.forEach((entry, i) => {
    const result = Extractor.invoke(configs[i], {
      localBuild: !check,
      showVerboseMessages: false,
      compilerState,
      messageCallback: (message: ExtractorMessage) => {
        // the report says what changed; the console need not say it line by line
        if (message.logLevel === ExtractorLogLevel.Warning) message.handled = true
      }
    })
    if (!result.succeeded || (check && result.apiReportChanged)) {
      failed = true
      process.stderr.write(
        check && result.apiReportChanged
          ? `api-report: the public API of ${entry} changed: run \`npm run api\` and commit etc/api/ after review\n`
          : `api-report: ${entry}: ${result.errorCount} errors\n`
      )
    }
  })
  fs.rmSync(path.join(root, 'temp'), { recursive: true, force: true })
  if (failed) process.exit(1)
  process.stdout.write(
    `api-report: ${entries.length} reports ${check ? 'match the declarations' : 'written to etc/api/'}\n`
  )
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
