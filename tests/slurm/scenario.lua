-- A GPU-free scenario for tests/slurm/run.sh: its configurations are listed by --dry-run on
-- any machine, and its `run` is plain Lua work that tests/slurm/host_shard.lua times on the CPU.
local wl = require "wlrun"

return wl.scenario {
  name = "slurm_cpu_sweep",
  description = "Lua loops on the host: a sweep to shard under Slurm without a GPU",
  params = {
    variant = { "sum", "xor" },
    n = wl.pow2(10, 16),
    unroll = { 1, 4 },
  },
  order = { "variant", "n", "unroll" },
  where = function(p) return not (p.variant == "xor" and p.unroll == 4 and p.n > 1 << 14) end,
  run = function(p)
    local s = 0
    if p.variant == "sum" then
      for i = 1, p.n, p.unroll do s = s + i end
    else
      for i = 1, p.n, p.unroll do s = s ~ i end
    end
    return s
  end,
}
