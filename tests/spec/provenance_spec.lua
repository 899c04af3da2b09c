-- A run's provenance (docs/results.md, "Provenance"): reading the kernel's files, what the
-- strict loader refuses in it (naming the path), and what compare says differs between two
-- runs (wlrun.compare.provenance).
local provenance = require "wlrun.results.provenance"
local diff = require "wlrun.compare.provenance"
local load = require "wlrun.results.load"
local json = require "wlrun.json"

local SHA1 = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
local SHA2 = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"

local function prov(o)
  local p = { git = { commit = SHA1, dirty = false, branch = "main" }, host = "node1",
    cpu = { model = "AMD EPYC 9654", count = 192 },
      os = { name = "Linux", release = "6.8.0", arch = "x86_64" },
    driver = { cuda = "13.0", nvidia = "580.65.06" },
      toolkit = { runtime = "13.0", nvrtc = "13.0" },
    wlrun = "0.1.0", command_line = { "wlrun", "s.lua", "-o", "a.json" } }
  for k, v in pairs(o or {}) do p[k] = v end
  return p
end

local function doc(p) return { schema = "wlrun-results", version = 1, provenance = p,
  configurations = {} } end

describe("provenance.collect's readers", function()
  it("counts the CPUs of a list of ranges", function()
    assert.equal(16, provenance.count_cpus("0-15"))
    assert.equal(34, provenance.count_cpus("0-15,32-47,64,65"))
    assert.equal(1, provenance.count_cpus("0"))
    assert.is_nil(provenance.count_cpus(""))
    assert.is_nil(provenance.count_cpus("0-3,x"))
    assert.is_nil(provenance.count_cpus(nil))
  end)

  it("reads the CPU's model, on x86 and where there is no 'model name'", function()
    local x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
      .. "model name\t: AMD EPYC 9654 96-Core Processor\ncpu MHz\t\t: 2400.000\n"
    assert.equal("AMD EPYC 9654 96-Core Processor", provenance.cpu_model(x86))
    assert.equal("POWER9, altivec supported", provenance.cpu_model(
      "processor\t: 0\ncpu\t\t: POWER9, altivec supported\n"))
    assert.equal("NVIDIA Grace", provenance.cpu_model("Model\t: NVIDIA Grace\n"))
    assert.is_nil(provenance.cpu_model("processor\t: 0\nBogoMIPS\t: 2000.00\nCPU part\t: 0xd4f\n"))
    assert.is_nil(provenance.cpu_model(nil))
  end)

  it("reads the NVIDIA module's version, and formats CUDA's version numbers", function()
    local text
      = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 06:54:38 UTC 2025\n"
      .. "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
    assert.equal("580.65.06", provenance.nvidia_version(text))
    assert.equal("570.133.20", provenance.nvidia_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
        .. "(dvs-builder@U16)\n"))
    assert.is_nil(provenance.nvidia_version("something else\n"))
    assert.equal("13.0", provenance.cuda_version(13000))
    assert.equal("12.8", provenance.cuda_version(12080))
    assert.is_nil(provenance.cuda_version(0))
    assert.is_nil(provenance.cuda_version(12.5))
  end)

  it("finds the directory of a scenario's file", function()
    assert.equal("bench", provenance.dir_of("bench/s.lua"))
    assert.equal(".", provenance.dir_of("s.lua"))
    assert.equal("/", provenance.dir_of("/s.lua"))
    assert.equal("/a/b", provenance.dir_of("/a/b/s.lua"))
    assert.is_nil(provenance.dir_of(nil))
  end)

  it("warns when --resume's file is of another commit, and only then", function()
    local at = function(c, dirty) return { git = { commit = c, dirty = dirty } } end
    assert.equal(
      "--resume r.json was measured at commit 1a2b3c4d5e (dirty), this run is at 9f8e7d6c5b: "
      .. "the results "
      .. "mix the two (the file's provenance is kept as provenance.resumed_from)",
      provenance.resume_warning({ path = "r.json", provenance = at(SHA1, true) }, at(SHA2, false)))
    assert.is_string(provenance.resume_warning({ path = "r", provenance = at(SHA1, false) },
      at(SHA1, true)))
    assert.is_nil(provenance.resume_warning({ path = "r", provenance = at(SHA1, true) },
      at(SHA1, true)))
    -- an older wlrun's
    assert.is_nil(provenance.resume_warning({ path = "r", provenance = nil }, at(SHA1, false)))
    assert.is_nil(provenance.resume_warning({ path = "r", provenance = {} }, {}))
  end)

  it("collects this machine's facts, without a device's when there is none", function()
    local p = provenance.collect { dir = nil, device = nil }
    assert.is_nil(p.git)
    assert.is_string(p.wlrun)
    assert.is_table(p.command_line)
    assert.is_nil(p.driver and p.driver.cuda)
    assert.is_nil(p.toolkit and p.toolkit.runtime)
    local with = provenance.collect { device = { driver_version = 13000, runtime_version = 12080 } }
    assert.equal("13.0", with.driver.cuda)
    assert.equal("12.8", with.toolkit.runtime)
  end)
