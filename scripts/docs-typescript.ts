/**
 * Makes docs-ts parse with this project's TypeScript instead of the 4.1 that ts-morph 9 bundles, which cannot
 * read variance annotations (`Schedule<in In>`) and would print `any` for every type that mentions them.
 * Imported first by docs.ts, before anything loads ts-morph.
 */
import Module from 'module'

const typescript = require.resolve('typescript')
const internal = Module as unknown as {
  _resolveFilename: (request: string, parent: { filename?: string } | undefined, ...rest: Array<unknown>) => string
}
const resolve = internal._resolveFilename
internal._resolveFilename = function (request, parent, ...rest) {
  return request === 'typescript' && parent?.filename?.includes('@ts-morph')
    ? typescript
    : resolve.call(this, request, parent, ...rest)
}
