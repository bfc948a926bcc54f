import * as assert from 'assert'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import * as TE from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import * as FileStore from '../src/FileStore'
import * as Random from '../src/Random'
import * as Retry from '../src/Retry'
import { retrying } from '../src/Retry'
import * as RetryState from '../src/RetryState'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { waitFor } from './support/wait'
import { deepStrictEqual } from './util'

let dir: string

/** The names in the temporary directory, sorted (spread into this realm's array: jest compares prototypes). */
const ls = (): ReadonlyArray<string> => [...fs.readdirSync(dir)].sort()

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-filestore-'))
})

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * Waits until a run is asleep on the clock, past its real I/O: with no time limit of its own (issue 33: 400 turns of
 * 5 ms were two seconds, which a loaded machine's writes can take), jest's timeout bounds it.
 */
const untilAsleep = (clock: TestClock.TestClock): Promise<void> =>
  waitFor(() => clock.pending > 0, { what: 'the run to go to sleep' })

const jittered = pipe(Schedule.exponential(100), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(5)))

/** A few states of a real run (seeded, so they carry a generator position). */
const statesOfARun = (): ReadonlyArray<RetryState.RetryState> => {
  const states: Array<RetryState.RetryState> = [RetryState.start(jittered, 1_700_000_000_000)]
  let random: Random.Random = Random.seeded(11)
  for (;;) {
    const last = states[states.length - 1]
    const step = RetryState.next(jittered, last, 'down', last.dueAt + 25, random)
    if (E.isLeft(step) || step.right._tag === 'Done') return states
    states.push(step.right.state)
    random = Random.fromState(step.right.state.random ?? [])
  }
}

const isCorrupt =
  (reason: FileStore.CorruptState['reason']) =>
  (e: unknown): boolean => {
    assert.ok(e instanceof FileStore.CorruptState, `expected a CorruptState, got ${String(e)}`)
    assert.strictEqual(e._tag, 'CorruptState')
    assert.strictEqual(e.name, 'CorruptState')
    assert.strictEqual(e.reason, reason)
    return true
  }

