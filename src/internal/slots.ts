/**
 * A fleet bulkhead's slots in Redis (`RedisBulkhead`): the script (a body for `deadlinedScript`, which gives it the
 * server's time as `now` and its arguments as `ARGV`), and what its answer means. Apart, so that the
 * tests check the script against a reference model, operation by operation.
 *
 * @internal
 */
import * as validate from './validate'

/**
 * The slots in one sorted set: a member per slot taken, scored by when its lease runs out (ms on the server's
 * clock); a member whose score has passed is a slot free again, removed by the next call. ARGV[1] is the operation:
 * `e` enter (max, lease, member): the member added if fewer than max are held; `h` heartbeat (lease, members...):
 * each member still held gets a new lease (one gone is not added back: its slot may have been given to another
 * since); `r` release (member); `c` count. Answers { 1 when an enter got its slot else 0, slots held after }.
 * The key expires when its last lease runs out, when it is the same as no key.
 */
export const SLOTS = `
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local held = redis.call('ZCARD', key)
local function expire()
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIRE', key, math.max(1, math.ceil(tonumber(last[2]) - now))) end
end
local op = ARGV[1]
if op == 'e' then
  if held >= tonumber(ARGV[2]) then return { 0, held } end
  redis.call('ZADD', key, now + tonumber(ARGV[3]), ARGV[4])
  expire()
  return { 1, held + 1 }
elseif op == 'h' then
  local ends = now + tonumber(ARGV[2])
  for i = 3, #ARGV do redis.call('ZADD', key, 'XX', ends, ARGV[i]) end
  expire()
elseif op == 'r' then
  held = held - redis.call('ZREM', key, ARGV[2])
end
return { 0, held }
`

/** Reads the script's answer; anything else is a `TypeError` (taken as Redis failing). */
export const decode = (answer: unknown): { readonly granted: boolean; readonly held: number } => {
  const [granted, held] = Array.isArray(answer) ? answer.map(Number) : []
  if (!((granted === 0 || granted === 1) && validate.isCount(held))) {
    throw new TypeError(`RedisBulkhead: the script answered ${JSON.stringify(answer)}`)
  }
  return { granted: granted === 1, held }
}