end)

describe("the strict loader on a provenance", function()
  local function refused(p, path)
    local ok, e = pcall(load.decode, json.encode(doc(p)), "hostile.json")
    assert.is_false(ok)
    assert.equal("usage", e.kind)
    assert.matches("'hostile%.json' is malformed: " .. path:gsub("%p", "%%%0"), e.message)
  end

  it("accepts what a run writes, the older {commit, dirty} form and parts it does not know",
    function()
    assert.is_table(load.decode(json.encode(doc(prov())), "a.json").provenance)
    assert.is_table(load.decode(json.encode(doc { commit = "abcdef1234", dirty = true }),
      "b.json").provenance)
    assert.is_table(load.decode(json.encode(doc(prov { future = { x = 1 } })), "c.json").provenance)
    assert.is_table(load.decode(json.encode(doc(prov { resumed_from = prov() })),
      "d.json").provenance.resumed_from)
  end)

  it("refuses each part of the wrong type, naming its path", function()
    refused("text", "provenance is a string, not an object")
    refused(json.array { 1 }, "provenance is an array, not an object")
    refused(prov { git = "HEAD" }, "provenance.git is a string, not an object")
    refused(prov { git = { commit = "$(rm -rf ~)", dirty = false } },
      "provenance.git.commit is a string, not a commit")
    refused(prov { git = { commit = "abc", dirty = false } },
      "provenance.git.commit is a string, not a commit")
    refused(prov { git = { commit = SHA1, dirty = "yes" } },
      "provenance.git.dirty is a string, not true or false")
    refused(prov { git = { commit = SHA1, branch = {} } },
      "provenance.git.branch is a JSON object or array, not a string")
    refused(prov { host = 12 }, "provenance.host is a number, not a string")
    refused(prov { cpu = { count = 0 } },
      "provenance.cpu.count is a number, not a whole number >= 1")
    refused(prov { cpu = { model = true } }, "provenance.cpu.model is a boolean, not a string")
    refused(prov { os = { release = 6.8 } }, "provenance.os.release is a number, not a string")
    refused(prov { driver = { cuda = 13000 } }, "provenance.driver.cuda is a number, not a string")
    refused(prov { toolkit = { nvrtc = { "13" } } },
      "provenance.toolkit.nvrtc is a JSON object or array, not a string")
    refused(prov { wlrun = 1 }, "provenance.wlrun is a number, not a string")
    refused(prov { command_line = { "wlrun", 3 } },
      "provenance.command_line[2] is a number, not a string")
    refused(prov { command_line = "wlrun s.lua" },
      "provenance.command_line is a string, not an array")
    refused(prov { resumed_from = "r.json" }, "provenance.resumed_from is a string, not an object")
    refused(prov { resumed_from = prov { git = { commit = "HEAD~1" } } },
      "provenance.resumed_from.git.commit is a string, not a commit")
  end)
end)