describe('FileStore', () => {
  describe('make', () => {
    it('should touch nothing until used', () => {
      const store = FileStore.make(path.join(dir, 'missing-dir', 'state.json'))
      deepStrictEqual(store.path, path.join(dir, 'missing-dir', 'state.json'))
      deepStrictEqual(ls(), [])
    })

    it.each([[''], [undefined], [42]])('should reject %j, which is not a path, with a TypeError naming it', (file) => {
      assert.throws(
        () => FileStore.make(file as unknown as string),
        (e: unknown) =>
          e instanceof TypeError && e.message.startsWith('FileStore.make: file must be a non-empty path, received ')
      )
    })
  })

  describe('load', () => {
    it('should be none when there is no file', async () => {
      deepStrictEqual(await FileStore.make(path.join(dir, 'state.json')).load(), O.none)
    })

    it('should give back every state saved, as it was', async () => {
      const store = FileStore.make(path.join(dir, 'state.json'))
      for (const state of statesOfARun()) {
        await store.save(state)
        deepStrictEqual(await store.load(), O.some(state))
      }
    })

    it('should read what another store of the same file saved (another process)', async () => {
      const file = path.join(dir, 'state.json')
      const [, state] = statesOfARun()
      await FileStore.make(file).save(state)
      deepStrictEqual(await FileStore.make(file).load(), O.some(state))
    })

    it('should reject a file that is not JSON with a CorruptState naming the file', async () => {
      const file = path.join(dir, 'state.json')
      for (const text of ['', '{"schedule": "recurs(3)", ', 'not json at all']) {
        fs.writeFileSync(file, text)
        await assert.rejects(FileStore.make(file).load(), (e: unknown) => {
          isCorrupt('not JSON')(e)
          assert.strictEqual((e as FileStore.CorruptState).path, file)
          assert.strictEqual(
            (e as FileStore.CorruptState).message,
            `FileStore: ${file} does not hold a valid RetryState (not JSON)`
          )
          return true
        })
      }
    })

    it('should reject JSON that is not a RetryState with a CorruptState listing the bad fields', async () => {
      const file = path.join(dir, 'state.json')
      const [, state] = statesOfARun()
      fs.writeFileSync(file, JSON.stringify({ ...state, iterNumber: -1, random: [0, 0, 0, 0] }))
      await assert.rejects(FileStore.make(file).load(), (e: unknown) => {
        isCorrupt('not a RetryState')(e)
        deepStrictEqual((e as FileStore.CorruptState).errors, ['iterNumber: -1', 'random: [0,0,0,0]'])
        assert.match(
          (e as FileStore.CorruptState).message,
          /does not hold a valid RetryState \(not a RetryState: iterNumber: -1; random: \[0,0,0,0\]\)$/
        )
        return true
      })
    })

    // Regression: a stored state whose scheduleState was nested ~3,000 arrays deep (a few kB of JSON) crashed
    // load with "Maximum call stack size exceeded" (a RangeError) instead of rejecting with a CorruptState.
    it('should reject a scheduleState nested 3,000 arrays deep with a CorruptState, not a stack overflow', async () => {
      const file = path.join(dir, 'state.json')
      const stored = RetryState.RetryStateCodec.encode(RetryState.start(Schedule.stop, 0)) as unknown as Record<
        string,
        unknown
      >
      assert.ok('scheduleState' in stored)
      const deep = `${'['.repeat(3_000)}${']'.repeat(3_000)}`
      fs.writeFileSync(
        file,
        JSON.stringify({ ...stored, scheduleState: 0 }).replace('"scheduleState":0', `"scheduleState":${deep}`)
      )
      await assert.rejects(FileStore.make(file).load(), (e: unknown) => {
        isCorrupt('not a RetryState')(e)
        assert.ok(
          (e as FileStore.CorruptState).errors.some((line) => line.startsWith('scheduleState: ')),
          String(e)
        )
        return true
      })
    })

    it('should never crash on any file content: none of them loads as something else than a CorruptState or a state', async () => {
      const file = path.join(dir, 'state.json')
      const store = FileStore.make(file)
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string(),
            fc.jsonValue().map((v) => JSON.stringify(v) ?? '')
          ),
          async (text) => {
            fs.writeFileSync(file, text)
            const loaded = await store.load().then(
              (value) => E.right(value),
              (e: unknown) => E.left(e)
            )
            if (E.isLeft(loaded)) assert.ok(loaded.left instanceof FileStore.CorruptState, String(loaded.left))
            else assert.ok(O.isSome(loaded.right) && RetryState.RetryStateCodec.is(loaded.right.value))
          }
        ),
        { numRuns: 100 }
      )
    })

    it('should pass on an error other than a missing file (here: the path is a directory)', async () => {
      const file = path.join(dir, 'state.json')
      fs.mkdirSync(file)
      await assert.rejects(FileStore.make(file).load(), (e: unknown) => !(e instanceof FileStore.CorruptState))
    })
  })

  describe('save', () => {
    it('should write the state as JSON, and leave no temporary file behind', async () => {
      const file = path.join(dir, 'state.json')
      const [, state] = statesOfARun()
      await FileStore.make(file).save(state)
      deepStrictEqual(
        JSON.parse(fs.readFileSync(file, 'utf8')) as unknown,
        JSON.parse(JSON.stringify(state)) as unknown
      )
      deepStrictEqual(ls(), ['state.json'])
    })

    it('should replace the file by a rename: a reader holding the old file still reads the old state', async () => {
      const file = path.join(dir, 'state.json')
      const store = FileStore.make(file)
      const [first, second] = statesOfARun()
      await store.save(first)
      const before = fs.statSync(file).ino
      const reader = fs.openSync(file, 'r')
      try {
        await store.save(second)
        // a new file took the name (an in-place write would keep the inode and change what the reader sees)
        assert.notStrictEqual(fs.statSync(file).ino, before)
        deepStrictEqual(
          JSON.parse(fs.readFileSync(reader, 'utf8')) as unknown,
          JSON.parse(JSON.stringify(first)) as unknown
        )
      } finally {
        fs.closeSync(reader)
      }
      deepStrictEqual(await store.load(), O.some(second))
    })

    it('a kill mid-write (a stray or truncated temporary file) should leave the previous state readable', async () => {
      const file = path.join(dir, 'state.json')
      const store = FileStore.make(file)
      const [first, second] = statesOfARun()
      await store.save(first)
      // what a save killed before its rename leaves: a temporary file, complete or cut short
      const json = JSON.stringify(second)
      fs.writeFileSync(path.join(dir, '.state.json.deadbeef0001.tmp'), json.slice(0, json.length >> 1))
      fs.writeFileSync(path.join(dir, '.state.json.deadbeef0002.tmp'), json)
      fs.writeFileSync(path.join(dir, '.state.json.deadbeef0003.tmp'), '')
      deepStrictEqual(await store.load(), O.some(first))
      // the next save goes through, and clear removes the leftovers
      await store.save(second)
      deepStrictEqual(await store.load(), O.some(second))
      await store.clear()
      deepStrictEqual(ls(), [])
    })

    it('should reject a value that is not a RetryState, writing nothing', async () => {
      const file = path.join(dir, 'state.json')
      const [, state] = statesOfARun()
      await assert.rejects(
        FileStore.make(file).save({ ...state, random: [1, 2] }),
        (e: unknown) =>
          e instanceof TypeError && e.message.startsWith('FileStore.save: state must be a RetryState, received {')
      )
      deepStrictEqual(ls(), [])
    })

    it('should reject when the directory does not exist, leaving nothing behind', async () => {
      const store = FileStore.make(path.join(dir, 'missing', 'state.json'))
      await assert.rejects(
        store.save(RetryState.start(Schedule.stop, 0)),
        (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT'
      )
      deepStrictEqual(ls(), [])
    })

    it('concurrent saves should each be atomic: the file holds one of them, whole', async () => {
      const file = path.join(dir, 'state.json')
      const store = FileStore.make(file)
      const states = statesOfARun()
      await Promise.all(states.map((s) => store.save(s)))
      const loaded = await store.load()
      assert.ok(O.isSome(loaded) && states.some((s) => JSON.stringify(s) === JSON.stringify(loaded.value)))
      deepStrictEqual(ls(), ['state.json'])
    })
  })

  describe('clear', () => {
    it('should remove the file, and be a no-op when there is none', async () => {
      const file = path.join(dir, 'state.json')
      const store = FileStore.make(file)
      await store.clear()
      await store.save(RetryState.start(Schedule.stop, 0))
      await store.clear()
      deepStrictEqual(await store.load(), O.none)
      await store.clear()
      deepStrictEqual(ls(), [])
    })

    it("should leave other files alone, including another store's temporary files", async () => {
      fs.writeFileSync(path.join(dir, 'other.json'), '{}')
      fs.writeFileSync(path.join(dir, '.other.json.abc.tmp'), '{}')
      const store = FileStore.make(path.join(dir, 'state.json'))
      await store.save(RetryState.start(Schedule.stop, 0))
      await store.clear()
      deepStrictEqual(ls(), ['.other.json.abc.tmp', 'other.json'])
    })
  })

  describe('calls of one store', () => {
    // Regression: a clear while a save of the same store was in flight removed the save's temporary file, and the
    // save rejected with ENOENT.
    it('should take turns in call order: save then clear leaves nothing, clear then save leaves the state', async () => {
      const state = RetryState.start(Schedule.stop, 0)
      for (let i = 0; i < 20; i++) {
        const store = FileStore.make(path.join(dir, `state-${i}.json`))
        await Promise.all([store.save(state), store.clear()])
        deepStrictEqual(await store.load(), O.none)
        await Promise.all([store.clear(), store.save(state)])
        deepStrictEqual(await store.load(), O.some(state))
      }
      deepStrictEqual(
        ls().filter((name) => name.endsWith('.tmp')),
        []
      )
    })

    it('a call that fails should not stop the next one', async () => {
      const store = FileStore.make(path.join(dir, 'state.json'))
      const bad = store.save(null as unknown as RetryState.RetryState)
      const good = store.save(RetryState.start(Schedule.stop, 0))
      await assert.rejects(bad, TypeError)
      await good
      deepStrictEqual(await store.load(), O.some(RetryState.start(Schedule.stop, 0)))
    })
  })

  describe('temporary files', () => {
    /** The name of a temporary file of the store of `name`, as `save` makes them. */
    const tempOf = (name: string, hex: string): string => `.${name}.${hex}.tmp`

    it('save should write its temporary file as .<name>.<12 hex digits>.tmp, beside the file', async () => {
      const opened: Array<string> = []
      const realOpen = fs.promises.open
      const spy = jest.spyOn(fs.promises, 'open').mockImplementation((file, flags, mode) => {
        if (flags === 'wx') opened.push(String(file)) // not the directory, opened to be flushed
        return realOpen(file, flags, mode)
      })
      try {
        await FileStore.make(path.join(dir, 'order-17.json')).save(RetryState.start(Schedule.stop, 0))
      } finally {
        spy.mockRestore()
      }
      deepStrictEqual(opened.length, 1)
      deepStrictEqual(path.dirname(opened[0]), dir)
      assert.match(path.basename(opened[0]), /^\.order-17\.json\.[0-9a-f]{12}\.tmp$/)
    })

    // Regression: the temporary files of `order-17` were matched by the prefix `.order-17.`, which also begins
    // those of `order-17.2`: a clear() of `order-17` deleted them, and the concurrent save of `order-17.2`
    // rejected (ENOENT) when it came to rename its temporary file.
    it('clear() of the store order-17 should not delete the temporary file of a concurrent save of order-17.2', async () => {
      const a = FileStore.make(path.join(dir, 'order-17'))
      const b = FileStore.make(path.join(dir, 'order-17.2'))
      const state = RetryState.start(Schedule.stop, 0)
      const realOpen = fs.promises.open
      let cleared = 0
      // a clears while b's temporary file exists: between b's open and its rename
      const spy = jest.spyOn(fs.promises, 'open').mockImplementation(async (file, flags, mode) => {
        const handle = await realOpen(file, flags, mode)
        if (path.basename(String(file)).startsWith('.order-17.2.')) {
          await a.clear()
          cleared++
        }
        return handle
      })
      try {
        await b.save(state)
      } finally {
        spy.mockRestore()
      }
      deepStrictEqual(cleared, 1)
      deepStrictEqual(await b.load(), O.some(state))
      deepStrictEqual(ls(), ['order-17.2'])
    })

    it("two stores in one folder should never touch each other's files, whatever their names", async () => {
      // Names made of few characters, dots among them, so that one is often a prefix of the other.
      const name = fc
        .array(fc.constantFrom('a', '1', '.', '-'), { minLength: 1, maxLength: 8 })
        .map((chars) => chars.join(''))
        .filter((n) => n !== '.' && n !== '..')
      const hex = fc
        .array(fc.constantFrom(...'0123456789abcdef'), { minLength: 12, maxLength: 12 })
        .map((c) => c.join(''))
      let run = 0
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(name, name).filter(([a, b]) => a !== b),
          fc.uniqueArray(hex, { minLength: 1, maxLength: 3 }),
          async ([nameA, nameB], hexes) => {
            const folder = path.join(dir, String(run++))
            fs.mkdirSync(folder)
            const a = FileStore.make(path.join(folder, nameA))
            const b = FileStore.make(path.join(folder, nameB))
            const state = RetryState.start(Schedule.stop, 0)
            await a.save(state)
            await b.save(state)
            // what saves killed mid-write leave behind, for each store
            for (const h of hexes) {
              fs.writeFileSync(path.join(folder, tempOf(nameA, h)), '')
              fs.writeFileSync(path.join(folder, tempOf(nameB, h)), '')
            }
            const filesOf = (n: string): ReadonlyArray<string> => [n, ...hexes.map((h) => tempOf(n, h))].sort()
            await a.clear()
            deepStrictEqual([...fs.readdirSync(folder)].sort(), filesOf(nameB))
            deepStrictEqual(await b.load(), O.some(state))
            await b.clear()
            deepStrictEqual([...fs.readdirSync(folder)], [])
          }
        ),
        { numRuns: 100, examples: [[['order-17', 'order-17.2'], ['0123456789ab']]] }
      )
    })

    it('clear should leave alone names that only look like temporary files: wrong length, not hex, upper case', async () => {
      const store = FileStore.make(path.join(dir, 'state.json'))
      const lookalikes = [
        '.state.json.0123456789a.tmp',
        '.state.json.0123456789abc.tmp',
        '.state.json.0123456789ag.tmp',
        '.state.json.0123456789AB.tmp',
        '.state.json.0123456789ab.tmp.bak'
      ]
      for (const n of lookalikes) fs.writeFileSync(path.join(dir, n), '')
      fs.writeFileSync(path.join(dir, '.state.json.0123456789ab.tmp'), '')
      await store.clear()
      deepStrictEqual(ls(), [...lookalikes].sort())
    })
  })

  describe('persisting a run', () => {
    it('onRetry saving driver.snapshot() should keep the latest state, from which a resumed run goes on', async () => {
      const file = path.join(dir, 'state.json')
      const store = FileStore.make(file)
      const schedule = Schedule.fromDelays([100, 200, 400])
      const persist: Retry.Hooks<unknown>['onRetry'] = ({ driver }) => store.save(driver.snapshot())
      let calls = 0
      const action: TE.TaskEither<string, number> = async () => (++calls <= 2 ? E.left('down') : E.right(calls))

      // the first process: two failures, then it is "stopped" during the second sleep
      const controller = new AbortController()
      const clock = TestClock.make()
      const first = pipe(action, retrying(schedule, { clock, onRetry: persist, signal: controller.signal }))()
      await untilAsleep(clock) // the write is real I/O, which the test clock does not wait for
      await clock.advance(100)
      await untilAsleep(clock)
      controller.abort()
      deepStrictEqual(await first, E.left('down'))
      const saved = await store.load()
      assert.ok(O.isSome(saved))
      if (O.isNone(saved)) return
      deepStrictEqual([saved.value.iterNumber, saved.value.dueAt], [2, 300])

      // the next process resumes from the file
      const next = TestClock.make(200)
      const resumed = pipe(action, retrying(schedule, { clock: next, resume: saved.value, onRetry: persist }))()
      await next.runAll()
      deepStrictEqual(await resumed, E.right(3))
      deepStrictEqual(next.sleeps, [100])
      await store.clear()
      deepStrictEqual(await store.load(), O.none)
    })
  })
})
