/*
 * The Lua scripts ebb keeps its shared numbers with. Each runs atomically on the server (Redis
 * runs one script at a time: "Scripting with Lua", atomicity), touches only KEYS[1], and returns
 * the new value as a string (an integer reply would truncate fractions). Keys expire when no
 * process has touched them for a while, so abandoned names do not stay forever.
 */

/**
 * A level clamped to [min, max]: KEYS[1] a string key; ARGV: delta, min, max, initial (the value of
 * a missing key), expiry in seconds.
 */
export const CLAMPED_SCRIPT = `local v = redis.call('GET', KEYS[1])
if v then v = tonumber(v) else v = tonumber(ARGV[4]) end
v = v + tonumber(ARGV[1])
local lo, hi = tonumber(ARGV[2]), tonumber(ARGV[3])
if v < lo then v = lo end
if v > hi then v = hi end
redis.call('SET', KEYS[1], tostring(v), 'EX', tonumber(ARGV[5]))
return tostring(v)`;

/**
 * A sum over a sliding window of `slices` slices of `sliceMs` each, on the server's clock (TIME,
 * so processes on machines with different clocks agree): KEYS[1] a hash of slice number → sum;
 * ARGV: delta, sliceMs, slices. Adds the delta to the current slice, drops expired slices, and
 * returns the sum of the live ones — Finagle's WindowedAdder, shared.
 */
export const WINDOW_SCRIPT = `local t = redis.call('TIME')
local sliceMs, slices = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) / sliceMs)
local delta = tonumber(ARGV[1])
if delta ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], tostring(now), delta) end
local all = redis.call('HGETALL', KEYS[1])
local sum = 0
for i = 1, #all, 2 do
  local s = tonumber(all[i])
  if now - s >= slices then redis.call('HDEL', KEYS[1], all[i]) else sum = sum + tonumber(all[i + 1]) end
end
redis.call('PEXPIRE', KEYS[1], sliceMs * slices * 2)
return tostring(sum)`;

/**
 * The fleet's control law: `adaptiveRate`'s (packages/ebb/src/rate/adaptive-rate.ts), rule for
 * rule, in Lua — one Lua function per method there, with the same names for the same quantities:
 * `waitFor` is `#waitFor` (with `coolOffAfter`, `convex`), `rise` is `#planRise` + `#rise`
 * (with `probeAt`, `#probeAt`; `cvStep` is `#convexStep`), `charge` is `#charge`, `fall` is
 * `#fall` (with `#relapseTo` inline), `note` is `#note`,
 * `change` is `#change`. A change to the law in one place needs the same change in the other:
 * test/redis/rate-law.test.ts feeds both the same traces and fails on the first event where their
 * rates differ.
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
const RATE_LAW = `local BIG = 1e300
local maxRel = 0
while maxRel < 2000 and base * 2 ^ maxRel < maxCo do maxRel = maxRel + 1 end
local function coolOffAfter(rl) return math.min(maxCo, base * 2 ^ rl) end
local ADD = 5
local function convex(rate)
  if s.tp == 1 then return rate > s.th * (1 + 1e-9) end
  return rate >= (s.th + inc * math.min(s.th, ADD)) * (1 - 1e-9)
end
local cvStep = math.min(maxStep, math.max(2 * inc, (1 - m) / 0.75 - 1))
local function waitFor(rate, lc, rl)
  if lc == 1 and convex(rate) then return base end
  if lc == 1 then return coolOffAfter(math.max(math.min(rl, 1), rl - 1)) end
  return coolOffAfter(rl)
end
local BUDGET = 0.02
local function charge(relapse)
  if relapse then
    s.pa = now
    s.cu = now + 2 * base
  elseif now >= s.cu then return end
  s.pa = s.pa + 1000 / (BUDGET * s.r)
end
local function probeAt(nxt)
  local bo = s.ch + waitFor(s.r, s.lc, s.rl)
  local rel = math.max(s.ch + waitFor(s.r, s.lc, 0), s.pa)
  local at = math.min(bo, rel)
  if nxt > s.ga * (1 + 1e-9) then at = math.max(at, s.pa) end
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
    if rl > 0 and rate >= s.th * (1 - 1e-9) then rl = rl - 1 end
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
  change(at, 1)
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
  local known = delivered >= 0 and count >= 10
  local limit = from
  if known then limit = math.min(from, delivered) end
  local floor = from * dec
  if known and s.sw == 1 then floor = lo end
  local eventMs = base
  if s.er == 1 then eventMs = 2 * base end
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
  elseif known and limit + 2000 / span < from * (1 - 2 * m) then
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
end`;

/**
 * The fleet's shared rate and the leases of it (`sharedRate`). KEYS: [1] a hash of the fleet's
 * state, [2] a hash member id → `share,saturated,accepted,used,wanted,successes` (its current
 * lease), [3] a sorted set member id → lease expiry (ms, server clock). ARGV: id, saturated (0/1:
 * requests waited for the share since the member's last call), used r/s, accepted r/s (-1: not
 * measured yet), lease ms (0: leave the fleet), the epoch of a throttled request (-1: no
 * throttle), the rate to start a missing state with (-1: unlimited), then margin,
 * decreaseFactor, increase, the largest step, coolOffMs, maxCoolOffMs, minRatePerSecond,
 * maxRatePerSecond (-1: none), the keys' expiry in seconds, a success since the member's last
 * call (0/1), the successes its accepted rate was measured over (-1: not measured), and the span
 * it was measured over in ms (adaptiveRate's `#deliveredSpanMs`: the fleet's two-request slack is
 * taken over the reporting member's span), and 1 if a throttle came in at least half the 100-ms
 * slots of that span (adaptiveRate's `#refused`, the reporting member's too: a blind cut's
 * correction then goes past decreaseFactor).
 *
 * State fields, as `adaptiveRate`'s: r `#rate` (BIG: unlimited), e `#epoch`, ch `#changedAt`, lc
 * `#lastChange` (1 rise, 0 otherwise), pr `#before`, rl `#relapses`, th `#throttledAt`, st
 * `#step`, sk `#evidence`, sw `#saturated`, rd `#readyAt`, ev `#eventAt`, er `#eventLong` (1:
 * the event lasts two cool-offs), tp `#throttledProbe` (1: th is the rate of a probe that
 * failed), inf `#informed`, nt `#notedAt`, pa `#paidAt`, cu `#costUntil`, ga `#gateRate`, v the layout's version (4); sums over the live leases: ia every share, iu what
 * unsaturated members asked for, ns saturated members, ac their accepted rates, sn the successes
 * those were measured over, nk members whose accepted rate is not known yet, uk their used rates,
 * ug every member's used rate.
 *
 * Returns { share (-1 unlimited), fleet rate (-1 unlimited), epoch, 1 if the share is below what
 * the member asked for (it should ask again soon), live members } as strings.
 *
 * The control law is {@link RATE_LAW}, kept in one place for the fleet: one change per congestion
 * event, decided by comparing the throttled request's epoch with the fleet's (whichever process
 * reports first moves the rate; later reports of the same event find a newer epoch and change
 * nothing, as `adaptiveRate` ignores the ticket of a request sent before its last cut).
 * Shares: max-min fair — members not kept waiting keep an equal share while nobody waits, and
 * what they use plus half once someone does; waiting members split the rest equally. A member's
 * share grows only into what no other lease holds, so a newcomer starts small and asks again soon,
 * and the shares never sum above the rate they were issued at.
 */
