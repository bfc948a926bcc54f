/**
 * `npm run size`: packs the library and the command, installs each from its tarball into an empty application
 * (the library with fp-ts and io-ts, its peers; the command with the library) and prints what each tarball holds
 * and what each install adds. test/package.test.ts checks the same install against its budget.
 */
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { install, measure, megabytes, pack, repo, type Packed } from './package'

const main = async (): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-size-'))
  try {
    const { library, command } = await pack(dir)
    const { devDependencies } = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as {
      readonly devDependencies: Record<string, string>
    }
    const peers = ['fp-ts', 'io-ts'].map((name) => `${name}@${devDependencies[name]}`)
    await Promise.all([
      install(path.join(dir, 'library'), [library.tarball, ...peers]),
      install(path.join(dir, 'command'), [library.tarball, command.tarball])
    ])
    const describe = (p: Packed): string =>
      `${p.name}@${p.version}: ${p.files.length} files, ${(p.size / 1e3).toFixed(0)} kB packed, ${(p.unpackedSize / 1e3).toFixed(0)} kB unpacked`
    console.log(describe(library))
    console.log(describe(command))
    for (const [what, app] of [
      [`npm install <library tarball> ${peers.join(' ')}`, 'library'],
      ['npm install <library tarball> <command tarball>', 'command']
    ] as const) {
      const size = measure(path.join(dir, app))
      console.log(`${what}: ${size.packages.length} packages, ${megabytes(size.bytes)} MB`)
      if (size.packages.length <= 10) console.log(`  ${size.packages.join(', ')}`)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
