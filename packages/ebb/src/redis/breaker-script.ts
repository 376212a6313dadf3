import { BREAKER, FLEET_REASONS, PROBE_OPS } from './breaker-law.js';

/*
 * The fleet circuit breaker's Lua: breaker-law.ts's rule, run atomically by Redis ("Scripting
 * with Lua", atomicity), with the checks and repairs every ebb script makes (scripts.ts: nothing
 * read is trusted; a state carries a generation; each change is applied once). The constants
 * come from `BREAKER` (breaker-law.ts), so the two texts share one table.
 *
 * KEYS, three per breaker key, all of one hash tag (one Cluster slot): the state hash
 * `<prefix>:{<name>}:breaker[:<key>]`, the members' snapshots (a hash `…:members`: member →
 * `seq,calls,failures,lapses`) and their lapse times (a sorted set `…:lapses`).
 *
 * ARGV: [1] mode ('': a report; 'inspect': read one key, write nothing; 'reset': one key back to
 * closed with a new generation), [2] the member's id, [3] a new generation (drawn by the caller),
 * [4] failureRate, [5] minCalls, [6] minMembers, [7] windowMs, [8] maxHalfOpenProbes,
 * [9] successesToClose, [10] probeTimeoutMs (0: the open period before the probe),
 * [11] memberFailureRate, [12] the keys' idle expiry in ms, [13] the report's sequence number; then for each key BREAKER.argsPerKey
 * entries: the generation and epoch the snapshot belongs to, its calls and failures, the probe op
 * (breaker-law.ts PROBE_OPS) and its lease id, the seed (state 0/1, openings, remaining ms, open
 * period ms: the caller's last good view, to recreate a missing or broken state from), the
 * open periods it proposes for openings 1, 2, … (comma-separated), and the longest open period it
 * would ever propose (ms; 0: a day). 'inspect' takes one key's entries too, for that last one.
 *
 * Returns, for each key, BREAKER.replyPerKey values: state (0 closed, 1 open, 2 half-open),
 * openings, remaining ms, open period ms, epoch, closings, generation, the caller's lease id (or
 * -1), lease remaining ms, probes held, the fleet's calls, failures and failing members, the
 * reason of the last change, and the first bad key, field and value this call repaired ('' for
 * none). 'inspect' returns { the key's values (or {} when missing or unsound), the stored fields,
 * the snapshots held, every fault }.
 *
 * Checks: the hash holds exactly the layout's fields, each in its domain (a whole generation ≥ 1;
 * state 0 or 1; openings whole, ≥ 1 exactly when open; times within a day of the server's clock;
 * counts whole, failures ≤ calls ≤ 2^53; at most BREAKER.maxProbes well-formed leases). A hash
 * that fails is rewritten from the caller's seed with a new generation. The snapshots must agree
 * with their index and with the sums; each one read must be four numbers in their domains: if not,
 * the fleet's evidence is dropped (the members send theirs again within a report period) and the
 * state kept.
 *
 * Bounds (breaker-law.ts `boundOpen`, the same rule): a sound open state binds the caller no longer
 * than the longest open period it would ever propose — what is left of the period (`ou`) and the
 * period (`om`) are shortened to it, and each probe lease to `probeTimeoutMs` (else that period) —
 * and written back with the same generation, epoch and evidence: a clamp, not a repair, so that
 * members whose `openBackoff` differ (a rolling deploy) converge on the narrowest bound instead of
 * resetting the fleet at each opening. The reply names the first field shortened as it names a
 * repaired one; 'inspect' lists each one it would shorten.
 */