describe("compare's provenance differences", function()
  local function texts(a, b)
    local out = {}
    for _, d in ipairs(diff.differences(doc(a), doc(b))) do out[#out + 1] = d.field .. " " .. d.base
      .. " vs " .. d.new end
    return out
  end

  it("are none between two runs of the same provenance, or two without one", function()
    assert.same({}, texts(prov(), prov()))
    assert.same({}, texts(nil, nil))
  end)

  it("name the commit (short, dirty marked), the host, the drivers and the command line", function()
    local new = prov { git = { commit = SHA2, dirty = false, branch = "main" }, host = "node2",
      driver = { cuda = "12.8", nvidia = "570.133.20" },
        command_line = { "wlrun", "s.lua", "-o", "b json" } }
    local base = prov { git = { commit = SHA1, dirty = true, branch = "main" } }
    assert.same({
      "commit 1a2b3c4 (dirty) vs 9f8e7d6",
      "host node1 vs node2",
      "CUDA driver 13.0 vs 12.8",
      "NVIDIA driver 580.65.06 vs 570.133.20",
      'command line wlrun s.lua -o a.json vs wlrun s.lua -o "b json"',
    }, texts(base, new))
  end)

  it("lengthen two commits that agree in their first 7 digits, and say so of the dirty flag alone",
    function()
    local other = "1a2b3c4d00000000000000000000000000000000"
    assert.same({ "commit 1a2b3c4d5 vs 1a2b3c4d0" },
      texts(prov(), prov { git = { commit = other, branch = "main" } }))
    assert.same({ "commit 1a2b3c4 vs 1a2b3c4 (dirty)" },
      texts(prov(), prov { git = { commit = SHA1, dirty = true, branch = "main" } }))
  end)

  it("say none where one run has a part and the other not (no git, no device)", function()
    local cpu_only = prov { git = false, driver = false, toolkit = { nvrtc = "13.0" } }
    assert.same({ "commit 1a2b3c4 vs none", "branch main vs none", "CUDA driver 13.0 vs none",
      "NVIDIA driver 580.65.06 vs none", "CUDA runtime 13.0 vs none" }, texts(prov(), cpu_only))
    assert.same({ "provenance recorded vs not recorded" }, texts(prov(), nil))
  end)

  it("are the lines of compare's header, in the terminal and in Markdown", function()
    local cmp = { provenance_differences = diff.differences(doc(prov()),
      doc(prov { host = "b|c" })) }
    assert.same({ "  Provenance that differs (BASE vs NEW):", "    host node1 vs b|c" },
      diff.table_lines(cmp))
    assert.same({ "- Provenance that differs (BASE vs NEW): host node1 vs b\\|c" },
      diff.markdown_lines(cmp, require("wlrun.report.markdown").cell))
    assert.same({}, diff.table_lines { provenance_differences = {} })
    assert.same({}, diff.table_lines {}) -- a comparison made by an older wlrun
  end)
end)

-- the provenance's git status, started before the CUDA context and collected at the document
describe("wlrun.results.git.head_started", function()
  local git = require "wlrun.results.git"
  local process = require "wlrun.process"
  local h = require "helper"

  it("gives what git.head gives, once, however often it is called", function()
    if not process.find_program("git") then return pending("git is not installed") end
    local repo = h.tmpdir()
    assert(
      os.execute(
      ("cd '%s' && git init -q . && git config user.email t@example.com && git config user.name t"
      .. " && git checkout -q -b b && echo x > f && git add f && git commit -q -m one"):format(
        repo)))
    local started = git.head_started(repo)
    local got = started()
    assert.same(git.head(repo), got)
    assert.equal("b", got.branch)
    assert.is_false(got.dirty)
    assert.equal(got, started()) -- the same table: git ran once
    local dirty = io.open(repo .. "/f", "w")
    dirty:write("y\n")
    dirty:close()
    assert.is_true(git.head_started(repo)().dirty)
  end)

  it("gives nil outside a repository, and may be closed without being called", function()
    local dir = h.tmpdir()
    assert.is_nil(git.head_started(dir)())
    do local _ <close> = git.head_started(dir) end -- waits for git and removes its file
  end)
end)
