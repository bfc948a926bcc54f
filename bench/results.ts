/**
 * bench/RESULTS.md is shared by every benchmark: each writes only its own section, between
 * `<!-- name:start -->` and `<!-- name:end -->`.
 */
import * as fs from 'fs'
import * as path from 'path'

/** The results file beside this one. */
export const RESULTS = path.join(__dirname, 'RESULTS.md')

/**
 * Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` in `file`, creating the file or
 * appending the markers when absent. Other sections (other benchmarks) are left byte for byte.
 */
export const writeSection = (file: string, name: string, body: string): void => {
  const start = `<!-- ${name}:start -->`
  const end = `<!-- ${name}:end -->`
  const block = `${start}\n${body.trim()}\n${end}`
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmark results\n'
  const i = current.indexOf(start)
  const j = current.indexOf(end)
  const next =
    i >= 0 && j > i
      ? current.slice(0, i) + block + current.slice(j + end.length)
      : `${current.replace(/\s*$/, '')}\n\n${block}\n`
  fs.writeFileSync(file, next)
}
