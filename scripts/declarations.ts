/**
 * The shipped declarations without their `@example` blocks: the examples are a third of lib/'s declarations and
 * keep an install of the library over its size budget (test/package.test.ts); editors still show each export's
 * description, details, category and version, and the examples stay in the sources, where docs-ts type-checks and
 * runs them, and on the module pages (docs/modules). Run after every build of the declarations (`npm run build`,
 * scripts/package.ts's `build`).
 */
import * as fs from 'fs'
import * as path from 'path'

/**
 * The JSDoc of `text` without its `@example` blocks: from a line ` * @example` to the line before the next tag or
 * the comment's end (the blank comment line before it stays, to part the text from the tags). The comments are
 * docs-ts's: one tag a line.
 */
export const withoutExamples = (text: string): string =>
  text.replace(/^[ \t]*\* @example\b[\s\S]*?(?=^[ \t]*\* @\w|^[ \t]*\*\/)/gm, '')

/** Rewrites every `.d.ts` under `dir` without its examples. */
export const stripExamples = (dir: string): void => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) stripExamples(file)
    else if (entry.name.endsWith('.d.ts')) {
      const text = fs.readFileSync(file, 'utf8')
      const stripped = withoutExamples(text)
      if (stripped !== text) fs.writeFileSync(file, stripped)
    }
  }
}

if (require.main === module) stripExamples(path.join(__dirname, '..', 'lib'))
