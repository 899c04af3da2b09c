-- What the engine reads between chunks of samples, outside every timed window (docs/measuring.md,
-- "Clocks, throttling, energy and memory"): the SM clock of each chunk, chunks taken while the
-- GPU throttled (discarded, after a recovery pause, at most MAX_DISCARDED of them), the energy
-- and wall time of the chunks kept, and the most device memory in use.
--
--   watch.new(read, now) -> w               read() -> {sm_mhz =, throttle = {names}, energy_j =,
--                                            used_bytes =} (core.gpu_sample); now() -> seconds
--   w.enabled                               NVML gives the SM clock: measure in chunks
--   w:after_chunk(samples, launches)        -> "keep" or "discard" (then w:pause())
--   w:pause(sleep)                          the recovery pause; its energy is not counted
--   w:finish(r)                             r.clock.chunks, r.throttle, r.energy (measurements of at
--                                           least ENERGY_MIN_TIME), r.memory, notes
local watch = {}

watch.THROTTLE_FRACTION = 0.75 -- a chunk whose SM clock is below 75 % of the highest read is throttled
watch.RECOVERY_PAUSE = 0.05    -- seconds the GPU is left idle after a throttled chunk
watch.MAX_DISCARDED = 10       -- after this many throttled chunks the rest are kept (and warned of)
watch.ENERGY_MIN_TIME = 1      -- the energy of a shorter measurement is not reported: NVML's
                               -- counter moves every 100 ms (H200, tests/bench/cold_l2.lua)

local W = {}
W.__index = W

function watch.new(read, now)
  local first = read()
  return setmetatable({
    read = read, now = now, enabled = first.sm_mhz ~= nil,
    last = first, t = now(), used = first.used_bytes or 0, top_mhz = first.sm_mhz,
    sm_mhz = {}, kept_throttled = 0, discarded = { chunks = 0, samples = 0, reasons = {} },
    energy = first.energy_j and 0 or nil, time = 0, launches = 0,
  }, W)
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
  local s, t = self.read(), self.now()
  self.used = math.max(self.used, s.used_bytes or 0)
  local why = self.enabled and self:throttled(s)
  if why and self.discarded.chunks < watch.MAX_DISCARDED then
    local d = self.discarded
    d.chunks, d.samples = d.chunks + 1, d.samples + samples
    for _, name in ipairs(why) do
      if name:match("^sm_clock_") then name = "sm_clock_below_75_percent_of_highest" end
      d.reasons[name] = true
    end
    self.last, self.t = s, t
    return "discard"
  end
  if why then self.kept_throttled = self.kept_throttled + 1 end
  if s.sm_mhz then self.sm_mhz[#self.sm_mhz + 1] = s.sm_mhz end
  -- a reading without the counter leaves a chunk's energy out but not its time: no energy at all
  if self.energy and not (s.energy_j and self.last.energy_j) then self.energy = nil end
  if self.energy then self.energy = self.energy + (s.energy_j - self.last.energy_j) end
  self.time, self.launches = self.time + (t - self.t), self.launches + launches
  self.last, self.t = s, t
  return "keep"
end

function W:pause(sleep)
  sleep(watch.RECOVERY_PAUSE)
  self.last, self.t = self.read(), self.now()
end

function W:finish(r)
  local units = require "wlrun.units"
  r.clock = r.clock or {}
  if #self.sm_mhz > 0 then r.clock.chunks = self.sm_mhz end
  local d = self.discarded
  if d.chunks > 0 or self.kept_throttled > 0 then
    local reasons = {}
    for name in pairs(d.reasons) do reasons[#reasons + 1] = name end
    table.sort(reasons)
    r.throttle = { discarded_chunks = d.chunks, discarded_samples = d.samples, kept_chunks = self.kept_throttled,
      reasons = reasons }
    r.notes[#r.notes + 1] = ("throttle: %d chunk%s (%d samples) taken while the GPU throttled (%s) were discarded after a %s pause each%s"):format(
      d.chunks, d.chunks == 1 and "" or "s", d.samples, table.concat(reasons, ", "), units.time(watch.RECOVERY_PAUSE),
      self.kept_throttled > 0 and (", and %d kept when the limit of %d was reached"):format(self.kept_throttled, watch.MAX_DISCARDED) or "")
  end
  if self.energy and self.time >= watch.ENERGY_MIN_TIME and self.launches > 0 and self.energy > 0 then
    r.energy = { joules = self.energy, seconds = self.time, mean_power_w = self.energy / self.time,
      joules_per_launch = self.energy / self.launches }
  end -- a shorter measurement has no energy, and says nothing of it: most are shorter
  r.memory = { device_used_bytes = self.used }
end

return watch
