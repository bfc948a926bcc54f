/**
 * Calls per second through something kept in Redis, and the Redis round trips each call costs: real time on a
 * throwaway redis-server, shared by `tsx bench/resilience.ts shared` and `npm run bench:breaker`.
 */
import type Redis from 'ioredis'
import type { RedisClient } from '../src/RedisBudget'

/** A client that counts the scripts it runs: the round trips of the library's own calls. */
export const counting = (redis: Redis): { readonly client: RedisClient; readonly trips: () => number } => {
  let trips = 0
  return {
    client: {
      evalsha: (...args) => (trips++, redis.evalsha(...args)),
      eval: (...args) => (trips++, redis.eval(...args))
    },
    trips: () => trips
  }
}

/** Calls per second of `call`, `concurrency` at a time for `ms` (real time), and the round trips per call. */
export const throughput = async (
  call: () => Promise<unknown>,
  trips: () => number,
  { ms, concurrency }: { readonly ms: number; readonly concurrency: number }
): Promise<readonly [number, number]> => {
  for (let i = 0; i < 200; i++) await call() // warm: the script loaded, the code compiled
  const tripsBefore = trips()
  let calls = 0
  const began = performance.now()
  const end = began + ms
  const loop = async (): Promise<void> => {
    while (performance.now() < end) {
      await call()
      calls++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  return [(calls * 1000) / (performance.now() - began), (trips() - tripsBefore) / calls]
}
