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
 * The fleet's shared rate and the leases of it (`sharedRate`). KEYS: [1] a hash of the fleet's
 * state, [2] a hash member id → `share,saturated,accepted,used,wanted` (its current lease), [3] a sorted set
 * member id → lease expiry (ms, server clock). ARGV: id, saturated (0/1), used r/s, accepted r/s
 * (-1: not measured yet), lease ms (0: leave the fleet), the epoch of a throttled request (-1: no
 * throttle), the rate to start a missing state with (-1: unlimited), then margin, decreaseFactor,
 * increase, the largest step, coolOffMs, maxCoolOffMs, minRatePerSecond, maxRatePerSecond
 * (-1: none), and the keys' expiry in seconds.
 *
 * State fields: r the fleet's rate (-1 unlimited), e the epoch (one per congestion event), ch when
 * the rate last changed, lc what that change was (0 fall or note, 1 rise), pr the rate before the
 * last rise, st the next probing step, co the cool-off now, ce the learned limit (-1 none), th the
 * rate last throttled (-1 none), pb 1 if the last rise was a probe above the learned limit, bl 1
 * if the last fall was blind (no accepted rate known), ev
 * when the last fall was, nt when a throttle was last only noted; sums
 * over the live leases: ia every share, iu what unsaturated members asked for, ns saturated members, ac
 * their accepted rates, nk members whose accepted rate is not known yet, ug their used rates.
 *
 * Returns { share (-1 unlimited), fleet rate (-1 unlimited), epoch, 1 if the share is below what
 * the member asked for (it should ask again soon), live members } as strings.
 *
 * The control law follows `adaptiveRate`'s (packages/ebb/src/rate/adaptive-rate.ts), kept in one
 * place for the fleet: one change per congestion event, decided by comparing the throttled
 * request's epoch with the fleet's (whichever process reports first moves the rate; later reports
 * of the same event find a newer epoch and change nothing). A fall goes to (1 − margin) × the
 * fleet's accepted rate (the members' reported successes a second) when the service refused part of
 * what the fleet sent, and only takes the unused headroom off when it did not (a burst); a throttle
 * right after a rise undoes it and doubles the cool-off; an isolated throttle at a held rate is
 * only noted. Rises come after the cool-off while members wait and the fleet sends about its rate:
 * concave up to the learned limit, then probing steps that double while they hold.
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
local s = {}
local raw = redis.call('HGETALL', H)
for i = 1, #raw, 2 do s[raw[i]] = tonumber(raw[i + 1]) end
if s.r == nil then
  s = { r = seed, e = 0, ch = now, lc = 0, pr = seed, st = inc, co = base, ce = -1, th = -1, bl = 0, ev = now - base, nt = now - base, pb = 0,
        ia = 0, iu = 0, ns = 0, ac = 0, nk = 0, ug = 0 }
  redis.call('DEL', M, Z)
end
local function forget(k)
  local v = redis.call('HGET', M, k)
  if v then
    local a, b, c, d, w = string.match(v, '^([^,]+),([^,]+),([^,]+),([^,]+),([^,]+)$')
    a, b, c, d, w = tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(w)
    s.ia = s.ia - a
    if b == 1 then s.ns = s.ns - 1 else s.iu = s.iu - w end
    if c < 0 then s.nk = s.nk - 1 else s.ac = s.ac - c end
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
local accepted = -1
if s.nk == 0 and acc >= 0 then accepted = s.ac + acc end
local function clamp(x)
  if x < lo then x = lo end
  if hi >= 0 and x > hi then x = hi end
  return x
