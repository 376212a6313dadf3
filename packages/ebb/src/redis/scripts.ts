import { LAW, type LawState } from '../rate/law.js';
import { APPLIED_RECORD } from './protocol.js';

/*
 * The Lua scripts ebb keeps its shared state with. Each runs atomically on the server (Redis runs
 * one script at a time: "Scripting with Lua", atomicity) and touches only the keys it is given, all
 * of one hash tag (one Cluster slot). Numbers go back as strings (an integer reply would truncate
 * fractions). Keys expire when no process has touched them for a while, so abandoned names do not
 * stay forever.
 *
 * Three rules hold in every script:
 *
 * - **Nothing read is trusted.** Every stored value is checked against the calling process's own
 *   bounds (rates within its [minRatePerSecond, maxRatePerSecond], levels within the budget's
 *   capacity, counts finite and within 2^53, where a double stops counting by one, times within a
 *   day of now, flags 0 or 1, the layout's fields all present and no other). A key of another type,
 *   another layout or with a bad value is rewritten from the caller's *seed* — its last good view of
 *   the fleet, else its configured initial state — and the reply names the first bad key, field
 *   and value, so the process can say so (event 'repair'). Nothing is adopted, nothing deleted by
 *   hand, and no call fails because of what was stored.
 * - **Identity.** Each state carries a generation `g`, a random number the process that created it
 *   drew, returned with every reply. A state that was lost (FLUSHALL, a restart without
 *   persistence, a failover to a replica without it, eviction) or rewritten comes back with another
 *   generation: a process that hears one it did not know knows the state it had is gone.
 * - **Exactly once.** A change to a level or a window carries the process's id, the call's
 *   sequence number, the running sum of every change the process ever sent (`cum`) and the sum of
 *   those not yet answered (`unacked`). A small record per process (KEYS[2], `seq,cum`, expiring
 *   after 10 minutes) holds the last call applied: a call whose number is not above it is a resend,
 *   applied as 0; otherwise the script applies `cum − the recorded cum`, which includes an earlier
 *   call's changes only if that call never ran. Without a record (a new process, or one silent for
 *   10 minutes) it applies `unacked`. A call that timed out and still ran when Redis resumed is so
 *   counted once, whatever the process sent meanwhile. A record above every number the process
 *   sent was not written by it (a late call finds at most the process's own later calls' record);
 *   the script cannot see that, the process can: the reply of a resend names the record's seq, and
 *   a process that never sent that number sends it back as distrusted with its next calls, which
 *   treat a record holding it as a fault — rewritten, `unacked` applied, the reply naming it.
 */

/** Lua helpers every script starts with: `exact`, `whole`, the key's type, and the first fault found. */
const COMMON = `local function exact(x) return string.format('%.17g', x) end
local function whole(x, a, b) return x ~= nil and x == math.floor(x) and x >= a and x <= b end
local function kind(k) return redis.call('TYPE', k).ok end
local faults, nfault = {}, 0
local function fault(k, f, v)
  nfault = nfault + 1
  faults[#faults + 1] = k
  faults[#faults + 1] = f
  if v == nil then v = '(missing)' end
  faults[#faults + 1] = string.sub(tostring(v), 1, 64)
end
local function firstFault()
  if #faults == 0 then return '', '', '' end
  return faults[1], faults[2], faults[3]
end
local MAXCOUNT = 9007199254740992`;

/**
 * The exactly-once rule (see above): ARGV[2] cum, ARGV[3] unacked, ARGV[4] seq, ARGV[7] the
 * record's expiry in s, ARGV[8] a distrusted sequence number (or ''); KEYS[2] the caller's record.
 *
 * `record(limit)` reads the record: its seq and cum, or nothing (a fault noted) when it cannot be
 * the caller's — unreadable, its seq above `limit`, or its seq the distrusted one. A call may find
 * a record up to `maxAhead` calls ahead of its own (it timed out and runs after the calls sent
 * after it); a record within that but above every number the process ever sent is not its own, and
 * only the process can tell: the call's reply gives the record's seq when the call counts as a
 * resend, the process, finding it above all it sent, sends it back as ARGV[8] and numbers its calls
 * from above it, so no record of its own ever carries it. `applied()` returns the change to apply
 * now and the record's seq when the call counts as a resend ('' otherwise).
 */
const APPLIED = `local AHEAD = ${APPLIED_RECORD.maxAhead}
local function record(limit)
  local A = KEYS[2]
  local t = kind(A)
  if t == 'string' then
    local v = redis.call('GET', A)
    local rs, rc = string.match(v, '^([^,]+),([^,]+)$')
    rs, rc = tonumber(rs), tonumber(rc)
    if whole(rs, 0, limit) and rs ~= tonumber(ARGV[8]) and rc ~= nil and rc == rc and math.abs(rc) < MAXCOUNT * 1e6 then
      return rs, rc
    end
    fault(A, 'seq,cum', v)
  elseif t ~= 'none' then fault(A, '(type)', t) end
end
local function applied()
  local cum, unacked, seq = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local rs, rc = record(seq + AHEAD)
  local d = unacked
  if rs ~= nil and rs >= seq then return 0, exact(rs) end
  if rs ~= nil then d = cum - rc end
  redis.call('SET', KEYS[2], exact(seq) .. ',' .. exact(cum), 'EX', tonumber(ARGV[7]))
  return d, ''
end`;