export const RATE_SCRIPT = `local H, M, Z = KEYS[1], KEYS[2], KEYS[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id, sat, used, acc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lease, cut, seed = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local m, dec, inc, maxStep = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local base, maxCo, lo, hi, ttl = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])
local ok, count, span = tonumber(ARGV[17]), tonumber(ARGV[18]), math.max(100, tonumber(ARGV[19]) or 1000)
local rf = tonumber(ARGV[20]) or 0
-- Every digit of a double, so that a number read back is the number written (tostring keeps 14).
local function exact(x) return string.format('%.17g', x) end
local s = {}
local raw = redis.call('HGETALL', H)
for i = 1, #raw, 2 do s[raw[i]] = tonumber(raw[i + 1]) end
${RATE_LAW}
if hi < 0 then hi = BIG end
if seed < 0 then seed = BIG end
-- A state this version did not write (or none) starts afresh, and so do its leases.
if s.v ~= 4 then
  s = { v = 4, r = seed, e = 0, ch = now, lc = 0, pr = seed, rl = 0, th = BIG, st = inc, sk = 0, sw = 0,
        rd = BIG, ev = -BIG, er = 0, inf = 0, nt = -BIG, pa = -BIG, cu = -BIG, ga = BIG, tp = 0, ia = 0, iu = 0, ns = 0, ac = 0, sn = 0, nk = 0, uk = 0, ug = 0 }
  redis.call('DEL', M, Z)
end
local function forget(k)
  local v = redis.call('HGET', M, k)
  if v then
    local a, b, c, d, w, n = string.match(v, '^([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+)$')
    a, b, c, d, w, n = tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(w), tonumber(n)
    s.ia = s.ia - a
    if b == 1 then s.ns = s.ns - 1 else s.iu = s.iu - w end
    if c < 0 then s.nk = s.nk - 1; s.uk = s.uk - d else s.ac = s.ac - c; s.sn = s.sn - n end
    s.ug = s.ug - d
    redis.call('HDEL', M, k)
  end
  redis.call('ZREM', Z, k)
end
for _, k in ipairs(redis.call('ZRANGEBYSCORE', Z, '-inf', now, 'LIMIT', 0, 100)) do forget(k) end
local mine = 0
local v = redis.call('HGET', M, id)
if v then mine = tonumber(string.match(v, '^([^,]+),')) end
forget(id)
if s.ia < 1e-9 then s.ia = 0 end
if s.iu < 1e-9 then s.iu = 0 end
if acc < 0 or count < 0 then acc, count = -1, -1 end
local accepted, successes = -1, -1
-- Members that have not measured a second yet (new, or late to their first request) count as
-- accepting what they send: one newcomer must not make the whole fleet's rate unknown, which
-- would make the next cut blind (measured: a fleet of 5 halved from 50 to 25 r/s at its start,
-- one member's first request having waited 0.8 s for its share). Unknown only with no member known.
local others = redis.call('ZCARD', Z)
if acc >= 0 then
  accepted, successes = s.ac + acc + s.uk, s.sn + count
elseif others > s.nk then
  accepted, successes = s.ac + s.uk + used, s.sn
end
local sent = s.ug + used
-- In adaptiveRate's order: a rise that fell due is applied when the pacer wakes up, before the
-- answer of the request it lets go; a success is evidence, and a due rise is applied (record); a
-- wait is saturation, and a rise that made due is applied at once, counted from when it fell due
-- (adaptiveRate shows it at once and applies it at its next wake-up, counted from the same
-- instant); a throttle applies a due rise, then judges (record). A throttle of a request sent
-- before the fleet's last change moves nothing.
local throttle = cut >= 0 and cut == s.e and lease > 0
local moves = cut < 0 or throttle
local before = s.r
if throttle then charge(false) end
if moves then rise(sent, others) end
if ok == 1 and s.sk == 0 then
  s.sk = 1
  if s.sw == 1 then s.rd = now end
end
if moves then rise(sent, others) end
if sat == 1 and s.sw == 0 then
  s.sw = 1
  if s.sk == 1 then s.rd = now end
end
if throttle then fall(sent, accepted, successes) elseif moves then rise(sent, others) end
-- A new rate reaches the limiter once every member paces at it: the caller hears it now, each
-- other member at its next renewal, the last of them one lease after it last renewed (its lease
-- expires three after). The law's clock (the change's time, from which the next rise is judged)
-- starts then, so a probe is judged over a whole cool-off of the fleet sending at it, as
-- adaptiveRate's is (measured: judged from the change alone, a fleet's first probe lived 0.3 s at
-- nginx, which a burst of 5 hid; the next rose past the limit and its relapse landed above it).
if s.r ~= before and others > 0 and lease > 0 then
  local last = redis.call('ZRANGE', Z, -1, -1, 'WITHSCORES')
  if last[2] then
    local heard = math.min(now + lease, tonumber(last[2]) - 2 * lease)
    if heard > s.ch then s.ch = heard end
  end
end
local share, short, want = -1, 0, 0
local live = 0
if lease > 0 then
  if s.r < BIG then
    local n = s.ns + 1
    local fair = math.max(0, s.r - s.iu) / n
    want = fair
    -- A member not kept waiting keeps an equal share while nobody waits; once another member
    -- waits, it keeps what it uses plus half, and the rest goes to those who wait.
    if sat == 0 and s.ns > 0 then want = math.min(fair, math.max(used * 1.5, lo)) end
    if sat == 0 and s.ns == 0 then want = s.r / (redis.call('ZCARD', Z) + 1) end
    share = want
    if want > mine then share = math.max(mine, math.min(want, s.r - s.ia)) end
    if share < math.min(want, lo) then share = math.min(want, lo) end
    if share < want * 0.99 then short = 1 end
  end
  local a = share
  if a < 0 then a = 0 end
  s.ia = s.ia + a
  if sat == 1 then s.ns = s.ns + 1 else s.iu = s.iu + want end
  if acc < 0 then s.nk = s.nk + 1; s.uk = s.uk + used else s.ac = s.ac + acc; s.sn = s.sn + count end
  s.ug = s.ug + used
  redis.call('HSET', M, id, exact(a) .. ',' .. sat .. ',' .. exact(acc) .. ',' .. exact(used) .. ',' .. exact(want) .. ',' .. exact(count))
  redis.call('ZADD', Z, now + 3 * lease, id)
end
live = redis.call('ZCARD', Z)
local out = {}
for k, x in pairs(s) do out[#out + 1] = k; out[#out + 1] = exact(x) end
redis.call('HSET', H, unpack(out))
redis.call('EXPIRE', H, ttl)
redis.call('EXPIRE', M, ttl)
redis.call('EXPIRE', Z, ttl)
local fleet = s.r
if fleet >= BIG then fleet = -1 end
return { exact(share), exact(fleet), tostring(s.e), tostring(short), tostring(live) }`;
