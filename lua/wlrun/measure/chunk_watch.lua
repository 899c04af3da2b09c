-- What the engine reads between chunks of samples, outside every timed window (docs/measuring.md,
-- "Clocks, throttling, energy and memory"): the SM clock of each chunk, chunks taken while the
-- GPU throttled (discarded, after a recovery pause, at most MAX_DISCARDED of them), the energy
-- and wall time of the chunks kept, and the most device memory in use.
--
--   watch.new(read, now) -> w               read(energy) -> {sm_mhz =, throttle = {names},
--                                            used_bytes =, energy_j = (when energy is true)}
--                                            (core.gpu_sample); now() -> seconds
--   w.enabled                               NVML gives the SM clock: measure in chunks
--   w:after_chunk(samples, launches)        -> "keep" or "discard" (then w:pause())
--   w:pause(sleep)                          the recovery pause; its energy is not counted
--   w:finish(r)                             r.clock.chunks, r.throttle, r.energy (measurements of
-- at
--                                           least ENERGY_MIN_TIME), r.memory, notes
--
-- NVML's energy counter is slow to read (3.4 ms a reading on an H200, up to 17 ms, against a few
-- microseconds for the clock: tests/bench/harness_costs.lua) and moves only every 100 ms, so it
-- is read after a chunk only once ENERGY_PERIOD has passed since the measurement began (or a
-- recovery pause ended), then once the time since its last reading is at least ENERGY_PERIOD
-- and the span its readings so far cover without a break, but at most ENERGY_MAX_PERIOD (so at
-- about 0.1, 0.2, 0.3, 0.5, 0.9, 1.4, 1.9 s...), and once more at the end of a measurement long
-- enough to report it. The energy covers the kept chunks from its first reading on; a discarded
-- chunk takes the chunks since the last reading out of it with itself. Only a discard needs the
-- readings between the first and the last (the joules of an unbroken span are its last reading
-- less its first): so a discard loses at most half the span and at most ENERGY_MAX_PERIOD of
-- it, and a long measurement reads the counter twice a second, not ten times (each reading
-- 3.4 ms on the H200: 3.4 % of its wall time, now 0.7 %).
local units = require "wlrun.text.units"

local watch = {}

-- a chunk whose SM clock is below 75 % of the highest read is throttled
watch.THROTTLE_FRACTION = 0.75
watch.RECOVERY_PAUSE = 0.05    -- seconds the GPU is left idle after a throttled chunk
watch.MAX_DISCARDED = 10       -- after this many throttled chunks the rest are kept (and warned of)
watch.ENERGY_MIN_TIME = 1      -- the energy of a shorter measurement is not reported: NVML's
                               -- counter moves every 100 ms (H200, tests/bench/cold_l2.lua)
watch.ENERGY_PERIOD = 0.1      -- seconds to the energy counter's first reading, and the least
                               -- between two readings
watch.ENERGY_MAX_PERIOD = 0.5  -- the most between two readings

local W = {}
W.__index = W

function watch.new(read, now)
  local first, t = read(false), now()
  return setmetatable({
    read = read, now = now, enabled = first.sm_mhz ~= nil,
    used = first.used_bytes or 0, top_mhz = first.sm_mhz,
    sm_mhz = {}, kept_throttled = 0, discarded = { chunks = 0, samples = 0, reasons = {} },
    -- the energy: joules, seconds and launches between readings of the counter so far (nil once
    -- a reading could not give it); e_last, e_t: the last reading and its time (e_last nil
    -- before the first, and after a discarded chunk); span_t: the time of the first reading of
    -- the unbroken span e_last ends; pending: launches kept since e_t
    energy = 0, time = 0, launches = 0, e_t = t, span_t = t, pending = 0,
  }, W)
end

-- reads the energy counter at time t: what the kept chunks since the last reading took is added
function W:energy_at(j, t)
  if not j then self.energy = nil return end -- a reading without the counter: no energy at all
  if self.e_last then
    self.energy, self.time = self.energy + (j - self.e_last), self.time + (t - self.e_t)
    self.launches = self.launches + self.pending
  else
    self.span_t = t
  end
  self.e_last, self.e_t, self.pending = j, t, 0