/**
 * A level clamped to [min, max] (the token budget's thousandths, the AWS quota's tokens). KEYS: [1]
 * a hash `v` (layout, 2), `g` (generation), `l` (the level); [2] the caller's applied record.
 * ARGV: [1] mode ('': a change; 'inspect': read only; 'reset': back to the seed, a new generation),
 * [2] cum, [3] unacked, [4] seq (with 'inspect': the highest the caller sent), [5] seed (the level
 * to start a missing or broken state from), [6] a new generation (a random whole number the caller
 * drew), [7] the record's expiry in s, [8] a distrusted record seq or '', [9] min, [10] max,
 * [11] the key's expiry in s.
 *
 * Returns { level, generation, the first bad key, field, value ('' when none), the record's seq
 * when the call counted as a resend ('' otherwise) }; with 'inspect', { level or '', generation or
 * '', the stored fields (name, value, …), every fault (key, field, value, …; the caller's record
 * included, faulted above the highest seq it sent) } and writes nothing. The previous layout (a
 * string key holding the level) is read, checked and rewritten as a hash.
 */
export const LEVEL_SCRIPT = `${COMMON}
${APPLIED}
local H, mode = KEYS[1], ARGV[1]
local seed, gen, lo, hi, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local function fits(x) return x ~= nil and x >= lo and x <= hi end
local l, g
local stored = {}
local t = kind(H)
if t == 'hash' then
  local raw = redis.call('HGETALL', H)
  for i = 1, #raw, 2 do stored[#stored + 1] = raw[i]; stored[#stored + 1] = raw[i + 1] end
  local f = {}
  for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
  if tonumber(f.v) ~= 2 then fault(H, 'v', f.v) end
  g = tonumber(f.g)
  if not whole(g, 1, MAXCOUNT) then fault(H, 'g', f.g) end
  l = tonumber(f.l)
  if not fits(l) then fault(H, 'l', f.l) end
  for i = 1, #raw, 2 do
    local k = raw[i]
    if k ~= 'v' and k ~= 'g' and k ~= 'l' then fault(H, k, raw[i + 1]) end
  end
elseif t == 'string' then
  local v = redis.call('GET', H)
  stored = { '', v }
  fault(H, '(layout)', v)
  l = tonumber(v)
  if not fits(l) then fault(H, '(value)', v) end
elseif t ~= 'none' then
  fault(H, '(type)', t)
end
if mode == 'inspect' then
  if nfault > 0 or t == 'none' then l = nil end
  record(tonumber(ARGV[4]))
  local out = { '', '', stored, faults }
  if l then out[1] = exact(l) end
  if whole(g, 1, MAXCOUNT) then out[2] = exact(g) end
  return out
end
local fresh = t ~= 'hash' or nfault > 0 or mode == 'reset'
-- A string of the previous layout with a level that fits is kept (only the layout is new).
if fresh and not (t == 'string' and nfault == 1 and mode ~= 'reset') then l = seed end
if fresh then
  if gen == g then gen = gen + 1 end
  g = gen
  if t ~= 'none' then redis.call('DEL', H) end
end
local d, resent = 0, ''
if mode ~= 'reset' then d, resent = applied() end
l = l + d
if l < lo then l = lo end
if l > hi then l = hi end
redis.call('HSET', H, 'v', 2, 'g', exact(g), 'l', exact(l))
redis.call('EXPIRE', H, ttl)
local fk, ff, fv = firstFault()
return { exact(l), exact(g), fk, ff, fv, resent }`;

/**
 * A sum over a sliding window of `slices` slices of `sliceMs` each, on the server's clock (TIME,
 * so processes on machines with different clocks agree) — Finagle's WindowedAdder, shared.
 * KEYS: [1] a hash `v` (layout, 2), `g` (generation) and slice number → sum; [2] the caller's
 * applied record. ARGV: [1] mode, [2] cum, [3] unacked, [4] seq, [5] seed (a sum to start a
 * missing or broken window with, put in the current slice), [6] a new generation, [7] the record's
 * expiry in s, [8] a distrusted record seq or '', [9] sliceMs, [10] slices, [11] the least a slice
 * may hold (0 for counts; a window that also takes withdrawals passes -2^53). Adds the change to
 * the current slice, drops expired slices, and returns { the sum of the live ones, generation, the
 * first fault, the record's seq on a resend } (or, with 'inspect', what {@link LEVEL_SCRIPT}
 * returns). A slice up to one window ahead of the server's clock is kept (a failover to a server
 * whose clock is behind); one further ahead is a fault.
 */
