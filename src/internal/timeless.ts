/**
 * Which schedules never look at the time they are given (`now` and `status.elapsed`), so that the runner can
 * leave the clock alone when nothing else would see the time: a clock read costs about as much as awaiting an
 * attempt that settles at once.
 *
 * A schedule is marked by the function that built it: the delay constructors (they see only their own state
 * and the random draws) and the combinators that do not read the time themselves, when every schedule they
 * combine is marked. `make`, `fromPolicy` and `upTo` are never marked: they may read it. A WeakSet rather than
 * a field keeps the `Schedule` type and its values as they are.
 *
 * @internal
 */

const timeless = new WeakSet<object>()

/** Marks `schedule` as never reading the time when `ignoresTime` holds (the default), and returns it. */
export const markTimeless = <S extends object>(schedule: S, ignoresTime = true): S => {
  if (ignoresTime) timeless.add(schedule)
  return schedule
}

/** Whether `schedule` is known never to read the time. */
export const isTimeless = (schedule: object): boolean => timeless.has(schedule)