end

-- the reasons a reading says the chunk before it ran throttled, or nil. The clock is compared
-- with the highest one read in this measurement (the reading before the first chunk included),
-- not with the device's maximum: a clock locked low (--lock-clocks 1000, in this process or by
-- the parent of an --isolate child, or by an administrator) is not a throttled one.
function W:throttled(s)
  local why = {}
  for _, name in ipairs(s.throttle or {}) do why[#why + 1] = name end
  self.top_mhz = math.max(self.top_mhz or 0, s.sm_mhz or 0)
  if s.sm_mhz and s.sm_mhz < watch.THROTTLE_FRACTION * self.top_mhz then
    why[#why + 1] = ("sm_clock_%d_mhz"):format(s.sm_mhz)
  end
  return #why > 0 and why or nil
end

function W:after_chunk(samples, launches)
  local t = self.now()
  local span = self.e_last and self.e_t - self.span_t or 0
  local energy = self.energy ~= nil
    and t - self.e_t >= math.max(watch.ENERGY_PERIOD, math.min(span, watch.ENERGY_MAX_PERIOD))
  local s = self.read(energy)
  self.used = math.max(self.used, s.used_bytes or 0)
  local why = self.enabled and self:throttled(s)
  if why and self.discarded.chunks < watch.MAX_DISCARDED then
    local d = self.discarded
    d.chunks, d.samples = d.chunks + 1, d.samples + samples
    for _, name in ipairs(why) do
      if name:match("^sm_clock_") then name = "sm_clock_below_75_percent_of_highest" end
      d.reasons[name] = true
    end
    self.e_last, self.pending = nil, 0 -- the kept chunks since the last reading go with it
    return "discard"
  end
  if why then self.kept_throttled = self.kept_throttled + 1 end
  if s.sm_mhz then self.sm_mhz[#self.sm_mhz + 1] = s.sm_mhz end
  self.pending = self.pending + launches
  if energy then self:energy_at(s.energy_j, t) end
  return "keep"
end

function W:pause(sleep)
  sleep(watch.RECOVERY_PAUSE)
  self.e_t = self.now()
end

function W:finish(r)
  local t = self.now()
  if self.energy and self.e_last and self.pending > 0
    and self.time + (t - self.e_t) >= watch.ENERGY_MIN_TIME then
    self:energy_at(self.read(true).energy_j, t)
  end
  r.clock = r.clock or {}
  if #self.sm_mhz > 0 then r.clock.chunks = self.sm_mhz end
  local d = self.discarded
  if d.chunks > 0 or self.kept_throttled > 0 then
    local reasons = {}
    for name in pairs(d.reasons) do reasons[#reasons + 1] = name end
    table.sort(reasons)
    r.throttle = { discarded_chunks = d.chunks, discarded_samples = d.samples,
      kept_chunks = self.kept_throttled,
      reasons = reasons }
    r.notes[#r.notes + 1] = (
      "throttle: %d chunk%s (%d samples) taken while the GPU throttled (%s) were discarded "
      .. "after a %s pause each%s"):format(
      d.chunks, d.chunks == 1 and "" or "s", d.samples, table.concat(reasons, ", "),
        units.time(watch.RECOVERY_PAUSE),
      self.kept_throttled > 0 and (", and %d kept when the limit of %d was reached"):format(
        self.kept_throttled, watch.MAX_DISCARDED) or "")
  end
  if self.energy and self.time >= watch.ENERGY_MIN_TIME and self.launches > 0
    and self.energy > 0 then
    r.energy = { joules = self.energy, seconds = self.time, mean_power_w = self.energy / self.time,
      launches = self.launches, joules_per_launch = self.energy / self.launches }
  end -- a shorter measurement has no energy, and says nothing of it: most are shorter
  r.memory = { device_used_bytes = self.used }
end

return watch