export const WINDOW_SCRIPT = `${COMMON}
${APPLIED}
local H, mode = KEYS[1], ARGV[1]
local seed, gen = tonumber(ARGV[5]), tonumber(ARGV[6])
local sliceMs, slices, floor = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local t = redis.call('TIME')
local now = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) / sliceMs)
local g
local sum = 0
local expired = {}
local stored = {}
local kt = kind(H)
if kt == 'hash' then
  local raw = redis.call('HGETALL', H)
  local v, rv, rg
  for i = 1, #raw, 2 do
    local k, x = raw[i], raw[i + 1]
    stored[#stored + 1] = k
    stored[#stored + 1] = x
    if k == 'v' then v, rv = tonumber(x), x
    elseif k == 'g' then g, rg = tonumber(x), x
    else
      local sl, n = tonumber(k), tonumber(x)
      if not whole(sl, -MAXCOUNT, now + slices) or k ~= exact(sl) then fault(H, k, x)
      elseif n == nil or not (n >= floor and n <= MAXCOUNT) then fault(H, k, x)
      elseif now - sl >= slices then expired[#expired + 1] = k
      else sum = sum + n end
    end
  end
  if v ~= 2 then fault(H, 'v', rv) end
  if not whole(g, 1, MAXCOUNT) then fault(H, 'g', rg) end
elseif kt ~= 'none' then
  fault(H, '(type)', kt)
end
if mode == 'inspect' then
  local out = { '', '', stored, faults }
  if kt == 'hash' and nfault == 0 then out[1], out[2] = exact(sum), exact(g) end
  record(tonumber(ARGV[4]))
  return out
end
if kt ~= 'hash' or nfault > 0 or mode == 'reset' then
  if gen == g then gen = gen + 1 end
  g = gen
  if kt ~= 'none' then redis.call('DEL', H) end
  sum = 0
  if mode ~= 'reset' then sum = seed end
  if sum ~= 0 then redis.call('HSET', H, exact(now), exact(sum)) end
elseif #expired > 0 then
  redis.call('HDEL', H, unpack(expired))
end
local d, resent = 0, ''
if mode ~= 'reset' then d, resent = applied() end
if d ~= 0 then
  redis.call('HINCRBYFLOAT', H, exact(now), d)
  sum = sum + d
end
redis.call('HSET', H, 'v', 2, 'g', exact(g))
redis.call('PEXPIRE', H, sliceMs * slices * 2)
local fk, ff, fv = firstFault()
return { exact(sum), exact(g), fk, ff, fv, resent }`;

/**
 * The fleet's control law: rate/law.ts's, rule for rule, in Lua — one Lua function per function
 * there, over the same state fields (named as {@link LAW_FIELDS} maps them): `convex`, `waitFor`
 * (with `coolOffAfter`), `probeAt`, `rise` (`planRise` + `rise`; `cvStep` is `convexStep`),
 * `succeeded`, `waited`, `charge`, `note`, `change`, `fall`, `throttled`. Its constants are not
 * written here: they are put into the text from rate/law.ts's `LAW` table when this module loads.
 * The two are held equal step by step by test/redis/rate-law-step.test.ts (both fed the same
 * generated states and events, every field compared after every step) and, as whole controllers,
 * by test/redis/rate-law.test.ts. The fleet adds one condition of its own to a rise (below).
 *
 * Two rules of rate/law.ts answer independent controllers sharing one limit, and the fleet's one
 * controller has neither (its parameters are `lawParams` without `probeSpread` or
 * `collisionCharge`, as the step-by-step test runs the TypeScript side): the spread of the rises
 * ([spread]) and the charge of a throttle at a rate that held ([charge.collision]). The fleet's
 * members share one rate: a rise is the fleet's, and a throttle after it, whichever member
 * receives it, is that rise's relapse, charged as such.
 *
 * What the fleet measures differently (the inputs, not the law): the delivered rate is the sum of
 * the members' (each measured as `adaptiveRate` measures its own; a member that has not covered
 * a second yet counts as accepting what it sends), known once a member's covers a second and the
 * fleet's hold 10 successes; "kept waiting" and "a success since the
 * change" are any member's; the first cut of an unlimited fleet starts from what the members sent,
 * counted in 100-ms slots rather than `adaptiveRate`'s whole seconds (the same over the first
 * second of traffic, when a blind first cut comes); and,
 * with more than one member, a rise also needs the fleet to send at least `(1 − 2 × margin)` × its
 * rate, since one member kept waiting by its share says nothing of a rate the others leave unused
 * (with one member, kept waiting is the whole fleet kept waiting: `adaptiveRate`'s rule exactly).
 * Servers' hints (`Retry-After`, `RateLimit`) are not shared. Infinity is stored as BIG.
 */
