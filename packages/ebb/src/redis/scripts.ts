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
