#!/usr/bin/env node
/**
 * The `fp-ts-retry` command (the "bin" of the fp-ts-retry-cli package).
 */
import { main } from './program'

main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code
  })
  .catch((error: unknown) => {
    process.stderr.write(`fp-ts-retry: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exitCode = 1
  })