export const RATE_LAW = `local BIG = 1e300
local maxRel = 0
while maxRel < 2000 and base * 2 ^ maxRel < maxCo do maxRel = maxRel + 1 end
local function coolOffAfter(rl) return math.min(maxCo, base * 2 ^ rl) end
local ADD = ${LAW.additiveRate}
local TOL = ${LAW.tolerance}
local function convex(rate)
  if s.tp == 1 then return rate > s.th * (1 + TOL) end
  return rate >= (s.th + inc * math.min(s.th, ADD)) * (1 - TOL)
end
local cvStep = math.min(maxStep, math.max(2 * inc, (1 - m) / ${LAW.convexKeep} - 1))
local function waitFor(rate, lc, rl)
  if lc == 1 and convex(rate) then return base end
  if lc == 1 then return coolOffAfter(math.max(math.min(rl, 1), rl - 1)) end
  return coolOffAfter(rl)
end
local BUDGET = ${LAW.probeBudget}
local function charge(relapse)
  if relapse then
    s.pa = now
    s.cu = now + ${LAW.longEvent} * base
  elseif now >= s.cu then return end
  s.pa = s.pa + 1000 / (BUDGET * s.r)
end
local function probeAt(nxt)
  local bo = s.ch + waitFor(s.r, s.lc, s.rl)
  local rel = math.max(s.ch + waitFor(s.r, s.lc, 0), s.pa)
  local at = math.min(bo, rel)
  if nxt > s.ga * (1 + TOL) then at = math.max(at, s.pa) end
  return at
end
local function change(at, lc)
  s.ch = at
  s.lc = lc
  s.sk = 0
  s.sw = 0
  s.rd = BIG
end
local function rise(sent, others)
  if s.sk == 0 or s.sw == 0 or s.r >= hi then return end
  if others > 0 and sent < s.r * (1 - 2 * m) then return end
  local rate, step, rl = s.r, s.st, s.rl
  if s.lc == 1 then
    if rl > 0 and rate >= s.th * (1 - TOL) then rl = rl - 1 end
    step = math.min(maxStep, step * 2)
  end
  local cv = convex(rate)
  local scale = rate
  if not cv and s.th < BIG then scale = math.min(rate, math.max(ADD, s.th - rate)) end
  if cv then step = math.min(step, cvStep)
  elseif rate + step * scale > s.th then step = inc end
  rate = math.min(hi, rate + step * scale)
  local at = math.max(probeAt(rate), s.rd)
  if now < at then return end
  s.pr = s.r
  s.r = rate
  s.st, s.rl = step, rl
  -- [rise.late] A rise applied more than a base cool-off after it fell due counts from now.
  if now - at > base then at = now end
  change(at, 1)
end
local function succeeded()
  if s.sk == 1 then return end
  s.sk = 1
  if s.sw == 1 then s.rd = now end
end
local function waited()
  if s.sw == 1 then return end
  s.sw = 1
  if s.sk == 1 then s.rd = now end
end
local function note()
  s.nt = now
  change(now, 0)
  s.e = s.e + 1
end
local function fall(sent, delivered, count)
  local first = s.r >= BIG
  local from = s.r
  if first then from = math.max(sent, lo) end
  local known = delivered >= 0 and count >= ${LAW.minDelivered}
  local limit = from
  if known then limit = math.min(from, delivered) end
  local floor = from * dec
  if known and s.sw == 1 then floor = lo end
  local eventMs = base
  if s.er == 1 then eventMs = ${LAW.longEvent} * base end
  local rate
  local relapse = false
  local failedConvex = false
  local at = from
  if first then
    if known then rate = math.max(floor, limit * (1 - m)) else rate = floor end
  elseif s.lc == 1 then
    relapse = true
    failedConvex = convex(s.pr)
    rate = math.min(s.pr, math.max(s.pr * (1 - m), limit * (1 - m)))
    if failedConvex then rate = math.max(rate, limit * (1 - m)) end
    if s.rl < maxRel then s.rl = s.rl + 1 end
  elseif now - s.ev < eventMs then
    if s.inf == 1 or not known or delivered * (1 - m) == from then return note() end
    local bf = from * dec
    if rf == 1 then bf = lo end
    rate = math.max(bf, delivered * (1 - m))
    at = math.max(delivered, rate)
  elseif known and limit + ${LAW.slackRequests * 1000} / span < from * (1 - 2 * m) then
    rate = math.max(floor, limit * (1 - m))
    s.rl = 0
  elseif known then
    if now - s.nt >= base then return note() end
    rate = math.max(floor, limit * (1 - m))
  else
    rate = floor
  end
  if known then s.inf = 1 else s.inf = 0 end
  s.ev = now
  s.r = math.min(hi, math.max(lo, rate))
  local deep = s.r < from * dec
  if relapse or deep or (first and not known) then s.er = 1 else s.er = 0 end
  if relapse then
    s.ga = limit * (1 - m)
    charge(true)
  else
    s.pa = -BIG
    s.cu = -BIG
  end
  s.th = at
  if relapse then s.tp = 1 else s.tp = 0 end
  if failedConvex then
    s.th = math.max(s.pr, limit)
    s.tp = 0
  end
  s.st = inc
  change(now, 0)
  s.e = s.e + 1
end
-- [throttle] rate/law.ts's throttled(), in its order: the due rise, the charge, the fall.
local function throttled(sent, others, delivered, count)
  rise(sent, others)
  charge(false)
  fall(sent, delivered, count)
end`;

/**
 * The Lua law's name of each field of rate/law.ts's `LawState` (the Redis hash's fields). In Lua,
 * Infinity is stored as BIG (1e300), -Infinity as -BIG, and a boolean as 1 or 0.
 */
export const LAW_FIELDS: { readonly [K in keyof LawState]: string } = {
  rate: 'r',
  epoch: 'e',
  changedAt: 'ch',
  rose: 'lc',
  before: 'pr',
  relapses: 'rl',
  throttledAt: 'th',
  throttledProbe: 'tp',
  step: 'st',
  evidence: 'sk',
  saturated: 'sw',
  readyAt: 'rd',
  eventAt: 'ev',
  eventLong: 'er',
  informed: 'inf',
  notedAt: 'nt',
  paidAt: 'pa',
  costUntil: 'cu',
  gateRate: 'ga',
  // The fleet's rate is one controller's: it draws no spread (rate/law.ts, LAW.probeSpread), so
  // the Lua law leaves this field as it finds it and the fleet's hash does not store it.
  seed: 'sd',
};

