import * as fs from 'fs'
import * as path from 'path'
import { deepStrictEqual } from './util'

interface LockEntry {
  readonly dependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
}

/**
 * `npm ci` refuses a lock file that names a package without an entry for it. The registry this project installs
 * from lacks some platform packages (msgpackr-extract's darwin and win32 builds, optional dependencies of bullmq's
 * msgpackr), and `npm install` then writes a lock that names them all but holds entries for the linux ones only:
 * such a lock passes every local run and fails on a fresh clone. This test fails first.
 */
describe('package-lock.json', () => {
  it('should hold an entry for every package that an entry names, so that npm ci accepts it on a fresh clone', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package-lock.json'), 'utf8')) as {
      readonly packages: Record<string, LockEntry>
    }
    const paths = new Set(Object.keys(lock.packages))
    // Node's resolution: the entry's own node_modules, then each enclosing one, up to the root's.
    const resolves = (from: string, name: string): boolean => {
      let base = from
      for (;;) {
        if (paths.has(`${base === '' ? '' : `${base}/`}node_modules/${name}`)) return true
        if (base === '') return false
        const at = base.lastIndexOf('node_modules/')
        base = at <= 0 ? '' : base.slice(0, at - 1)
      }
    }
    const missing = Object.entries(lock.packages).flatMap(([from, entry]) =>
      Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })
        .filter((name) => !resolves(from, name))
        .map((name) => `${from || '(root)'} -> ${name}`)
    )
    deepStrictEqual(missing, [])
  })
})