export const BREAKER_SCRIPT = `local function exact(x) return string.format('%.17g', x) end
local function whole(x, a, b) return x ~= nil and x == math.floor(x) and x >= a and x <= b end
local function inr(x, a, b) return x ~= nil and x == x and x >= a and x <= b end
local function kind(k) return redis.call('TYPE', k).ok end
local faults = {}
local function fault(k, f, v)
  faults[#faults + 1] = k
  faults[#faults + 1] = f
  if v == nil then v = '(missing)' end
  faults[#faults + 1] = string.sub(tostring(v), 1, 64)
end
local LAYOUT, DAY, MAXC, MAXOPEN = ${BREAKER.layout}, ${BREAKER.dayMs}, ${BREAKER.maxCount}, ${BREAKER.maxOpenings}
local MAXPRUNED, MAXPROBES, HEAD, PER = ${BREAKER.maxPruned}, ${BREAKER.maxProbes}, ${BREAKER.headArgs}, ${BREAKER.argsPerKey}
local NREASONS = ${FLEET_REASONS.length}
local mode, member, newgen = ARGV[1], ARGV[2], tonumber(ARGV[3])
local rate, minCalls, minMembers, windowMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local probes, toClose, probeMs, memberRate = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local ttl, seq = tonumber(ARGV[12]), tonumber(ARGV[13])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local FIELDS = { v = 1, g = 1, s = 1, n = 1, ou = 1, om = 1, ps = 1, e = 1, k = 1, r = 1, rt = 1, C = 1, F = 1, M = 1, l = 1 }

local function failing(c, f) return f >= 1 and f >= rate * c end
local function periodFor(periods, n, fallback)
  if #periods == 0 then return fallback end
  if n > #periods then n = #periods end
  return periods[n]
end
-- A sound open state shortened to the caller's bounds: the longest period it would propose (ARGV
-- at base + 12; 0 or none: a day), and its probe lease.
local function bound(H, st, base)
  if st.s ~= 1 then return end
  local most = tonumber(ARGV[base + 12])
  if not (most ~= nil and most >= 1 and most < DAY) then most = DAY end
  if st.ou > now + most then
    fault(H, 'ou', exact(st.ou))
    st.ou = now + most
  end
  if st.om > most then
    fault(H, 'om', exact(st.om))
    st.om = most
  end
  local lease = most
  if probeMs > 0 then lease = math.min(probeMs, DAY) end
  for _, x in ipairs(st.leases) do
    if x.expiry > now + lease then
      fault(H, 'l', x.member .. ':' .. exact(x.id) .. ':' .. exact(x.expiry))
      x.expiry = now + lease
    end
  end
end

-- The stored state of H, checked: the state (nil when missing or unsound) and the raw fields.
local function load(H)
  local raw = {}
  local kt = kind(H)
  if kt == 'none' then return nil, raw, kt end
  if kt ~= 'hash' then
    fault(H, '(type)', kt)
    return nil, raw, kt
  end
  raw = redis.call('HGETALL', H)
  local f = {}
  for j = 1, #raw, 2 do
    f[raw[j]] = raw[j + 1]
    if not FIELDS[raw[j]] then fault(H, raw[j], raw[j + 1]) end
  end
  local before = #faults
  local st = {}
  if tonumber(f.v) ~= LAYOUT then fault(H, 'v', f.v) end
  st.g = tonumber(f.g)
  if not whole(st.g, 1, MAXC) then fault(H, 'g', f.g) end
  st.s = tonumber(f.s)
  if st.s ~= 0 and st.s ~= 1 then fault(H, 's', f.s) end
  st.n = tonumber(f.n)
  if not whole(st.n, 0, MAXOPEN) or (st.s == 0 and st.n ~= 0) or (st.s == 1 and st.n < 1) then fault(H, 'n', f.n) end
  st.ou = tonumber(f.ou)
  if not ((st.s == 0 and st.ou == 0) or (st.s == 1 and inr(st.ou, now - DAY, now + DAY))) then fault(H, 'ou', f.ou) end
  st.om = tonumber(f.om)
  if not inr(st.om, 0, DAY) then fault(H, 'om', f.om) end
  st.ps = tonumber(f.ps)
  if not whole(st.ps, 0, MAXC) then fault(H, 'ps', f.ps) end
  st.e = tonumber(f.e)
  if not whole(st.e, 0, MAXC) then fault(H, 'e', f.e) end
  st.k = tonumber(f.k)
  if not whole(st.k, 0, MAXC) then fault(H, 'k', f.k) end
  st.r = tonumber(f.r)
  if not whole(st.r, 0, NREASONS - 1) then fault(H, 'r', f.r) end
  st.rt = tonumber(f.rt)
  if not inr(st.rt, 0, now + DAY) then fault(H, 'rt', f.rt) end
  st.C = tonumber(f.C)
  if not whole(st.C, 0, MAXC) then fault(H, 'C', f.C) end
  st.F = tonumber(f.F)
  if not (whole(st.F, 0, MAXC) and st.C ~= nil and st.F <= st.C) then fault(H, 'F', f.F) end
  st.M = tonumber(f.M)
  if not whole(st.M, 0, MAXC) then fault(H, 'M', f.M) end
  st.leases = {}
  local l = f.l
  if l == nil then fault(H, 'l', l)
  elseif l ~= '' then
    for entry in string.gmatch(l, '[^;]+') do
      local m, id, exp = string.match(entry, '^(%w+):([^:]+):([^:]+)$')
      id, exp = tonumber(id), tonumber(exp)
      if m == nil or string.len(m) > 64 or not whole(id, 0, MAXC) or not inr(exp, now - DAY, now + DAY) or st.s ~= 1 then
        fault(H, 'l', l)
        break
      end
      st.leases[#st.leases + 1] = { member = m, id = id, expiry = exp }
    end
    if #st.leases > MAXPROBES then fault(H, 'l', l) end
  end
  if #faults > before then return nil, raw, kt end
  return st, raw, kt
end

-- A snapshot record "seq,calls,failures,lapses", checked; nil when unsound.
local function record(v)
  if v == nil or v == false then return nil end
  local a, b, c, d = string.match(v, '^([^,]+),([^,]+),([^,]+),([^,]+)$')
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if whole(a, 0, MAXC) and whole(b, 0, MAXC) and whole(c, 0, MAXC) and c <= b and inr(d, now - DAY, now + DAY) then
    return { seq = a, c = b, f = c, exp = d }
  end
  return nil
end

local function seeded(base)
  local s = tonumber(ARGV[base + 7])
  local st = { g = newgen, s = 0, n = 0, ou = 0, om = 0, ps = 0, e = 0, k = 0, r = 0, rt = 0, C = 0, F = 0, M = 0, leases = {} }
  if s == 1 then
    st.s = 1
    st.n = math.max(1, tonumber(ARGV[base + 8]))
    st.ou = now + tonumber(ARGV[base + 9])
    st.om = tonumber(ARGV[base + 10])
  end
  return st
end

local function write(H, MB, Z, st)
  local l = {}
  for _, x in ipairs(st.leases) do l[#l + 1] = x.member .. ':' .. exact(x.id) .. ':' .. exact(x.expiry) end
  redis.call('HSET', H, 'v', LAYOUT, 'g', exact(st.g), 's', st.s, 'n', exact(st.n), 'ou', exact(st.ou), 'om', exact(st.om),
    'ps', exact(st.ps), 'e', exact(st.e), 'k', exact(st.k), 'r', st.r, 'rt', exact(st.rt), 'C', exact(st.C), 'F', exact(st.F),
    'M', exact(st.M), 'l', table.concat(l, ';'))
  local keep = 0
  if st.s == 1 then keep = st.ou - now end
  local ms = math.ceil(math.max(ttl, keep + windowMs))
  redis.call('PEXPIRE', H, ms)
  redis.call('PEXPIRE', MB, ms)
  redis.call('PEXPIRE', Z, ms)
end

local function reply(st, out)
  local own, first = nil, nil
  for _, x in ipairs(st.leases) do
    if x.member == member then own = x end
    if first == nil or x.expiry < first then first = x.expiry end
  end
  local state, remaining, lease, lr = 0, 0, -1, 0
  if st.s == 1 then
    state = 1
    if now >= st.ou then state = 2 end
    remaining = math.max(0, st.ou - now)
  end
  if own then lease, lr = own.id, own.expiry - now elseif first then lr = first - now end
  if lr < 0 then lr = 0 end
  for _, x in ipairs({ state, st.n, remaining, st.om, st.e, st.k, st.g, lease, lr, #st.leases, st.C, st.F, st.M, st.r }) do
    out[#out + 1] = exact(x)
  end
end

local function firstFault(from, out)
  if #faults > from then
    out[#out + 1] = faults[from + 1]
    out[#out + 1] = faults[from + 2]
    out[#out + 1] = faults[from + 3]
  else
    out[#out + 1] = ''
    out[#out + 1] = ''
    out[#out + 1] = ''
  end
end

if mode == 'inspect' then
  local H, MB = KEYS[1], KEYS[2]
  local st, raw = load(H)
  local values = {}
  if st then
    reply(st, values)
    bound(H, st, HEAD)
  end
  local held = 0
  if kind(MB) == 'hash' then held = redis.call('HLEN', MB) end
  return { values, raw, held, faults }
end

if mode == 'reset' then
  local H, MB, Z = KEYS[1], KEYS[2], KEYS[3]
  local old = load(H)
  local k = 0
  if old then k = old.k end
  local st = seeded(HEAD)
  if old and st.g == old.g then st.g = st.g + 1 end
  st.s, st.n, st.ou, st.om = 0, 0, 0, 0
  st.k, st.r, st.rt = k + 1, ${FLEET_REASONS.indexOf('reset')}, now
  redis.call('DEL', H, MB, Z)
  write(H, MB, Z, st)
  local out = {}
  reply(st, out)
  firstFault(0, out)
  return out
end

local out = {}
local nkeys = math.floor(#KEYS / 3)
for i = 1, nkeys do
  local H, MB, Z = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local base = HEAD + (i - 1) * PER
  local from = #faults
  local st, _, kt = load(H)
  if not st then
    local old = nil
    if kt == 'hash' then old = tonumber(redis.call('HGET', H, 'g')) end
    st = seeded(base)
    if old == st.g then st.g = st.g + 1 end
    if kt ~= 'none' then redis.call('DEL', H) end
    redis.call('DEL', MB, Z)
  else
    -- The snapshots must agree with their index and with the sums.
    local tm, tz = kind(MB), kind(Z)
    local hm, hz = 0, 0
    if tm == 'hash' then hm = redis.call('HLEN', MB) elseif tm ~= 'none' then fault(MB, '(type)', tm) end
    if tz == 'zset' then hz = redis.call('ZCARD', Z) elseif tz ~= 'none' then fault(Z, '(type)', tz) end
    if #faults == from and (hm ~= hz or st.M > hm or (hm == 0 and (st.C ~= 0 or st.F ~= 0))) then
      fault(MB, '(count)', hm .. ' of ' .. hz)
    end
  end
  local function dropEvidence()
    redis.call('DEL', MB, Z)
    st.C, st.F, st.M = 0, 0, 0
  end
  if #faults > from then dropEvidence() end
  -- A change of state drops the evidence and keeps the roster: each snapshot stays, with no calls.
  local function zeroEvidence()
    local all = redis.call('HGETALL', MB)
    for j = 1, #all, 2 do
      local r = record(all[j + 1])
      if not r then
        fault(MB, all[j], all[j + 1])
        dropEvidence()
        return
      end
      redis.call('HSET', MB, all[j], exact(r.seq) .. ',0,0,' .. exact(r.exp))
    end
    st.C, st.F, st.M = 0, 0, 0
  end
  local periods = {}
  for p in string.gmatch(ARGV[base + 11], '[^,]+') do periods[#periods + 1] = tonumber(p) end
  bound(H, st, base)
  local function open(n, at, reason)
    st.s, st.n = 1, n
    st.om = periodFor(periods, n, st.om)
    st.ou = at + st.om
    st.ps, st.leases = 0, {}
    st.e = st.e + 1
    st.r, st.rt = reason, at
    zeroEvidence()
  end
  local function close(at, reason)
    st.s, st.n, st.ou, st.om, st.ps, st.leases = 0, 0, 0, 0, 0, {}
    st.e, st.k = st.e + 1, st.k + 1
    st.r, st.rt = reason, at
    zeroEvidence()
  end
  -- Lapsed snapshots go, oldest first.
  local due = redis.call('ZRANGEBYSCORE', Z, '-inf', now, 'LIMIT', 0, MAXPRUNED)
  for _, id in ipairs(due) do
    local v = redis.call('HGET', MB, id)
    local r = record(v)
    if not r then
      fault(MB, id, v)
      dropEvidence()
      break
    end
    st.C, st.F = st.C - r.c, st.F - r.f
    if failing(r.c, r.f) then st.M = st.M - 1 end
    redis.call('HDEL', MB, id)
    redis.call('ZREM', Z, id)
  end
  -- A lease that lapsed without a result: its probe failed as of that moment.
  if st.s == 1 and #st.leases > 0 then
    local oldest = st.leases[1].expiry
    for _, x in ipairs(st.leases) do if x.expiry < oldest then oldest = x.expiry end end
    if oldest <= now then open(st.n + 1, oldest, ${FLEET_REASONS.indexOf('probe-timeout')}) end
  end
  local op, leaseId = tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6])
  local mine = nil
  for j, x in ipairs(st.leases) do if x.member == member then mine = j end end
  if op == ${PROBE_OPS.claim} then
    if st.s == 1 and now >= st.ou and mine == nil and #st.leases < probes then
      local length = st.om
      if probeMs > 0 then length = probeMs end
      length = math.min(math.max(1, length), DAY)
      st.leases[#st.leases + 1] = { member = member, id = leaseId, expiry = now + length }
    end
  elseif op ~= ${PROBE_OPS.none} then
    local found = nil
    for j, x in ipairs(st.leases) do if x.member == member and x.id == leaseId then found = j end end
    if found then
      table.remove(st.leases, found)
      if op == ${PROBE_OPS.success} then
        st.ps = st.ps + 1
        if st.ps >= toClose then close(now, ${FLEET_REASONS.indexOf('probes-succeeded')}) end
      elseif op == ${PROBE_OPS.failure} then
        open(st.n + 1, now, ${FLEET_REASONS.indexOf('probe-failed')})
      end
    end
  end
  local g, e, c, f = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4])
  local v = redis.call('HGET', MB, member)
  local old = record(v)
  if v and not old then
    fault(MB, member, v)
    dropEvidence()
  end
  if old == nil or old.seq < seq then
    local exp = now + windowMs
    if st.s == 0 and g == st.g and e == st.e then
      if old then
        st.C, st.F = st.C - old.c, st.F - old.f
        if failing(old.c, old.f) then st.M = st.M - 1 end
      end
      st.C, st.F = st.C + c, st.F + f
      if failing(c, f) then st.M = st.M + 1 end
      redis.call('HSET', MB, member, exact(seq) .. ',' .. exact(c) .. ',' .. exact(f) .. ',' .. exact(exp))
      redis.call('ZADD', Z, exact(exp), member)
    elseif old == nil or (old.c == 0 and old.f == 0) then
      -- Old news counts for nothing, but its member is in the fleet: on the roster, with no calls.
      redis.call('HSET', MB, member, exact(seq) .. ',0,0,' .. exact(exp))
      redis.call('ZADD', Z, exact(exp), member)
    end
  end
  if st.s == 0 and st.C >= minCalls and st.F >= 1 and st.F >= rate * st.C and st.M >= minMembers
    and st.M > memberRate * redis.call('HLEN', MB) then
    open(1, now, ${FLEET_REASONS.indexOf('failure-rate')})
  end
  write(H, MB, Z, st)
  reply(st, out)
  firstFault(from, out)
end
return out`;
