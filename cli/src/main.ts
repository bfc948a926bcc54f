#!/usr/bin/env node
/**
 * The `fp-ts-retry` command (package.json "bin"). Its dependencies are optional dependencies of the package, so
 * that a project that only imports the library can leave them out (`npm install --omit=optional`): this entry
 * checks for commander before loading anything else, and the plots load vega only when asked for one.
 */
const missing = ['commander'].filter((name) => {
  try {
    require.resolve(name)
    return false
  } catch {
    return true
  }
})

if (missing.length > 0) {
  process.stderr.write(
    `fp-ts-retry: the command line needs the optional dependency ${missing.join(', ')}, which is not installed ` +
      '(installed with --omit=optional?). Install it with: npm install commander@13.1.0\n'
  )
  process.exitCode = 1
} else {
  import('./program.js')
    .then(({ main }) => main(process.argv.slice(2)))
    .then((code) => {
      process.exitCode = code
    })
    .catch((error: unknown) => {
      process.stderr.write(`fp-ts-retry: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      process.exitCode = 1
    })
}