/**
 * The fleet's shared rate and the leases of it (`sharedRate`). KEYS: [1] a hash of the fleet's
 * state, [2] a hash member id → `share,saturated,accepted,used,wanted,successes` (its current
 * lease), [3] a sorted set member id → lease expiry (ms, server clock), [4] a sorted set member id
 * → the order it joined in (its rank is its slot in the fleet's time division). ARGV: [1] id,
 * [2] saturated (0/1: requests waited for the share since the member's last call), [3] used r/s,
 * [4] accepted r/s (-1: not measured yet), [5] lease ms (0: leave the fleet), [6] the epoch of a
 * throttled request (-1: no throttle), [7] the seed: the rate to start a missing or broken state
 * with — the caller's last good view of the fleet's rate, else its initialRatePerSecond (-1:
 * unlimited), then [8] margin, [9] decreaseFactor, [10] increase, [11] the largest step,
 * [12] coolOffMs, [13] maxCoolOffMs, [14] minRatePerSecond, [15] maxRatePerSecond (-1: none),
 * [16] the keys' expiry in seconds, [17] a success since the member's last call (0/1), [18] the
 * successes its accepted rate was measured over (-1: not measured), [19] the span it was measured
 * over in ms (adaptiveRate's `#deliveredSpanMs`: the fleet's two-request slack is taken over the
 * reporting member's span), [20] 1 if a throttle came in at least half the 100-ms slots of that
 * span (adaptiveRate's `#refused`, the reporting member's too: a blind cut's correction then goes
 * past decreaseFactor), [21] a new generation (a random whole number the caller drew, used if this
 * call creates the state), [22] the generation the throttled request was sent in (0: none), [23]
 * the members the caller last heard of (0: none), [24] the rate the caller last heard the fleet
 * was throttled at (-1: none), [25] mode ('': a lease; 'inspect': read only; 'reset': the state
 * back to the seed, a new generation, the leases kept).
 *
 * State fields, as `adaptiveRate`'s: r `#rate` (BIG: unlimited), e `#epoch`, ch `#changedAt`, lc
 * `#lastChange` (1 rise, 0 otherwise), pr `#before`, rl `#relapses`, th `#throttledAt`, st
 * `#step`, sk `#evidence`, sw `#saturated`, rd `#readyAt`, ev `#eventAt`, er `#eventLong` (1:
 * the event lasts two cool-offs), tp `#throttledProbe` (1: th is the rate of a probe that
 * failed), inf `#informed`, nt `#notedAt`, pa `#paidAt`, cu `#costUntil`, ga `#gateRate`; v the
 * layout's version (5), g the generation, jn the last join number; gr, gm the time-division grid
 * (the fleet's rate and members the members pace by) from gw on, pgr, pgm the grid before it
 * (until gw); gn, gt, gx: members the caller
 * of a new state had heard of that have not renewed into it yet ("ghosts", each holding `r / gt`
 * until it renews or until gx); sums over the live leases: ia every share, iu what unsaturated
 * members asked for, ns saturated members, ac their accepted rates, sn the successes those were
 * measured over, nk members whose accepted rate is not known yet, uk their used rates, ug every
 * member's used rate.
 *
 * Returns { share (-1 unlimited), fleet rate (-1 unlimited), epoch, 1 if the share is below what
 * the member asked for (it should ask again soon), members (with ghosts), generation, the
 * member's rank in the join order (-1 when it left), the server's clock in ms (with
 * microseconds), the rate last throttled at (-1: none), the grid before (rate, members), the grid
 * (rate, members), when the grid holds from (ms, server clock), the first bad key, field and value
 * ('' when none) } as strings (BIG for an unlimited grid rate); with 'inspect', { the state's fields, the leases, their expiries, the join
 * order, every fault, the server's clock } and writes nothing; with 'reset', { generation }.
 *
 * Checked on every call, against the caller's own bounds: each law field's domain (a rate within
 * [minRatePerSecond, maxRatePerSecond], or BIG if the caller has no maximum; a time within a day
 * of now; flags 0 or 1; counts whole), every field present and no other — else the law's state is
 * rewritten from the seed with a new generation; the sums — else recomputed from the leases (a
 * lease record that does not parse is dropped); the keys' types — a key of another type is
 * rewritten; a lease expiring more than a day ahead is dropped. O(1) a call unless something is
 * repaired.
 *
 * The control law is {@link RATE_LAW}, kept in one place for the fleet: one change per congestion
 * event, decided by comparing the throttled request's epoch with the fleet's (whichever process
 * reports first moves the rate; later reports of the same event find a newer epoch and change
 * nothing, as `adaptiveRate` ignores the ticket of a request sent before its last cut). A throttle
 * of a request sent in another generation counts as one of the current generation's first epoch.
 * Shares: max-min fair — members not kept waiting keep an equal share while nobody waits, and
 * what they use plus half once someone does; waiting members split the rest equally. A member's
 * share grows only into what no other lease holds (ghosts included), so a newcomer starts small
 * and asks again soon, and the shares never sum above the rate they were issued at by more than
 * that start: never nothing, at least the minimum rate (or an equal part of the fleet's rate,
 * when that is less).
 */
