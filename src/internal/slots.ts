/**
 * A fleet bulkhead's slots and line in Redis (`RedisBulkhead`): the script (a body for `deadlinedScript`, which
 * gives it the server's time as `now` and its arguments as `ARGV`), and what its answer means. Apart, so that the
 * tests check the script against a reference model, operation by operation.
 *
 * @internal
 */
import * as validate from './validate'

/**
 * One sorted set at one key (so that a script touches one key, at home on a Redis Cluster), in three bands of
 * scores, ms on the server's clock, `BAND` apart so that one range reads one kind:
 *
 * - a slot taken: its member, scored by when its lease runs out (below `BAND`);
 * - a waiter's lease: `l<ticket>`, scored `BAND` + when it runs out (in whole ms: a score that size keeps no fraction
 *   exactly, and the key's expiry must not outlast it);
 * - a waiter's place in the line: `q<ticket>`, scored `2 BAND` + when it joined (or 1 more than the youngest place,
 *   when that is later: several join in one call), so the oldest comes first.
 *
 * A lease whose score has passed is removed by the next call: a slot free again, a waiter gone (a process that died
 * renews nothing), whose place leaves the line when a walk meets it. A free slot goes to the oldest live waiter of
 * the fleet: a caller may take one only while fewer live waiters are ahead of it than slots are free.
 *
 * ARGV[1] is the operation:
 * - `e` enter (max, lease, ticket...): for each ticket in order, oldest first, a slot (named by the ticket) if the
 *   rule lets it in, else its place in the line kept, or taken at the back (a ticket with no live lease: new, or
 *   whose lease ran out), and its lease renewed; no ticket is let in after one that is not. A ticket `-<id>` is a
 *   call that does not wait: let in by the same rule, else left out of the line.
 * - `h` heartbeat (lease, slots, members...): the first `slots` members are slots, each still held given a new lease
 *   (one gone is not added back: its slot may be another's since), the others tickets whose leases are renewed alike.
 * - `r` release (ids...): each id's slot, lease and place removed, whichever it has.
 * - `c` count.
 *
 * Answers { calls let in (`e`), slots held, waiters live, the slot members found gone... }: gone are the slots a
 * heartbeat (`h`) finds gone, and the ids a release (`r`) finds no slot of (a waiter's, or a slot whose lease ran
 * out). The key expires when its last lease runs out, when it is the same as no key (and a change that leaves no
 * lease deletes it).
 */
export const SLOTS = `
local key = KEYS[1]
local BAND = 1e13
local LINE = 2 * BAND
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
redis.call('ZREMRANGEBYSCORE', key, BAND, BAND + now)
local held = redis.call('ZCOUNT', key, '-inf', '(' .. BAND)
local function waiting() return redis.call('ZCOUNT', key, BAND, '(' .. LINE) end
local function expire()
  local ends = 0
  local slot = redis.call('ZREVRANGEBYSCORE', key, '(' .. BAND, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if slot[2] then ends = tonumber(slot[2]) end
  local lease = redis.call('ZREVRANGEBYSCORE', key, '(' .. LINE, BAND, 'WITHSCORES', 'LIMIT', 0, 1)
  if lease[2] then ends = math.max(ends, tonumber(lease[2]) - BAND) end
  -- no lease left: the places left are all dead waiters'
  if ends > 0 then redis.call('PEXPIRE', key, math.max(1, math.ceil(ends - now))) else redis.call('DEL', key) end
end
-- whether the place 'mine' (nil: a call not in the line) is among the first 'free' live places; a place whose
-- lease has run out leaves the line when met
local function eligible(mine, free)
  local ahead = 0
  while ahead < free do
    local place = redis.call('ZRANGEBYSCORE', key, LINE, '+inf', 'LIMIT', ahead, 1)[1]
    if place == nil or place == mine then return true end
    if redis.call('ZSCORE', key, 'l' .. string.sub(place, 2)) then ahead = ahead + 1
    else redis.call('ZREM', key, place) end
  end
  return false
end
local op = ARGV[1]
if op == 'e' then
  local max, lease = tonumber(ARGV[2]), tonumber(ARGV[3])
  local entered, open = 0, true
  for i = 4, #ARGV do
    local ticket = ARGV[i]
    local waits = string.sub(ticket, 1, 1) ~= '-'
    local mine = nil
    if waits then
      if redis.call('ZSCORE', key, 'l' .. ticket) then mine = 'q' .. ticket
      else redis.call('ZREM', key, 'q' .. ticket) end
    end
    open = open and held < max and eligible(mine, max - held)
    if open then
      redis.call('ZADD', key, now + lease, ticket)
      redis.call('ZREM', key, 'q' .. ticket, 'l' .. ticket)
      held = held + 1
      entered = entered + 1
    elseif waits then
      if mine == nil then
        local youngest = redis.call('ZREVRANGEBYSCORE', key, '+inf', LINE, 'WITHSCORES', 'LIMIT', 0, 1)[2]
        redis.call('ZADD', key, math.max(LINE + now, tonumber(youngest or 0) + 1), 'q' .. ticket)
      end
      redis.call('ZADD', key, BAND + math.floor(now) + lease, 'l' .. ticket)
    end
  end
  expire()
  return { entered, held, waiting() }
elseif op == 'h' then
  local ends = now + tonumber(ARGV[2])
  local slots = tonumber(ARGV[3])
  local answer = { 0, held, 0 }
  for i = 4, #ARGV do
    if i < 4 + slots then
      if redis.call('ZSCORE', key, ARGV[i]) then redis.call('ZADD', key, ends, ARGV[i])
      else answer[#answer + 1] = ARGV[i] end
    else
      redis.call('ZADD', key, 'XX', BAND + math.floor(ends), 'l' .. ARGV[i])
    end
  end
  expire()
  answer[3] = waiting()
  return answer
elseif op == 'r' then
  local answer = { 0, 0, 0 }
  for i = 2, #ARGV do
    if redis.call('ZREM', key, ARGV[i]) == 1 then held = held - 1 else answer[#answer + 1] = ARGV[i] end
    redis.call('ZREM', key, 'l' .. ARGV[i], 'q' .. ARGV[i])
  end
  expire()
  answer[2] = held
  answer[3] = waiting()
  return answer
end
return { 0, held, waiting() }
`

/** What the script answers: see {@link SLOTS}. */
export interface Answer {
  readonly entered: number
  readonly held: number
  readonly waiting: number
  readonly lost: ReadonlyArray<string>
}

/** Reads the script's answer; anything else is a `TypeError` (taken as Redis failing). */
export const decode = (answer: unknown): Answer => {
  const [entered, held, waiting, ...lost] = Array.isArray(answer) ? (answer as Array<unknown>) : []
  const counts = [entered, held, waiting].map(Number)
  if (!(counts.every(validate.isCount) && lost.every((m) => typeof m === 'string'))) {
    throw new TypeError(`RedisBulkhead: the script answered ${JSON.stringify(answer)}`)
  }
  return { entered: counts[0], held: counts[1], waiting: counts[2], lost: lost as Array<string> }
}
