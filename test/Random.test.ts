import * as fc from 'fast-check'
import * as Random from '../src/Random'
import { deepStrictEqual, seedArbitrary, throwsRangeError } from './util'

const take = (random: Random.Random, n: number): ReadonlyArray<number> => Array.from({ length: n }, () => random.next())

/** The draws of a sequence outside `[0, 1)`. */
const outsideUnit = (us: ReadonlyArray<number>): ReadonlyArray<number> => us.filter((u) => !(u >= 0 && u < 1))

describe('Random', () => {
  describe('live', () => {
    it('should draw numbers in [0, 1)', () => {
      deepStrictEqual(outsideUnit(take(Random.live, 1000)), [])
    })
  })

  describe('seeded', () => {
    it('should be deterministic: the same seed gives the same sequence', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          deepStrictEqual(take(Random.seeded(seed), 20), take(Random.seeded(seed), 20))
        })
      )
    })

    it('should return independent generators: drawing from one does not move the other', () => {
      const a = Random.seeded(42)
      const b = Random.seeded(42)
      expect(a).not.toBe(b)
      // b still starts at the beginning after a has drawn ten times, and then follows the same path
      const fromA = take(a, 10)
      deepStrictEqual(take(b, 10), fromA)
      deepStrictEqual(take(b, 5), take(a, 5))
    })

    it('should draw numbers in [0, 1) for any seed', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          deepStrictEqual(outsideUnit(take(Random.seeded(seed), 100)), [])
        })
      )
    })

    it('should draw multiples of 2^-53', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          const us = take(Random.seeded(seed), 50)
          deepStrictEqual(
            us.filter((u) => !Number.isInteger(u * 2 ** 53)),
            []
          )
        })
      )
    })

    it('should not repeat one value', () => {
      const us = take(Random.seeded(7), 1000)
      deepStrictEqual(new Set(us).size, 1000)
    })

    it('should give different sequences for different seeds', () => {
      fc.assert(
        fc.property(
          fc.tuple(seedArbitrary, seedArbitrary).filter(([a, b]) => a !== b),
          ([a, b]) => {
            expect(take(Random.seeded(a), 3)).not.toEqual(take(Random.seeded(b), 3))
          }
        )
      )
      // the extremes of the range, whose signed 32-bit forms are -1 and -2^31
      expect(take(Random.seeded(0xffffffff), 3)).not.toEqual(take(Random.seeded(2 ** 31), 3))
    })

    it('should spread the first draws of nearby seeds over [0, 1)', () => {
      // Seeding one generator per client, seeded(0), seeded(1), ..., must give them different first jitters.
      const firsts = Array.from({ length: 100 }, (_, seed) => Random.seeded(seed).next())
      const below = firsts.filter((u) => u < 0.5).length
      expect(below).toBeGreaterThan(25)
      expect(below).toBeLessThan(75)
    })

    it('should accept the whole numbers from 0 to 2^32 - 1', () => {
      deepStrictEqual(outsideUnit(take(Random.seeded(0), 10)), [])
      deepStrictEqual(outsideUnit(take(Random.seeded(0xffffffff), 10)), [])
    })

    it('should reject a seed that is not a whole number from 0 to 2^32 - 1', () => {
      throwsRangeError(() => Random.seeded(1.5), /Random\.seeded: seed .*received 1\.5$/)
      throwsRangeError(() => Random.seeded(NaN), /Random\.seeded: seed .*received NaN$/)
      throwsRangeError(() => Random.seeded(Infinity), /Random\.seeded: seed .*received Infinity$/)
      throwsRangeError(() => Random.seeded(-1), /Random\.seeded: seed .*received -1$/)
      // larger seeds used to collide with smaller ones (the generator keeps 32 bits)
      throwsRangeError(() => Random.seeded(2 ** 32), /Random\.seeded: seed .*received 4294967296$/)
      throwsRangeError(() => Random.seeded(2 ** 53), /Random\.seeded: seed .*received 9007199254740992$/)
    })
  })

  describe('getState', () => {
    it('should be plain JSON data', () => {
      fc.assert(
        fc.property(seedArbitrary, fc.nat(20), (seed, skip) => {
          const r = Random.seeded(seed)
          take(r, skip)
          const state = r.getState()
          deepStrictEqual(JSON.parse(JSON.stringify(state)), state)
        })
      )
    })
  })

  describe('fromState', () => {
    it('should continue the same sequence from a saved state', () => {
      fc.assert(
        fc.property(seedArbitrary, fc.nat(20), (seed, skip) => {
          const r = Random.seeded(seed)
          take(r, skip)
          const copy = Random.fromState(r.getState())
          deepStrictEqual(take(copy, 20), take(r, 20))
        })
      )
    })

    it('should continue the same sequence from a state that went through JSON', () => {
      const r = Random.seeded(3)
      take(r, 4)
      const restored = Random.fromState(JSON.parse(JSON.stringify(r.getState())) as ReadonlyArray<number>)
      deepStrictEqual(take(restored, 10), take(r, 10))
    })

    it('should not share its position with the generator it was saved from', () => {
      const r = Random.seeded(11)
      const state = r.getState()
      const a = Random.fromState(state)
      const b = Random.fromState(state)
      const fromA = take(a, 5)
      deepStrictEqual(take(b, 5), fromA)
      deepStrictEqual(take(r, 5), fromA)
    })

    const revoked = Proxy.revocable([1, 2, 3, 4], {})
    revoked.revoke()

    it.each<readonly [string, unknown, RegExp]>([
      ['three numbers', [1, 2, 3], /received \[1,2,3\]$/],
      ['five numbers', [1, 2, 3, 4, 5], /received \[1,2,3,4,5\]$/],
      ['a fraction', [1, 2, 3, 4.5], /received \[1,2,3,4\.5\]$/],
      ['NaN', [1, 2, 3, NaN], /received \[1,2,3,null\]$/],
      ['2^31', [1, 2, 3, 2 ** 31], /received \[1,2,3,2147483648\]$/],
      ['-2^31 - 1', [1, 2, 3, -(2 ** 31) - 1], /received \[1,2,3,-2147483649\]$/],
      ['a string item', [1, 2, 3, '4'], /received \[1,2,3,"4"\]$/],
      [
        'the all-zero state, which getState never produces (it would draw 0 forever)',
        [0, 0, 0, 0],
        /received \[0,0,0,0\]$/
      ],
      ['a string', 'abcd', /received "abcd"$/],
      ['null', null, /received null$/],
      ['an array-like object', { length: 4 }, /received \{"length":4\}$/],
      ['a sparse array of length 2^32 - 1', new Array(2 ** 32 - 1), /received an array of length 4294967295$/],
      [
        'an array whose item getter throws',
        Object.defineProperty([1, 2, 3, 4], 3, {
          get: () => {
            throw new Error('boom')
          }
        }),
        /received \[object Array\]$/
      ],
      ['a revoked Proxy', revoked.proxy, /received a value that cannot be read$/]
    ])('should reject a malformed state: %s, with a RangeError that shows it', (_, state, received) => {
      throwsRangeError(
        () => Random.fromState(state as ReadonlyArray<number>),
        /^Random\.fromState: state must be 4 signed 32-bit integers, not all zero, received /
      )
      throwsRangeError(() => Random.fromState(state as ReadonlyArray<number>), received)
    })

    it('should read each number of the state once: an array whose getters change cannot slip another state past the check', () => {
      let reads = 0
      const shifty = Object.defineProperty([1, 2, 3, 0], 3, {
        get: () => (reads++ === 0 ? 4 : 2 ** 40)
      }) as ReadonlyArray<number>
      deepStrictEqual(take(Random.fromState(shifty), 5), take(Random.fromState([1, 2, 3, 4]), 5))
      deepStrictEqual(reads, 1)
    })

    it('should accept the extreme signed 32-bit values', () => {
      const state = [-(2 ** 31), 2 ** 31 - 1, 0, 1]
      deepStrictEqual(outsideUnit(take(Random.fromState(state), 10)), [])
    })
  })

  describe('fixed', () => {
    it('should always draw u', () => {
      fc.assert(
        fc.property(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (u) => {
          deepStrictEqual(take(Random.fixed(u), 3), [u, u, u])
        })
      )
    })

    it('should accept 0 and the largest draw below 1', () => {
      deepStrictEqual(Random.fixed(0).next(), 0)
      deepStrictEqual(Random.fixed(1 - 2 ** -53).next(), 1 - 2 ** -53)
    })

    it('should reject a u outside [0, 1)', () => {
      throwsRangeError(() => Random.fixed(1), /Random\.fixed: u .*\[0, 1\).*received 1$/)
      throwsRangeError(() => Random.fixed(-0.1), /Random\.fixed: u .*received -0\.1$/)
      throwsRangeError(() => Random.fixed(NaN), /Random\.fixed: u .*received NaN$/)
      throwsRangeError(() => Random.fixed(Infinity), /Random\.fixed: u .*received Infinity$/)
    })
  })
})