export const RATE_SCRIPT = `local H, M, Z, J = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local clock = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local id, sat, used, acc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lease, cut, seed = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local m, dec, inc, maxStep = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local base, maxCo, lo, hi, ttl = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])
local ok, count, span = tonumber(ARGV[17]), tonumber(ARGV[18]), math.max(100, tonumber(ARGV[19]) or 1000)
local rf = tonumber(ARGV[20]) or 0
local gen, tgen, heard, seedTh = tonumber(ARGV[21]) or 1, tonumber(ARGV[22]) or 0, tonumber(ARGV[23]) or 0, tonumber(ARGV[24]) or -1
local mode = ARGV[25] or ''
${COMMON}
local s, rawv = {}, {}
local ht = kind(H)
if ht == 'hash' then
  local raw = redis.call('HGETALL', H)
  for i = 1, #raw, 2 do s[raw[i]] = tonumber(raw[i + 1]); rawv[raw[i]] = raw[i + 1] end
elseif ht ~= 'none' then fault(H, '(type)', ht) end
${RATE_LAW}
if hi < 0 then hi = BIG end
if seed < 0 then seed = BIG end
seed = math.min(hi, math.max(lo, seed))
if not (seedTh > 0 and seedTh <= BIG) then seedTh = BIG end
if not whole(heard, 0, 1e6) then heard = 0 end
-- What was read, checked against this caller's bounds.
local DAY = 86400000
local function flag(x) return x == 0 or x == 1 end
local function time(x) return x ~= nil and x == x and x > -BIG and x <= now + DAY end
local function past(x) return x == -BIG or time(x) end
local function rate(x) return x ~= nil and ((x >= lo and x <= hi) or (hi >= BIG and x == BIG)) end
local function amount(x) return x ~= nil and x >= -1e-6 and x < BIG end
local function members(x) return whole(x, 0, 1e9) end
local LAWF = {
  { 'v', function(x) return x == 5 end }, { 'g', function(x) return whole(x, 1, MAXCOUNT) end },
  { 'r', rate }, { 'e', function(x) return whole(x, 0, MAXCOUNT) end }, { 'ch', time }, { 'lc', flag }, { 'pr', rate },
  { 'rl', function(x) return whole(x, 0, maxRel) end }, { 'th', function(x) return x ~= nil and x > 0 and x <= BIG end },
  { 'st', function(x) return x ~= nil and x > 0 and x <= maxStep * (1 + 1e-9) end }, { 'sk', flag }, { 'sw', flag },
  { 'rd', function(x) return x == BIG or time(x) end }, { 'ev', past }, { 'er', flag }, { 'inf', flag }, { 'nt', past },
  { 'pa', function(x) return x == -BIG or (x ~= nil and x == x and x > -BIG and x <= now + DAY + 1e4 / (BUDGET * lo)) end },
  { 'cu', past }, { 'ga', function(x) return x ~= nil and x >= 0 and x <= BIG end }, { 'tp', flag },
  { 'gn', function(x) return whole(x, 0, 1e6) end }, { 'gt', function(x) return whole(x, 0, 1e6) end }, { 'gx', past },
  { 'jn', function(x) return whole(x, 0, MAXCOUNT) end },
  { 'gr', function(x) return x ~= nil and x > 0 and x <= BIG end }, { 'gm', function(x) return whole(x, 0, 1e9) end },
  { 'pgr', function(x) return x ~= nil and x > 0 and x <= BIG end }, { 'pgm', function(x) return whole(x, 0, 1e9) end },
  { 'gw', past },
}
local SUMF = { { 'ia', amount }, { 'iu', amount }, { 'ns', members }, { 'ac', amount }, { 'sn', amount }, { 'nk', members }, { 'uk', amount }, { 'ug', amount } }
local lawOk, sumsOk = ht == 'hash', ht == 'hash'
if ht == 'hash' then
  local known = {}
  for _, c in ipairs(LAWF) do
    known[c[1]] = true
    if not c[2](s[c[1]]) then lawOk = false; fault(H, c[1], rawv[c[1]]) end
  end
  for _, c in ipairs(SUMF) do
    known[c[1]] = true
    if not c[2](s[c[1]]) then sumsOk = false; fault(H, c[1], rawv[c[1]]) end
  end
  for k, x in pairs(rawv) do if not known[k] then lawOk = false; fault(H, k, x) end end
  if lawOk and s.gn > s.gt then lawOk = false; fault(H, 'gn', rawv.gn) end
end
local mt, zt, jt = kind(M), kind(Z), kind(J)
local broken = false
if mt ~= 'hash' and mt ~= 'none' then fault(M, '(type)', mt); broken = true end
if zt ~= 'zset' and zt ~= 'none' then fault(Z, '(type)', zt); broken = true end
if jt ~= 'zset' and jt ~= 'none' then fault(J, '(type)', jt); broken = true end
if sumsOk and not broken then
  local nm, nz, nj = redis.call('HLEN', M), redis.call('ZCARD', Z), redis.call('ZCARD', J)
  if nm ~= nz then sumsOk = false; fault(M, '(records)', nm .. ' records, ' .. nz .. ' leases')
  elseif nj ~= nz then sumsOk = false; fault(J, '(members)', nj .. ' in the order, ' .. nz .. ' leases')
  elseif nz == 0 and (s.ia > 1e-6 or s.ns > 0 or s.nk > 0 or s.ug > 1e-6) then sumsOk = false; fault(H, 'ia', rawv.ia) end
end
if mode == 'inspect' then
  local out = { {}, {}, {}, {}, faults, exact(clock) }
  for k, x in pairs(rawv) do out[1][#out[1] + 1] = k; out[1][#out[1] + 1] = x end
  if mt == 'hash' then out[2] = redis.call('HGETALL', M) end
  if zt == 'zset' then out[3] = redis.call('ZRANGE', Z, 0, -1, 'WITHSCORES') end
  if jt == 'zset' then out[4] = redis.call('ZRANGE', J, 0, -1, 'WITHSCORES') end
  return out
end
if broken then redis.call('DEL', M, Z, J); sumsOk = false end
-- Sums that are not sound are rebuilt below; until then they must be numbers.
if not sumsOk then s.ia, s.iu, s.ns, s.ac, s.sn, s.nk, s.uk, s.ug = 0, 0, 0, 0, 0, 0, 0, 0 end
local created = not lawOk or mode == 'reset'
if created then
  if gen == s.g then gen = gen + 1 end
  if mode == 'reset' then seedTh = BIG end
  s = { v = 5, g = gen, r = seed, e = 0, ch = now, lc = 0, pr = seed, rl = 0, th = seedTh, st = inc, sk = 0, sw = 0,
        rd = BIG, ev = -BIG, er = 0, inf = 0, nt = -BIG, pa = -BIG, cu = -BIG, ga = BIG, tp = 0, gn = 0, gt = 0, gx = -BIG,
        jn = 0, gr = seed, gm = 0, pgr = seed, pgm = 0, gw = -BIG, ia = 0, iu = 0, ns = 0, ac = 0, sn = 0, nk = 0, uk = 0, ug = 0 }
  sumsOk = false
end
local function entry(v)
  local a, b, c, d, w, n = string.match(v, '^([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+)$')
  a, b, c, d, w, n = tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(w), tonumber(n)
  if amount(a) and a >= 0 and flag(b) and c ~= nil and (c == -1 or (c >= 0 and c < BIG)) and amount(d) and d >= 0
    and amount(w) and w >= 0 and n ~= nil and (n == -1 or (n >= 0 and n < BIG)) then return a, b, c, d, w, n end
end
local function tally(sign, a, b, c, d, w, n)
  s.ia = s.ia + sign * a
  if b == 1 then s.ns = s.ns + sign else s.iu = s.iu + sign * w end
  if c < 0 then s.nk = s.nk + sign; s.uk = s.uk + sign * d else s.ac = s.ac + sign * c; s.sn = s.sn + sign * n end
  s.ug = s.ug + sign * d
end
local function forget(k, keepOrder)
  local v = redis.call('HGET', M, k)
  if v then
    local a, b, c, d, w, n = entry(v)
    if a then tally(-1, a, b, c, d, w, n) else fault(M, k, v); sumsOk = false end
    redis.call('HDEL', M, k)
  end
  redis.call('ZREM', Z, k)
  if not keepOrder then redis.call('ZREM', J, k) end
end
-- The sums and the join order rebuilt from the lease records (only when something was wrong).
local function resum()
  s.ia, s.iu, s.ns, s.ac, s.sn, s.nk, s.uk, s.ug = 0, 0, 0, 0, 0, 0, 0, 0
  local all = redis.call('HGETALL', M)
  for i = 1, #all, 2 do
    local k = all[i]
    local a, b, c, d, w, n = entry(all[i + 1])
    if a and redis.call('ZSCORE', Z, k) then tally(1, a, b, c, d, w, n)
    else
      if not a then fault(M, k, all[i + 1]) end
      redis.call('HDEL', M, k)
      redis.call('ZREM', Z, k)
    end
  end
  for _, k in ipairs(redis.call('ZRANGE', Z, 0, -1)) do
    if redis.call('HEXISTS', M, k) == 0 then redis.call('ZREM', Z, k) end
  end
  local order = redis.call('ZRANGE', J, 0, -1, 'WITHSCORES')
  for i = 1, #order, 2 do
    local j = tonumber(order[i + 1])
    if not redis.call('ZSCORE', Z, order[i]) then redis.call('ZREM', J, order[i])
    elseif not whole(j, 0, MAXCOUNT) then fault(J, order[i], order[i + 1]); redis.call('ZREM', J, order[i])
    elseif j > s.jn then s.jn = j end
  end
  for _, k in ipairs(redis.call('ZRANGE', Z, 0, -1)) do
    if not redis.call('ZSCORE', J, k) then s.jn = s.jn + 1; redis.call('ZADD', J, s.jn, k) end
  end
end
for _, k in ipairs(redis.call('ZRANGEBYSCORE', Z, '(' .. exact(now + DAY), '+inf', 'LIMIT', 0, 10)) do
  fault(Z, k, redis.call('ZSCORE', Z, k))
  forget(k)
end
for _, k in ipairs(redis.call('ZRANGEBYSCORE', Z, '-inf', now, 'LIMIT', 0, 100)) do forget(k) end
local mine = 0
local v = false
if mode ~= 'reset' then
  v = redis.call('HGET', M, id)
  if v then mine = entry(v) or 0 end
  forget(id, lease > 0)
end
-- Sums within their bounds can still disagree with the leases; it shows once a lease leaves them.
if sumsOk then
  for _, c in ipairs(SUMF) do
    if s[c[1]] < -1e-6 then sumsOk = false; fault(H, c[1], rawv[c[1]]); break end
  end
end
if not sumsOk then resum() end
if s.ia < 1e-9 then s.ia = 0 end
if s.iu < 1e-9 then s.iu = 0 end
-- A new state is made by the first caller after a loss; the members it had heard of that have not
-- renewed into it yet hold a share each (ghosts) until they do, or for three leases and the
-- reconnect backoff's longest wait, so that the first caller does not take the whole rate while
-- the others still pace at their old shares or on their local controllers.
local present = redis.call('ZCARD', Z)
if created and mode ~= 'reset' then
  s.gt = math.max(heard, present + 1)
  s.gn = s.gt - 1 - present
  s.gx = now + 3 * math.max(lease, 0) + 4000
elseif s.gn > 0 and now >= s.gx then s.gn = 0
elseif s.gn > 0 and not v and lease > 0 then s.gn = s.gn - 1 end
if mode == 'reset' then
  local out = {}
  for k, x in pairs(s) do out[#out + 1] = k; out[#out + 1] = exact(x) end
  if ht ~= 'none' then redis.call('DEL', H) end
  redis.call('HSET', H, unpack(out))
  for _, k in ipairs({ H, M, Z, J }) do redis.call('EXPIRE', k, ttl) end
  return { exact(s.g) }
end
local gres = 0
if s.gn > 0 and s.r < BIG then gres = s.r * s.gn / s.gt end
if acc < 0 or count < 0 then acc, count = -1, -1 end
local accepted, successes = -1, -1
-- Members that have not measured a second yet (new, or late to their first request) count as
-- accepting what they send: one newcomer must not make the whole fleet's rate unknown, which
-- would make the next cut blind (measured: a fleet of 5 halved from 50 to 25 r/s at its start,
-- one member's first request having waited 0.8 s for its share). Unknown only with no member
-- known. Ghosts count as accepting and sending their share.
local others = present + s.gn
if acc >= 0 then
  accepted, successes = s.ac + acc + s.uk + gres, s.sn + count
elseif present > s.nk then
  accepted, successes = s.ac + s.uk + used + gres, s.sn
end
local sent = s.ug + used + gres
if cut >= 0 and tgen > 0 and tgen ~= s.g then cut = 0 end
-- In adaptiveRate's order: a rise that fell due is applied when the pacer wakes up, before the
-- answer of the request it lets go; a success is evidence, and a due rise is applied (record); a
-- wait is saturation, and a rise that made due is applied at once, counted from when it fell due
-- (adaptiveRate shows it at once and applies it at its next wake-up, counted from the same
-- instant); a throttle, reported after the success and the wait that came before it, is
-- throttled(): its due rise, its charge, its fall, in rate/law.ts's order. A throttle of a request
-- sent before the fleet's last change moves nothing.
local throttle = cut >= 0 and cut == s.e and lease > 0
local moves = cut < 0 or throttle
local before = s.r
if moves then rise(sent, others) end
if ok == 1 then succeeded() end
if moves then rise(sent, others) end
if sat == 1 then waited() end
if throttle then throttled(sent, others, accepted, successes) elseif moves then rise(sent, others) end
-- A new rate reaches the limiter once every member paces at it: the caller hears it now, each
-- other member at its next renewal, the last of them one lease after it last renewed (its lease
-- expires three after). The law's clock (the change's time, from which the next rise is judged)
-- starts then, so a probe is judged over a whole cool-off of the fleet sending at it, as
-- adaptiveRate's is (measured: judged from the change alone, a fleet's first probe lived 0.3 s at
-- nginx, which a burst of 5 hid; the next rose past the limit and its relapse landed above it).
if s.r ~= before and present > 0 and lease > 0 then
  local last = redis.call('ZRANGE', Z, -1, -1, 'WITHSCORES')
  if last[2] then
    local at = math.min(now + lease, tonumber(last[2]) - 2 * lease)
    if at > s.ch then s.ch = at end
  end
end
local share, short, want = -1, 0, 0
local rank = -1
if lease > 0 then
  if s.r < BIG then
    local n = s.ns + 1
    local fair = math.max(0, s.r - s.iu - gres) / n
    want = fair
    -- A member not kept waiting keeps an equal share while nobody waits; once another member
    -- waits, it keeps what it uses plus half, and the rest goes to those who wait.
    if sat == 0 and s.ns > 0 then want = math.min(fair, math.max(used * 1.5, lo)) end
    if sat == 0 and s.ns == 0 then want = (s.r - gres) / (present + 1) end
    share = want
    if want > mine then share = math.max(mine, math.min(want, s.r - s.ia - gres)) end
    if share < math.min(want, lo) then share = math.min(want, lo) end
    -- Never nothing: a member whose fair part is 0 for now (the others' leases hold the whole
    -- rate, as after a resync while they did not wait) still gets the minimum rate, or an equal
    -- part of the fleet's rate when that is less, and asks again soon.
    local least = math.min(lo, s.r / (present + 1 + s.gn))
    if share < least then share = least end
    if share < want * 0.99 or (sat == 1 and want < least) then short = 1 end
  end
  local a = share
  if a < 0 then a = 0 end
  s.ia = s.ia + a
  if sat == 1 then s.ns = s.ns + 1 else s.iu = s.iu + want end
  if acc < 0 then s.nk = s.nk + 1; s.uk = s.uk + used else s.ac = s.ac + acc; s.sn = s.sn + count end
  s.ug = s.ug + used
  redis.call('HSET', M, id, exact(a) .. ',' .. sat .. ',' .. exact(acc) .. ',' .. exact(used) .. ',' .. exact(want) .. ',' .. exact(count))
  redis.call('ZADD', Z, now + 3 * lease, id)
  if not redis.call('ZSCORE', J, id) then
    s.jn = s.jn + 1
    redis.call('ZADD', J, s.jn, id)
  end
  rank = redis.call('ZRANK', J, id)
  -- The time-division grid (time-division.ts): the fleet's rate and its members as every member
  -- paces by them. A new grid holds from one lease on — when every member has heard it — and the
  -- one before it until then, so that the members change their turns at one instant.
  local members = redis.call('ZCARD', J)
  if s.r ~= s.gr or members ~= s.gm then
    if now >= s.gw then s.pgr, s.pgm = s.gr, s.gm end
    s.gr, s.gm, s.gw = s.r, members, now + lease
  end
else
  redis.call('ZREM', J, id)
end
local live = redis.call('ZCARD', Z) + s.gn
local out = {}
for k, x in pairs(s) do out[#out + 1] = k; out[#out + 1] = exact(x) end
if created and ht ~= 'none' then redis.call('DEL', H) end
redis.call('HSET', H, unpack(out))
for _, k in ipairs({ H, M, Z, J }) do redis.call('EXPIRE', k, ttl) end
local fleet = s.r
if fleet >= BIG then fleet = -1 end
local th = s.th
if th >= BIG then th = -1 end
local fk, ff, fv = firstFault()
return { exact(share), exact(fleet), tostring(s.e), tostring(short), tostring(live), exact(s.g), tostring(rank), exact(clock),
  exact(th), exact(s.pgr), tostring(s.pgm), exact(s.gr), tostring(s.gm), exact(s.gw), fk, ff, fv }`;
