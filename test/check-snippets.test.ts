import * as fc from 'fast-check'
import * as fs from 'fs'
import * as path from 'path'
import { blocksOf, examplesOf, jitterBeforeCap, ON_PURPOSE } from '../scripts/check-snippets'
import { deepStrictEqual } from './util'

describe('scripts/check-snippets', () => {
  describe('jitterBeforeCap', () => {
    // Regression (issue 18, defect 13): the fleet guide jittered before it capped, and 96% of retries 10-15 landed
    // on exactly the cap, in lockstep.
    it("should report the line of the jitter in the fleet guide's old schedule", () => {
      const code = [
        "import { pipe } from 'fp-ts/function'",
        'const schedule = pipe(',
        '  Schedule.exponential(1_000),',
        '  Schedule.fullJitter, // jitter',
        '  Schedule.capped(5 * 60_000),',
        '  Schedule.upTo(24 * 3_600_000)',
        ')',
        'const webhook = pipe(Schedule.exponential(1_000), Schedule.fullJitter, Schedule.capped(60_000))'
      ].join('\n')
      deepStrictEqual(jitterBeforeCap(code), [4, 8])
    })

    it('should let the cap before the jitter through, with or without a namespace', () => {
      deepStrictEqual(jitterBeforeCap('pipe(exponential(100), capped(1000), fullJitter)'), [])
      deepStrictEqual(jitterBeforeCap('pipe(S.exponential(100), S.capped(1000), S.equalJitter, S.upTo(5))'), [])
    })

    it('should refuse every jitter, in pipe and in flow, however far before the cap', () => {
      deepStrictEqual(jitterBeforeCap('pipe(exponential(100), equalJitter, capped(1000))'), [1])
      deepStrictEqual(jitterBeforeCap('pipe(exponential(100), jittered({ min: 0.5 }), minDelay(1), capped(1000))'), [1])
      deepStrictEqual(jitterBeforeCap('flow(Schedule.fullJitter, Schedule.intersect(recurs(3)), Schedule.capped(9))'), [
        1
      ])
    })

    it('should count only the arguments of the pipe itself: a cap inside a nested schedule caps that one', () => {
      deepStrictEqual(jitterBeforeCap('pipe(a, fullJitter, union(pipe(b, capped(10))))'), [])
      deepStrictEqual(jitterBeforeCap('pipe(a, union(pipe(b, fullJitter, capped(10))), capped(20))'), [1])
      deepStrictEqual(jitterBeforeCap("pipe(a, f('fullJitter, ('), capped(10))"), [])
      deepStrictEqual(jitterBeforeCap('pipe(a, /* fullJitter, */ capped(10))'), [])
    })

    it(`should let a pipe marked "${ON_PURPOSE}" through`, () => {
      deepStrictEqual(jitterBeforeCap(`const wrong = pipe(a, fullJitter, capped(10)) // ${ON_PURPOSE}`), [])
    })

    it('should report exactly the pipes where some jitter comes before some cap', () => {
      // one argument a line: the jitter's line is 3 + its index
      const kinds = [
        'fullJitter',
        'equalJitter',
        'jittered({ min: 0 })',
        'capped(100)',
        'recurs(3)',
        'pipe(b, capped(1))'
      ]
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...kinds), { maxLength: 6 }), (args) => {
          const jitter = args.findIndex((a) => /Jitter|jittered/.test(a))
          const expected = jitter !== -1 && args.slice(jitter + 1).includes('capped(100)') ? [3 + jitter] : []
          deepStrictEqual(jitterBeforeCap(`\npipe(\n  exponential(1), ${args.join(',\n  ')}\n)`), expected)
        })
      )
    })
  })

  describe('examplesOf', () => {
    it('should give each @example of a JSDoc comment with the line of the file it starts on', () => {
      const source = ['/**', ' * What.', ' *', ' * @example', ' * const a = 1', ' *', ' * @since 0.1.0', ' */'].join(
        '\n'
      )
      deepStrictEqual(examplesOf(source), [{ line: 5, code: 'const a = 1\n' }])
    })
  })

  // The whole rule runs in `npm run docs`, over every guide and module; these files are checked here too.
  it('should find no jitter before a cap in the ts blocks of the README and the fleet, jitter, HTTP guides', () => {
    for (const file of ['README.md', 'docs/fleet.md', 'docs/jitter.md', 'docs/http.md', 'docs/testing.md']) {
      const blocks = blocksOf(fs.readFileSync(path.join(__dirname, '..', file), 'utf8'))
      deepStrictEqual([file, blocks.flatMap((b) => jitterBeforeCap(b.code))], [file, []])
    }
  })
})