end
if cut >= 0 and cut == s.e and lease > 0 then
  local first = s.r < 0
  local from = s.r
  local sent = s.ug + used
  if first then from = math.max(sent, lo) end
  -- The fleet's accepted rate is its limit only when the service turned part of what was sent
  -- away; a throttle while it took nearly everything was a burst, and says nothing of the limit.
  local refused = accepted > 0 and sent > accepted * (1 + m)
  local limit = from
  if refused and accepted < from then limit = accepted end
  local r = -2
  if first then
    if refused then r = math.max(lo, limit * (1 - m)) else r = from * dec end
  elseif s.lc == 1 and not (refused and limit < s.pr * (1 - 2 * m)) then
    -- A relapse: a throttle right after a rise undoes it, and the cool-off doubles. A rise needs
    -- the fleet sending about its rate, so what was accepted since is trusted here.
    local l = limit
    if accepted > 0 and accepted < l then l = accepted end
    r = math.min(s.pr, math.max(s.pr * (1 - m), l * (1 - m)))
    s.co = math.min(maxCo, s.co * 2)
  elseif now - s.ev < base and not (s.bl == 1 and refused) then
    r = -2
  elseif refused and limit < from * (1 - 2 * m) then
    r = math.max(lo, limit * (1 - m))
    s.co = base
  elseif accepted > 0 and not refused and from > sent * (1 + 2 * m) then
    -- A burst at a rate the fleet does not use: the headroom goes, down to what it sends.
    r = math.max(from * dec, sent * (1 + m))
  -- A throttle now and then at a rate that holds is noted (a late timer, a burst the limiter
  -- did not absorb); a second within five cool-offs means the rate is a little too high.
  elseif now - s.nt >= 5 * base then s.nt = now
  else r = from * (1 - m) end
  if r > -2 then
    if refused then s.ce = math.max(limit, clamp(r) / (1 - m)) else s.ce = clamp(r) / (1 - m) end
    s.r = clamp(r)
    s.th = from
    if refused then s.bl = 0 else s.bl = 1 end
    s.st = inc
    s.ev = now
  end
  s.e = s.e + 1
  s.ch = now
  s.lc = 0
-- Rises only while the fleet uses its rate: members kept waiting, and sending about the rate.
elseif s.r >= 0 and (s.ns > 0 or sat == 1) and s.ug + used >= s.r * (1 - 2 * m) and now - s.ch >= s.co and (hi < 0 or s.r < hi) then
  local settle = s.ce * (1 - m)
  s.pr = s.r
  if s.ce > 0 and s.r < settle * (1 - 1e-9) then
    s.r = math.min(settle, math.max(s.r * (1 + inc), (s.r + settle) / 2))
    s.pb = 0
  else
    -- A probe above the learned limit; one that held for a whole cool-off doubles the next step.
    if s.lc == 1 and s.pb == 1 then
      s.co = math.max(base, s.co / 2)
      s.st = math.min(maxStep, s.st * 2)
      if s.ce > 0 then s.ce = math.max(s.ce, s.r) end
    end
    local step = s.st
    if s.th > 0 and s.r * (1 + step) > s.th then step = inc end
    s.r = s.r * (1 + step)
    s.pb = 1
  end
  s.r = clamp(s.r)
  s.ch = now
  s.lc = 1
end
local share, short, want = -1, 0, 0
local live = 0
if lease > 0 then
  if s.r >= 0 then
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
  if acc < 0 then s.nk = s.nk + 1 else s.ac = s.ac + acc end
  s.ug = s.ug + used
  redis.call('HSET', M, id, tostring(a) .. ',' .. sat .. ',' .. tostring(acc) .. ',' .. tostring(used) .. ',' .. tostring(want))
  redis.call('ZADD', Z, now + 3 * lease, id)
end
live = redis.call('ZCARD', Z)
local out = {}
for k, x in pairs(s) do out[#out + 1] = k; out[#out + 1] = tostring(x) end
redis.call('HSET', H, unpack(out))
redis.call('EXPIRE', H, ttl)
redis.call('EXPIRE', M, ttl)
redis.call('EXPIRE', Z, ttl)
return { tostring(share), tostring(s.r), tostring(s.e), tostring(short), tostring(live) }`;
